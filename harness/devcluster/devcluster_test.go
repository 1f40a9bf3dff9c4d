package devcluster

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// gw10Binary builds the CLI: Up starts `gw10 cluster-serve` in the background.
func gw10Binary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gw10")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/10xdev/gw10/harness/cmd/gw10").CombinedOutput()
	if err != nil {
		t.Fatalf("building gw10: %v\n%s", err, out)
	}
	return bin
}

func TestUpReuseStaleAndDown(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	ctx := context.Background()
	self := gw10Binary(t)
	dir := filepath.Join(t.TempDir(), "cluster")
	t.Cleanup(func() { _ = Down(ctx, dir, &bytes.Buffer{}) })

	var out bytes.Buffer
	if err := Up(ctx, dir, self, steps.Default(), &out); err != nil {
		t.Fatalf("Up: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "export KUBECONFIG="+KubeconfigPath(dir)) {
		t.Fatalf("Up did not print the export line:\n%s", out.String())
	}
	first := Status(ctx, dir)
	if first.State != Running {
		t.Fatalf("after Up: %+v", first)
	}

	// kubectl works with the printed kubeconfig.
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		cmd := exec.Command(kubectl, "get", "ns", "default")
		cmd.Env = append(cmd.Environ(), "KUBECONFIG="+KubeconfigPath(dir))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl get ns: %v\n%s", err, b)
		}
	} else {
		t.Log("kubectl not installed; checked the API server through client-go only")
	}

	// A second Up reuses it.
	out.Reset()
	if err := Up(ctx, dir, self, steps.Default(), &out); err != nil {
		t.Fatalf("second Up: %v", err)
	}
	if !strings.Contains(out.String(), "already running") || Status(ctx, dir).PID != first.PID {
		t.Fatalf("second Up did not reuse pid %d:\n%s", first.PID, out.String())
	}

	// A killed server leaves a stale cluster that the next Up cleans up.
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return !cluster.Alive(first.PID) })
	if st := Status(ctx, dir); st.State != Stale {
		t.Fatalf("after killing the server: %+v, want Stale", st)
	}
	out.Reset()
	if err := Up(ctx, dir, self, steps.Default(), &out); err != nil {
		t.Fatalf("Up over a stale cluster: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "stale") {
		t.Fatalf("Up did not report the stale cluster:\n%s", out.String())
	}
	second := Status(ctx, dir)
	if second.State != Running || second.PID == first.PID {
		t.Fatalf("after Up over stale: %+v", second)
	}

	out.Reset()
	if err := Down(ctx, dir, &out); err != nil {
		t.Fatalf("Down: %v", err)
	}
	waitFor(t, func() bool { pids, _ := cluster.ProcessesUnder(dir); return len(pids) == 0 })
	if st := Status(ctx, dir); st.State != Absent {
		t.Fatalf("after Down: %+v", st)
	}
	out.Reset()
	if err := Down(ctx, dir, &out); err != nil || !strings.Contains(out.String(), "no dev cluster") {
		t.Fatalf("Down with nothing running: %v %q", err, out.String())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestNextStepsFollowTheChapter: cluster-up's next steps are each step's
// hand-run tasks, printed, and its chapter's commands in the chapter's order
// (step 01: the Service last, after the watch), and none applies the whole
// samples directory, which would create the Service before the
// missing-Service demo.
func TestNextStepsFollowTheChapter(t *testing.T) {
	for _, st := range steps.All() {
		t.Run(st.Name, func(t *testing.T) { nextStepsFollowTheChapter(t, st) })
	}
}

func nextStepsFollowTheChapter(t *testing.T, st step.Step) {
	var out bytes.Buffer
	printNextSteps(&out, t.TempDir(), st)
	printed := out.String()
	chapter, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(st.Chapter)))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(printed, "config/samples/ ") || strings.Contains(printed, "config/samples/\n") {
		t.Errorf("the next steps apply the whole samples directory:\n%s", printed)
	}
	// Each command is found after the one before it, in both texts.
	rest, chapterRest := printed, string(chapter)
	for _, cmd := range st.HandRun {
		p := strings.Index(rest, cmd.Command)
		c := strings.Index(chapterRest, cmd.Command)
		if p < 0 {
			t.Errorf("%q is not printed after the steps before it:\n%s", cmd.Command, printed)
		} else {
			rest = rest[p+len(cmd.Command):]
		}
		if c < 0 {
			t.Errorf("%q is not in %s after the steps before it", cmd.Command, st.Chapter)
		} else {
			chapterRest = chapterRest[c+len(cmd.Command):]
		}
	}
}
