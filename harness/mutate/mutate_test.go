package mutate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/skeleton"
	"github.com/10xdev/gw10/harness/steps"
)

var solution = filepath.Join("..", "..", steps.Default().SolutionDir)

// TestMutantsChangeOnlyTheRegions: every mutant differs from the solution,
// and only inside its exercise regions (the learner's code): the file
// stubbed as the skeleton is, is the same with and without the mutation.
func TestMutantsChangeOnlyTheRegions(t *testing.T) {
	ms, err := Generate(solution)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 10 {
		t.Fatalf("%d mutants of the solution; the operators found too little to mutate", len(ms))
	}
	ops, ids := map[string]bool{}, map[string]bool{}
	for _, m := range ms {
		ops[m.Op] = true
		if ids[m.ID] {
			t.Errorf("two mutants are %s", m.ID)
		}
		ids[m.ID] = true
		orig := readFile(t, filepath.Join(solution, filepath.FromSlash(m.File)))
		if string(m.Src) == orig {
			t.Errorf("%s changes nothing", m.ID)
		}
		a, err := skeleton.Stub(m.File, orig, steps.Default().Name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := skeleton.Stub(m.File, string(m.Src), steps.Default().Name)
		if err != nil {
			t.Fatalf("%s: the mutated file's regions: %v", m.ID, err)
		}
		if a != b {
			t.Errorf("%s changes the file outside its regions", m.ID)
		}
	}
	for _, op := range []string{OpDeleteCall, OpNegateIf, OpDropElse, OpFlipStatus, OpDropError, OpDeleteReturn} {
		if !ops[op] {
			t.Errorf("no mutant of operator %s", op)
		}
	}
}

// TestASampleIsTheSameForTheSameSeed: the sample make test and make mutants
// draw is reproducible, and differs with the seed.
func TestASampleIsTheSameForTheSameSeed(t *testing.T) {
	ms, err := Generate(solution)
	if err != nil {
		t.Fatal(err)
	}
	id := func(ms []Mutant) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	a, b, c := id(Sample(ms, 5, 1)), id(Sample(ms, 5, 1)), id(Sample(ms, 5, 2))
	if !slices.Equal(a, b) || len(a) != 5 {
		t.Errorf("seed 1 drew %v, then %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 drew the same sample %v", a)
	}
	if got := Sample(ms, 0, 1); len(got) != len(ms) {
		t.Errorf("a sample of 0 is %d mutants, want all %d", len(got), len(ms))
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOutcomes: a mutant that does not build is not counted; one that passes
// every check and stage survived; any failure kills it.
func TestOutcomes(t *testing.T) {
	pass := report.Stage{Name: "build", Status: report.Pass}
	for _, c := range []struct {
		rep  report.Report
		want Outcome
	}{
		{report.Report{Stages: []report.Stage{{Name: "build", Status: report.Fail}}}, Stillborn},
		{report.Report{Stages: []report.Stage{pass}, Checks: []report.CheckResult{{ID: "a", Status: report.Pass}}}, Survived},
		{report.Report{Stages: []report.Stage{pass, {Name: "unit tests", Status: report.Fail}}, Checks: []report.CheckResult{{ID: "a", Status: report.Pass}}}, Killed},
		{report.Report{Stages: []report.Stage{pass}, Checks: []report.CheckResult{{ID: "a", Status: report.Fail}}}, Killed},
	} {
		c.rep.Finish()
		if got := outcomeOf(&c.rep); got != c.want {
			t.Errorf("%+v: %s, want %s", c.rep.Stages, got, c.want)
		}
	}
}

// TestEveryListedEquivalentIsGenerated: the list of equivalent mutants
// names mutants that exist, each with a reason, so that a change of the
// solution that moves or removes one fails here, not in a score that
// silently counts it again.
func TestEveryListedEquivalentIsGenerated(t *testing.T) {
	st := steps.Default()
	eq, err := LoadEquivalents(EquivalentsFile(filepath.Join("..", ".."), st))
	if err != nil {
		t.Fatal(err)
	}
	if len(eq) == 0 {
		t.Fatalf("%s lists no equivalent mutant", EquivalentsFile("", st))
	}
	ms, err := Generate(solution)
	if err != nil {
		t.Fatal(err)
	}
	for key, why := range eq {
		if !slices.ContainsFunc(ms, func(m Mutant) bool { return m.Key == key }) {
			t.Errorf("%s is listed as equivalent (%s) but no generated mutant has that key (gw10 mutants --list)", key, why)
		}
	}
}

// TestLoadEquivalentsRejectsAnUnexplainedEntry: an equivalence must say why.
func TestLoadEquivalentsRejectsAnUnexplainedEntry(t *testing.T) {
	p := filepath.Join(t.TempDir(), "eq.txt")
	for _, tc := range []struct{ body, want string }{
		{"a.go:f:negate-if\n", "no reason"},
		{"a.go:f:negate-if  why\na.go:f:negate-if  again\n", "listed twice"},
	} {
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadEquivalents(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want one saying %q", tc.body, err, tc.want)
		}
	}
	if eq, err := LoadEquivalents(filepath.Join(t.TempDir(), "none")); err != nil || len(eq) != 0 {
		t.Errorf("a missing list: %v, %v; want an empty list", eq, err)
	}
}
