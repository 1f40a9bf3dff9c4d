package runner

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/devcluster"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/sandbox"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/steptest"
	"github.com/10xdev/gw10/harness/testenv"
)

// root is the workbook root, seen from harness/runner.
var root, _ = filepath.Abs(filepath.Join("..", ".."))

// The runs of this package share a small pool of envtest control planes to
// keep make test within its budget. A run holds its plane alone from start
// to finish: it installs its own CRD (cluster-scoped, and some mutants change
// it) and its controller watches every namespace, so two runs cannot share
// one. The long tests (the mutants, the variants, the solution's and the
// skeleton's runs) are parallel, one per plane, all in one pool: a mutant's
// run is mostly compiling, a variant's mostly waiting for its controller,
// and side by side they keep the cores busy. Every run still gets its own
// namespaces, controller and proxy.
//
// The pool has as many planes as go test runs parallel tests at once
// (-parallel, default GOMAXPROCS; make test sets it): TestMain makes it once
// the flags are parsed.
var planes *planePool

// planeCount is go test's -parallel (testing refuses one under 1).
func planeCount() int {
	n, err := strconv.Atoi(flag.Lookup("test.parallel").Value.String())
	if err != nil {
		return 1
	}
	return n
}

// planePool hands out control planes, starting each on first use.
type planePool struct {
	free chan *plane // a slot per plane; a nil backend is not started yet
	mu   sync.Mutex
	all  []*plane
}

type plane struct {
	backend cluster.Backend
	stop    func()
}

func newPlanePool(n int) *planePool {
	p := &planePool{free: make(chan *plane, n)}
	for i := 0; i < n; i++ {
		p.free <- &plane{}
	}
	return p
}

// acquire takes a plane for the rest of t, starting it if it is new; t's
// cleanup gives it back.
func (p *planePool) acquire(t *testing.T) cluster.Backend {
	t.Helper()
	testenv.Needs(t, testenv.Cluster)
	pl := <-p.free
	if pl.backend == nil {
		if err := pl.start(); err != nil {
			p.free <- pl
			t.Fatalf("starting a control plane for the tests: %v", err)
		}
		p.mu.Lock()
		p.all = append(p.all, pl)
		p.mu.Unlock()
	}
	t.Cleanup(func() { p.free <- pl })
	return pl.backend
}

// planeDirPrefix names the control planes' directories in the temporary
// directory; each holds an "owner" file with the test process's pid.
const planeDirPrefix = "gw10-runner-test-"

func (pl *plane) start() error {
	dir, err := os.MkdirTemp("", planeDirPrefix)
	if err != nil {
		return fmt.Errorf("a directory for the control plane: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("marking the control plane's owner: %w", err)
	}
	b, err := cluster.NewEnvtestBackend(context.Background(), dir, io.Discard)
	if err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("envtest: %w", err)
	}
	pl.backend = b
	pl.stop = func() { _ = b.Stop(context.Background()); _ = os.RemoveAll(dir) }
	return nil
}

func (p *planePool) stopAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pl := range p.all {
		pl.stop()
	}
}

// stopOrphanPlanes stops the control planes of earlier test processes that
// ended without stopping them (go test -timeout kills a test binary before
// TestMain's stopAll): each would hold two cores' worth of kube-apiserver
// and etcd for the rest of the machine's life.
func stopOrphanPlanes() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), planeDirPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "owner"))
		if err != nil {
			continue // not marked: not ours to judge
		}
		if pid, err := strconv.Atoi(string(b)); err != nil || cluster.Alive(pid) {
			continue
		}
		if n, err := cluster.KillProcessesUnder(dir); err == nil {
			if n > 0 {
				fmt.Fprintf(os.Stderr, "stopped %d processes of a control plane an earlier test run left running (%s)\n", n, dir)
			}
			_ = os.RemoveAll(dir)
		}
	}
}

func TestMain(m *testing.M) {
	sandbox.MaybeHelper() // the sandbox's tests re-execute this binary as its helper
	maybeFakeController()
	stopOrphanPlanes()
	ctrllog.SetLogger(logr.Discard())
	flag.Parse()
	planes = newPlanePool(planeCount())
	code := m.Run()
	writeKillTable()
	planes.stopAll()
	os.Exit(code)
}

// copyModule copies a step module out of the repository (see steptest.Copy).
func copyModule(t *testing.T, src string) string {
	t.Helper()
	return steptest.Copy(t, src)
}

// workspaceFor is the environment that builds a copied module with the
// workbook's dependency versions (see steptest.Workspace).
func workspaceFor(t *testing.T, dir string) []string {
	t.Helper()
	return steptest.Workspace(t, root, dir)
}

func runStep(t *testing.T, st step.Step, stepDir, name string, ids []string, timeouts checks.Timeouts, with ...func(*Options)) (*report.Report, string) {
	t.Helper()
	selected, err := checks.Select(st.Checks, ids)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	opts := Options{
		Root: root, Step: st, StepDir: stepDir, Label: name, Checks: selected, FixedSeeds: true, // the grade's sequences
		Backend: planes.acquire(t), Out: &out, GoEnv: workspaceFor(t, stepDir), Timeouts: timeouts,
	}
	for _, f := range with {
		f(&opts)
	}
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	rep.Terminal(&out)
	return rep, out.String()
}

