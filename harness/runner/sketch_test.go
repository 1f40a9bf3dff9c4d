package runner

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// stepSketch is the card's sketch as the step ships it (make sketch saves
// it over the controller): the code a learner runs first.
func stepSketch(t *testing.T, st step.Step) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(st.Sketch)))
	if err != nil {
		t.Fatalf("the step's sketch: %v", err)
	}
	return string(b)
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
	ctrlFile := filepath.Join(dir, filepath.FromSlash(st.SketchOver))
	sketch := stepSketch(t, st)
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
	rep, out = run("3-checks", []string{"missing-service", "self-heal", "quiescent", "deleted-while-down"})
	for _, c := range rep.Checks {
		// The chapter says why they pass: the sketch never polls, and its
		// rewrites of an unchanged status leave the object as it was.
		if (c.ID == "missing-service" || c.ID == "quiescent") && c.Status != report.Pass {
			t.Errorf("run 3: %s is %s, want a pass, as the chapter says\n%s", c.ID, c.Status, out)
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
	for _, says := range []string{"make sketch", "`undefined: meta`", "`start controller`", "resources=services", "the checks run anyway"} {
		if !strings.Contains(sec, says) {
			t.Errorf("the chapter's first task does not say %s", says)
		}
	}
}

// TestTheSketchIsTheCardsFitted: the sketch make sketch saves is the
// card's code (docs/card.md) with only the fittings the chapter lists:
// every line of the card's controller is in it but the three a fitting
// replaced (the API's import path, the Programmer's type, SetupWithManager's
// signature), and it adds no more lines than its fittings need.
func TestTheSketchIsTheCardsFitted(t *testing.T) {
	st := steps.Default()
	card, err := os.ReadFile(filepath.Join(root, "docs", "card.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The card is one text block; its controller runs from "package
	// controller" to the end of SetupWithManager.
	m := regexp.MustCompile(`(?s)\n(package controller\n.*?Complete\(r\)\n})`).FindSubmatch(card)
	if m == nil {
		t.Fatal("docs/card.md holds no controller from package controller to SetupWithManager's Complete(r)")
	}
	lines := func(text string) map[string]bool {
		set := map[string]bool{}
		for _, l := range strings.Split(text, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				set[l] = true
			}
		}
		return set
	}
	cardLines, sketchLines := lines(string(m[1])), lines(stepSketch(t, st))
	var replaced, added []string
	for l := range cardLines {
		if !sketchLines[l] {
			replaced = append(replaced, l)
		}
	}
	for l := range sketchLines {
		if !cardLines[l] {
			added = append(added, l)
		}
	}
	slices.Sort(replaced)
	slices.Sort(added)
	// Added: the three replacements, the time and dataplane imports, the two
	// fitted fields, the two RBAC markers, Named.
	if len(replaced) > 3 || len(added) > 10 {
		t.Errorf("%s is not the card's code with its fittings: it leaves out %d of the card's lines, adds %d\nleft out: %q\nadded: %q", st.Sketch, len(replaced), len(added), replaced, added)
	}
}
