package skeleton

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/gotool"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

var root, _ = filepath.Abs(filepath.Join("..", ".."))

// st is the step whose committed skeleton and solution the tests read.
var st = steps.Default()

var (
	solutionModule = st.SolutionModule
	learnerModule  = st.Module
)

func TestStubReplacesRegionsWithTODOAndStub(t *testing.T) {
	src := `package x

func f() int {
	//gw10:begin compute
	//gw10:todo Compute the answer
	//gw10:todo   (check: answer).
	//gw10:stub return 0
	return 42
	//gw10:end
}
`
	got, err := Stub("x.go", src, "step07")
	if err != nil {
		t.Fatal(err)
	}
	want := `package x

func f() int {
	// TODO(step07): Compute the answer
	//   (check: answer).
	return 0
}
`
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestStubRejectsMalformedRegions(t *testing.T) {
	for name, src := range map[string]string{
		"nested":       "//gw10:begin a\n//gw10:begin b\n//gw10:end\n",
		"unterminated": "x\n//gw10:begin a\ny\n",
		"stray end":    "//gw10:end\n",
	} {
		if _, err := Stub("f.go", src, "step07"); err == nil {
			t.Errorf("%s region accepted", name)
		} else if !strings.Contains(err.Error(), "f.go:") {
			t.Errorf("%s: error %q does not say where", name, err)
		}
	}
}

func TestSkippedKeepsLearnerTestsAndLeavesOutEnvtestTests(t *testing.T) {
	for rel, want := range map[string]bool{
		"internal/controller/conditions_test.go":           false,
		"internal/controller/suite_test.go":                true,
		"internal/controller/edgeroute_controller_test.go": true,
		"internal/controller/conditions.go":                false,
		"internal/dataplane/http_test.go":                  false,
		"bin":                                              true,
		"bin/manager":                                      true,
	} {
		if got := Skipped(rel); got != want {
			t.Errorf("Skipped(%q) = %v, want %v", rel, got, want)
		}
	}
}

// TestLearnerTestsFailOnTheCommittedSkeleton: the unit tests a learner gets
// fail on the stubs, each with a message and without a panic (they pass on
// the solution, where make test runs them).
func TestLearnerTestsFailOnTheCommittedSkeleton(t *testing.T) {
	testenv.Long(t, "compiles the skeleton's controller package")
	// Stop go test before this test's own deadline, so that a slow machine
	// gets a failure that says so instead of an orphaned go test.
	ctx := context.Background()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-30*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-run", "^TestConditionsFor$", "./internal/controller")
	cmd.Dir = filepath.Join(root, st.Dir)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("go test of the skeleton's controller package did not finish before the test deadline:\n%s", out)
	}
	if err == nil {
		t.Fatalf("TestConditionsFor passes on the skeleton; it must fail until conditionsFor is written:\n%s", out)
	}
	text := string(out)
	for _, want := range []string{"--- FAIL: TestConditionsFor", "conditionsFor returned no conditions; want Accepted=", st.Chapter + "#the-status-contract"} {
		if !strings.Contains(text, want) {
			t.Errorf("the failure does not say %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"panic:", "[build failed]", "[setup failed]"} {
		if strings.Contains(text, bad) {
			t.Errorf("the failure contains %q:\n%s", bad, text)
		}
	}
}

// TestCommittedSkeletonIsUpToDate regenerates every step's learner module
// and compares it with the committed one: a solution change without `make
// skeleton` fails here.
func TestCommittedSkeletonIsUpToDate(t *testing.T) {
	ctx := context.Background()
	gen, err := gotool.Path(ctx, root, "controller-gen")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps.All() {
		t.Run(st.Name, func(t *testing.T) { skeletonIsUpToDate(ctx, t, st, gen) })
	}
}

func skeletonIsUpToDate(ctx context.Context, t *testing.T, st step.Step, gen string) {
	fresh := filepath.Join(t.TempDir(), st.Dir)
	if err := Generate(ctx, Options{
		Src: filepath.Join(root, st.SolutionDir), Dst: fresh,
		FromModule: st.SolutionModule, ToModule: st.Module, Step: st.Name, ControllerGen: gen,
	}); err != nil {
		t.Fatalf("generating the skeleton: %v", err)
	}
	committed := filepath.Join(root, st.Dir)
	want, got := files(t, fresh), files(t, committed)
	for name, data := range want {
		if c, ok := got[name]; !ok {
			t.Errorf("%s/%s is missing", st.Dir, name)
		} else if !bytes.Equal(c, data) {
			t.Errorf("%s/%s differs from what the generator makes", st.Dir, name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s/%s is not generated from the solution", st.Dir, name)
		}
	}
	if t.Failed() {
		t.Logf("the committed skeleton is stale: run `make skeleton` and commit %s/", st.Dir)
	}
}

func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if rel == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(path)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDiffOfPristineSkeletonShowsOnlyTheExercises: what each step's
// skeleton adds is TODO comments and stubs, in the files that have exercise
// regions.
func TestDiffOfPristineSkeletonShowsOnlyTheExercises(t *testing.T) {
	for _, st := range steps.All() {
		t.Run(st.Name, func(t *testing.T) { diffShowsOnlyTheExercises(t, st) })
	}
}

func diffShowsOnlyTheExercises(t *testing.T, st step.Step) {
	sol := filepath.Join(root, st.SolutionDir)
	d, err := Diff(DiffOptions{
		Solution: sol, Learner: filepath.Join(root, st.Dir),
		SolutionLabel: st.SolutionDir, LearnerLabel: st.Dir,
		SolutionModule: st.SolutionModule, LearnerModule: st.Module,
	})
	if err != nil {
		t.Fatal(err)
	}
	stubs := map[string]bool{}
	regionFiles := map[string]bool{}
	for name, data := range files(t, sol) {
		for _, line := range strings.Split(string(data), "\n") {
			trimmed := strings.TrimSpace(line)
			if strings.HasPrefix(trimmed, "//gw10:stub") {
				stubs[strings.TrimSpace(strings.TrimPrefix(trimmed, "//gw10:stub"))] = true
			}
			if strings.HasPrefix(trimmed, "//gw10:begin") {
				regionFiles[st.Dir+"/"+name] = true
			}
		}
	}
	for _, line := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(line, "+++ "):
			if name := strings.Fields(line)[1]; !regionFiles[name] {
				t.Errorf("the diff touches %s, which has no exercise region", name)
			}
		case strings.HasPrefix(line, "+"):
			added := strings.TrimSpace(line[1:])
			if added != "" && !strings.HasPrefix(added, "//") && !stubs[added] {
				t.Errorf("the skeleton adds a line that is neither a TODO nor a stub: %q", line)
			}
		}
	}
	if d == "" {
		t.Fatal("no diff at all: the skeleton has no exercises")
	}
}
