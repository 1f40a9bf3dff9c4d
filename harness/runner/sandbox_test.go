package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/sandbox"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// unitRun is a run that has built its controller (a stand-in file) and is
// at the unit-test stage, on a copy of the solution plus extra files.
func unitRun(t *testing.T, sb *sandbox.Sandbox, extra map[string]string) (*run, string, *lockedBuffer) {
	t.Helper()
	st := steps.Default()
	dir := copyModule(t, filepath.Join(root, st.SolutionDir))
	for name, body := range extra {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out lockedBuffer
	r := &run{opts: Options{Root: root, Step: st, StepDir: dir, Label: st.SolutionDir, Out: &out, GoEnv: workspaceFor(t, dir),
		Sandbox: sb, UnitWall: time.Minute}.withDefaults(), rep: &report.Report{}, dir: t.TempDir()}
	binary := filepath.Join(r.dir, "bin", "manager")
	if err := os.MkdirAll(filepath.Dir(binary), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(binary, []byte("the controller the harness built"), 0o755); err != nil {
		t.Fatal(err)
	}
	return r, binary, &out
}

func openSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	testenv.Needs(t, testenv.Sandbox)
	sb, err := sandbox.Open(context.Background(), sandbox.Options{})
	if errors.Is(err, sandbox.ErrUnavailable) {
		testenv.Missing(t, testenv.Sandbox, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return sb
}

func stageOf(t *testing.T, r *run, name string) report.Stage {
	t.Helper()
	for _, st := range r.rep.Stages {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no stage %s in %+v", name, r.rep.Stages)
	return report.Stage{}
}

// TestTheUnitTestsRunInTheSandbox: the grader compiles the test binary and
// runs it as the sandbox's user in a copy of the module; the solution's
// unit tests (an envtest suite among them) pass there, and a daemon a test
// leaves behind is killed and named.
func TestTheUnitTestsRunInTheSandbox(t *testing.T) {
	sb := openSandbox(t)
	r, binary, out := unitRun(t, sb, map[string]string{"internal/controller/daemon_test.go": `package controller

import (
	"os/exec"
	"syscall"
)

func init() {
	cmd := exec.Command("/bin/sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	_ = cmd.Start()
}
`})
	if !r.runStages(context.Background(), r.unitStages(&binary)...) {
		t.Fatalf("the run stopped:\n%s", out.String())
	}
	st := stageOf(t, r, "unit tests")
	if st.Status != report.Fail || !strings.Contains(st.Detail, "left processes behind, which the sandbox killed") ||
		!strings.Contains(st.Detail, "/bin/sleep 1000") {
		t.Fatalf("the stage: %+v\n%s", st, out.String())
	}
	if !strings.Contains(out.String(), "note: sandbox: unit tests: killed 1 process left behind: /bin/sleep 1000") {
		t.Errorf("the stage's note:\n%s", out.String())
	}
	if ps, _ := sandbox.ProcsOf(sb.UID()); len(ps) > 0 && ps[0].State != "Z" {
		t.Errorf("still running: %v", ps)
	}
}

// TestUnitTestsThatChangeWhatTheRunReadsStopIt: without a sandbox (make
// check, or a grade where none can be made), a test that rewrites the role
// the identity stage reads after it, or the built controller, stops the run
// and is named.
func TestUnitTestsThatChangeWhatTheRunReadsStopIt(t *testing.T) {
	r, binary, out := unitRun(t, nil, map[string]string{"internal/controller/tamper_test.go": `package controller

import "os"

func init() {
	f, err := os.OpenFile("../../config/rbac/role.yaml", os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		f.WriteString("- apiGroups: ['*']\n  resources: ['*']\n  verbs: ['*']\n")
		f.Close()
	}
	if m := os.Getenv("GW10_TEST_MANAGER"); m != "" {
		os.WriteFile(m, []byte("the solution's binary"), 0o755)
	}
}
`})
	t.Setenv("GW10_TEST_MANAGER", binary)
	if r.runStages(context.Background(), r.unitStages(&binary)...) {
		t.Fatalf("the run goes on:\n%s", out.String())
	}
	st := stageOf(t, r, "unit tests")
	if st.Status != report.Fail || !strings.Contains(st.Detail, "the unit tests changed what the run reads after them, so it stops here") ||
		!strings.Contains(st.Detail, "config/rbac/role.yaml") || !strings.Contains(st.Detail, "the controller the harness built") {
		t.Fatalf("the stage: %+v", st)
	}
}