// TestEverySolutionPassesEveryCheck: the solution's code, in a module named
// as the learner's (as a learner who writes it into step01/ has it), passes
// every check on envtest, and the closing line says the step is done. The
// solution's own module runs every check in
// TestExistingDevClusterPassesAndIsLeftAsFound, and patched in each variant.
func TestEverySolutionPassesEveryCheck(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	t.Parallel() // beside the package's other long runs (planes)
	for _, st := range steps.All() {
		t.Run(st.Name, func(t *testing.T) {
			dir := copyModule(t, filepath.Join(root, st.SolutionDir))
			err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				return os.WriteFile(path, bytes.ReplaceAll(data, []byte(st.SolutionModule), []byte(st.Module)), 0o644)
			})
			if err != nil {
				t.Fatal(err)
			}
			rep, out := runStep(t, st, dir, st.Dir, nil, passingTimeouts())
			if !rep.Summary.OK || rep.Summary.Passed != len(st.Checks) {
				t.Fatalf("the solution's code in the learner's module does not pass every check:\n%s", out)
			}
			want := fmt.Sprintf("All %d checks pass (%d/%d points). %s is done", len(st.Checks), rep.Summary.TotalPoints, rep.Summary.TotalPoints, st.Dir)
			if !strings.HasPrefix(lastLine(out), want) {
				t.Errorf("the closing line is %q, want it to start with %q", lastLine(out), want)
			}
		})
	}
}

// TestInterruptLeavesNothingBehind sends Ctrl-C (SIGINT) to `gw10 check` in
// the middle of its checks and looks for leftovers.
func TestInterruptLeavesNothingBehind(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	t.Parallel() // beside the package's other long runs (planes)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "gw10")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/10xdev/gw10/harness/cmd/gw10").CombinedOutput(); err != nil {
		t.Fatalf("building gw10: %v\n%s", err, out)
	}
	runTmp := filepath.Join(tmp, "tmp")
	if err := os.MkdirAll(runTmp, 0o755); err != nil {
		t.Fatal(err)
	}
	st := steps.Default()
	step := copyModule(t, filepath.Join(root, st.SolutionDir))
	// No timeline: it would be written relative to the test's directory.
	cmd := exec.Command(bin, "check", "--root", root, "--step", step, "--step-name", st.Name, "--timeline", "")
	cmd.Env = append(os.Environ(), append(workspaceFor(t, step), "TMPDIR="+runTmp)...)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "PASS crd-schema") {
			break // the checks are running: the controller, apiserver and etcd are up
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(&seen, stdout) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
			t.Errorf("gw10 check after Ctrl-C: %v, want exit status 130", err)
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("gw10 check did not stop within 2 minutes of Ctrl-C:\n%s", seen.String())
	}
	pids, err := cluster.ProcessesUnder(runTmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(pids) > 0 {
		for _, p := range pids {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
			t.Errorf("left behind: pid %d %s", p, bytes.ReplaceAll(cmdline, []byte{0}, []byte(" ")))
		}
		_, _ = cluster.KillProcessesUnder(runTmp)
	}
	left, _ := filepath.Glob(filepath.Join(runTmp, runDirPrefix+"*"))
	if len(left) > 0 {
		t.Errorf("run directories left behind: %v", left)
	}
	if !strings.Contains(seen.String(), "interrupted") || !strings.Contains(seen.String(), "No verdict") ||
		strings.Contains(seen.String(), "checks pass (") || strings.Contains(seen.String(), " is done") {
		t.Errorf("the output does not say the run was interrupted, or claims a verdict:\n%s", seen.String())
	} else {
		t.Logf("output:\n%s", seen.String())
	}
}

