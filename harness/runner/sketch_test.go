package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// chapterSketch is the Go block under the chapter's "First, run the card's
// sketch": the code a learner saves over the controller first.
func chapterSketch(t *testing.T, chapter string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(chapter)))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## First, run the card's sketch\n")
	if !ok {
		t.Fatalf(`%s has no "## First, run the card's sketch"`, chapter)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(sec)
	if m == nil {
		t.Fatal("the sketch section has no Go block")
	}
	return m[1]
}

// TestTheChaptersSketchPathPrintsWhatTheChapterSays follows the chapter's
// first task as a learner does: the card's sketch saved over the
// controller, make check, fix only what the run names, again. Each run must
// stop where the chapter says, and say why in its focused block and closing
// line: the build (the card's missing meta import), then the start
// controller stage (no RBAC marker for Services: the card's defect 7, its
// marker named without --all), then the checks, self-heal failing on
// Owns(). The chapter's paragraph names each stop; a change to either
// side that breaks the other fails here.
func TestTheChaptersSketchPathPrintsWhatTheChapterSays(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	t.Parallel() // beside the package's other long runs (planes)
	st := steps.Default()
	dir := copyModule(t, filepath.Join(root, st.Dir))
	ctrlFile := filepath.Join(dir, "internal", "controller", "edgeroute_controller.go")
	sketch := chapterSketch(t, st.Chapter)
	write := func(src string) {
		t.Helper()
		if err := os.WriteFile(ctrlFile, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stageOf := func(rep *report.Report, name string) report.Stage {
		for _, s := range rep.Stages {
			if s.Name == name {
				return s
			}
		}
		return report.Stage{}
	}

	// Each run holds a control plane of the pool until its subtest ends.
	run := func(name string, ids []string) (rep *report.Report, out string) {
		t.Helper()
		t.Run(name, func(t *testing.T) { rep, out = runStep(t, st, dir, st.Dir, ids, checks.DefaultTimeouts()) })
		if rep == nil {
			t.FailNow()
		}
		return rep, out
	}

	// Run 1: the card's code was never compiled.
	write(sketch)
	rep, out := run("1-build", nil)
	if b := stageOf(rep, "build"); b.Status != report.Fail || !strings.Contains(b.Detail, "undefined: meta") {
		t.Fatalf("run 1: the build stage is %s, want a failure naming undefined: meta\n%s", b.Status, out)
	}
	if !strings.Contains(lastLine(out), "the build stage failed") {
		t.Errorf("run 1: the closing line does not name the build: %q", lastLine(out))
	}

	// Run 2: only what the compiler named is fixed.
	sketch = strings.Replace(sketch, "\tmetav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"",
		"\t\"k8s.io/apimachinery/pkg/api/meta\"\n\tmetav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"", 1)
	write(sketch)
	rep, out = run("2-start-controller", nil)
	marker := `// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch`
	sc := stageOf(rep, "start controller")
	if sc.Status != report.Fail {
		t.Fatalf("run 2: the start controller stage is %q, want a failure (no RBAC marker for Services)\n%s", sc.Status, out)
	}
	if unit := stageOf(rep, "unit tests"); unit.Status != report.Fail {
		t.Errorf("run 2: the unit tests stage is %q, want a failure (the card has no conditionsFor)", unit.Status)
	}
	if !strings.Contains(out, "\nFAIL stage start controller") {
		t.Errorf("run 2: the full block is not the start controller stage's (the stage that stopped the run)\n%s", out)
	}
	if !strings.Contains(out, "resources=services") {
		t.Errorf("run 2: the output does not name the missing marker for Services\n%s", out)
	}
	if l := lastLine(out); !strings.Contains(l, "start controller") {
		t.Errorf("run 2: the closing line does not name the stage that stopped the run: %q", l)
	}
	for _, c := range rep.Checks {
		if c.Status != report.Skip {
			t.Errorf("run 2: check %s is %s, want not run", c.ID, c.Status)
		}
	}

	// Run 3: the marker added; the checks run, and the unit tests' failure
	// does not stop them.
	sketch = strings.Replace(sketch, "// +kubebuilder:rbac:groups=net.10xdev.io,resources=edgeroutes/status",
		marker+"\n// +kubebuilder:rbac:groups=net.10xdev.io,resources=edgeroutes/status", 1)
	write(sketch)
	rep, out = run("3-checks", []string{"missing-service", "self-heal", "deleted-while-down"})
	for _, c := range rep.Checks {
		// The chapter says why it passes: the sketch never polls.
		if c.ID == "missing-service" && c.Status != report.Pass {
			t.Errorf("run 3: missing-service is %s, want a pass, as the chapter says\n%s", c.Status, out)
		}
		if c.ID == "self-heal" && (c.Status != report.Fail || !strings.Contains(strings.Join(c.Causes, "\n"), "the Service event woke no EdgeRoute")) {
			t.Errorf("run 3: self-heal is %s with causes %q, want a failure saying the Service event woke no EdgeRoute\n%s", c.Status, c.Causes, out)
		}
		// The sketch has no sweep and no finalizer: once it has reconciled
		// nothing and sent the proxy nothing for PatientSettle, the check
		// ends on that proof, not at its 30 s bound.
		if c.ID == "deleted-while-down" && (c.Status != report.Fail || !strings.Contains(c.Message, "sent the proxy no request")) {
			t.Errorf("run 3: deleted-while-down is %s: %q, want a failure proving that nothing is at work\n%s", c.Status, c.Message, out)
		}
	}

	// The chapter says so.
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(st.Chapter)))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, _ := strings.Cut(string(b), "\n## First, run the card's sketch\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	for _, says := range []string{"`undefined: meta`", "`start controller`", "resources=services", "the checks run anyway"} {
		if !strings.Contains(sec, says) {
			t.Errorf("the chapter's first task does not say %s", says)
		}
	}
}

// TestTheChaptersSketchCommandSavesTheSketch: the command the chapter gives
// to save its sketch over the controller writes exactly the sketch.
func TestTheChaptersSketchCommandSavesTheSketch(t *testing.T) {
	st := steps.Default()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(st.Chapter)))
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.ToSlash(filepath.Join(st.Dir, "internal", "controller", "edgeroute_controller.go"))
	var command string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "awk ") && strings.HasSuffix(line, " > "+target) {
			command = strings.TrimSuffix(line, " > "+target)
		}
	}
	if command == "" {
		t.Fatalf("%s gives no awk command that saves its sketch over %s", st.Chapter, target)
	}
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	if want := chapterSketch(t, st.Chapter); string(out) != want {
		t.Errorf("%s writes %d bytes, not the chapter's sketch (%d bytes):\n%s", command, len(out), len(want), out)
	}
}