// TestEverySkeletonRunsAndFailsEveryCheckWithAHint: the pristine skeleton
// builds, its controller starts and keeps running, its unit tests fail, and
// every check fails with a hint.
func TestEverySkeletonRunsAndFailsEveryCheckWithAHint(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	t.Parallel() // beside the package's other long runs (planes)
	for _, st := range steps.All() {
		t.Run(st.Name, func(t *testing.T) {
			rep, out := runStep(t, st, copyModule(t, filepath.Join(root, st.Dir)), st.Dir, nil, checks.DefaultTimeouts())
			for _, stage := range rep.Stages {
				wantFail := stage.Name == "unit tests"
				if (stage.Status == report.Fail) != wantFail {
					t.Errorf("stage %s is %s on the pristine skeleton", stage.Name, stage.Status)
				}
			}
			for _, c := range rep.Checks {
				if c.Status != report.Fail {
					t.Errorf("check %s is %s on the pristine skeleton, want fail", c.ID, c.Status)
				}
				if c.Hint == "" || c.Doc == "" {
					t.Errorf("check %s failed without a hint or docs anchor", c.ID)
				}
				for _, cause := range c.Causes {
					if strings.Contains(cause, "exited") || strings.Contains(cause, "panicked") {
						t.Errorf("check %s: the skeleton's controller crashed: %s", c.ID, cause)
					}
					// Its reconciler is registered: crd-schema (dry-run creates
					// only) must not send the learner looking for that.
					if strings.Contains(cause, "never reconciled") {
						t.Errorf("check %s: %s", c.ID, cause)
					}
				}
			}
			// The terminal is focused: the first failing check in full, every
			// other failure in one line with its hint, the log once.
			if n := strings.Count(out, "\nFAIL "); n != 1 || !strings.Contains(out, "\nFAIL "+rep.Checks[0].ID+": ") {
				t.Errorf("want exactly one full failure block, %s's; got %d", rep.Checks[0].ID, n)
			}
			for _, c := range rep.Checks[1:] {
				if !strings.Contains(out, "\n  FAIL "+c.ID+": "+c.Hint+"\n") {
					t.Errorf("check %s has no one-line failure with its hint", c.ID)
				}
			}
			if !strings.Contains(out, "\n  FAIL stage unit tests: ") {
				t.Error("the failed unit tests stage has no one-line failure")
			}
			if n := strings.Count(out, "--- controller started"); n != 1 {
				t.Errorf("the controller's start is shown %d times, want once", n)
			}
			want := fmt.Sprintf("0/%d checks pass, 0/%d points, and the unit tests stage failed. Fix %s first", len(st.Checks), rep.Summary.TotalPoints, rep.Checks[0].ID)
			if !strings.HasPrefix(lastLine(out), want) {
				t.Errorf("the closing line is %q, want it to start with %q", lastLine(out), want)
			}
			if t.Failed() {
				t.Log(out)
			}
		})
	}
}

func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestExistingDevClusterPassesAndIsLeftAsFound runs every check on the dev
// cluster through the existing-cluster backend (context gw10-dev), then
// compares what the cluster holds with what it held before.
func TestExistingDevClusterPassesAndIsLeftAsFound(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	t.Parallel()
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "gw10")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/10xdev/gw10/harness/cmd/gw10").CombinedOutput(); err != nil {
		t.Fatalf("building gw10: %v\n%s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "cluster")
	if err := devcluster.Up(ctx, dir, bin, steps.Default(), io.Discard); err != nil {
		t.Fatalf("starting the dev cluster: %v", err)
	}
	t.Cleanup(func() { _ = devcluster.Down(ctx, dir, io.Discard) })
	backend, err := cluster.NewExistingBackendAt(devcluster.KubeconfigPath(dir), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	// As `make install` in the step leaves it: the same CRD, already there.
	st := steps.Default()
	step := copyModule(t, filepath.Join(root, st.SolutionDir))
	crds, err := CRDsOf(step)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scheme()
	admin, err := client.New(backend.Admin(), client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := InstallCRDs(ctx, admin, crds, false); err != nil {
		t.Fatalf("pre-installing the CRD: %v", err)
	}
	before := clusterInventory(t, backend)
	var out bytes.Buffer
	rep, err := Run(ctx, Options{
		Root: root, Step: st, StepDir: step, Label: st.SolutionDir, FixedSeeds: true,
		GoEnv: workspaceFor(t, step), Out: &out, Timeouts: passingTimeouts(),
		NewBackend: func(context.Context, string, io.Writer) (cluster.Backend, error) { return backend, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	rep.Terminal(&out)
	if !rep.Summary.OK || rep.Cluster != "existing" {
		t.Fatalf("the solution on the dev cluster (existing backend):\n%s", out.String())
	}
	after := clusterInventory(t, backend)
	if before != after {
		t.Fatalf("the cluster was not left as found:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// A different CRD of the same name is never replaced.
	changed := crds[0].DeepCopy()
	changed.Spec.Versions[0].AdditionalPrinterColumns = nil
	if _, err := InstallCRDs(ctx, admin, []*apiextensionsv1.CustomResourceDefinition{changed}, true); err == nil ||
		!strings.Contains(err.Error(), "different CRD") {
		t.Fatalf("installing a different CRD over the existing one: %v; want a refusal", err)
	}
}

// clusterInventory lists what the harness could leave behind.
func clusterInventory(t *testing.T, b cluster.Backend) string {
	t.Helper()
	s, _ := scheme()
	c, err := client.New(b.Admin(), client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var lines []string
	var nss corev1.NamespaceList
	var crds apiextensionsv1.CustomResourceDefinitionList
	var roles rbacv1.ClusterRoleList
	var bindings rbacv1.ClusterRoleBindingList
	var sas corev1.ServiceAccountList
	for _, l := range []client.ObjectList{&nss, &crds, &roles, &bindings, &sas} {
		if err := c.List(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range nss.Items {
		lines = append(lines, "namespace "+o.Name)
	}
	for _, o := range crds.Items {
		lines = append(lines, "crd "+o.Name)
	}
	for _, o := range roles.Items {
		lines = append(lines, "clusterrole "+o.Name)
	}
	for _, o := range bindings.Items {
		lines = append(lines, "clusterrolebinding "+o.Name)
	}
	for _, o := range sas.Items {
		lines = append(lines, "serviceaccount "+o.Namespace+"/"+o.Name)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
