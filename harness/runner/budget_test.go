package runner

import (
	"reflect"
	"testing"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
)

// TestTheBudgetDecidesTheSeeds: make check (the learner's budget, the
// default) draws one fresh seed; --budget full runs the step's fixed seeds
// and a fresh one; a grade (FixedSeeds) runs the fixed seeds at full length
// whatever the budget says; a replay runs exactly its seeds.
func TestTheBudgetDecidesTheSeeds(t *testing.T) {
	st := step.Step{Seeds: []int64{139357}}
	fresh := func() int64 { return 42 }
	for _, c := range []struct {
		name   string
		opts   Options
		budget checks.Budget
		seeds  []int64
	}{
		{"make check", Options{Step: st}, checks.BudgetLearner, []int64{42}},
		{"make check --budget full", Options{Step: st, Budget: checks.BudgetFull}, checks.BudgetFull, []int64{139357, 42}},
		{"grade", Options{Step: st, FixedSeeds: true, Budget: checks.BudgetLearner}, checks.BudgetFull, []int64{139357}},
		{"replay", Options{Step: st, Seeds: []int64{7, 8}}, checks.BudgetLearner, []int64{7, 8}},
		{"replay full", Options{Step: st, Seeds: []int64{7}, Budget: checks.BudgetFull}, checks.BudgetFull, []int64{7}},
	} {
		if got := c.opts.budget(); got != c.budget {
			t.Errorf("%s: budget %q, want %q", c.name, got, c.budget)
		}
		if got := c.opts.sequenceSeeds(fresh); !reflect.DeepEqual(got, c.seeds) {
			t.Errorf("%s: seeds %v, want %v", c.name, got, c.seeds)
		}
	}
	if _, err := checks.ParseBudget("short"); err == nil {
		t.Errorf("ParseBudget accepted %q", "short")
	}
}

// TestAGradeRunsTheSameSeedsEveryTime: make grade twice on the same
// submission must give the same check results, so nothing of a grade's
// sequences may depend on the run: whatever fresh seed a run would draw, a
// grade's options (what gw10 grade sets: no replay, FixedSeeds) run exactly
// the step's fixed seeds, on the full budget. That the same seeds make the
// same plan, step by step, is step01's TestTheGradesPlanIsTheSameEveryTime.
func TestAGradeRunsTheSameSeedsEveryTime(t *testing.T) {
	for _, st := range steps.All() {
		if len(st.Seeds) == 0 {
			continue
		}
		draws := int64(0)
		fresh := func() int64 { draws++; return 1000 + draws } // a different seed every run
		opts := Options{Step: st, FixedSeeds: true, Budget: checks.BudgetLearner}
		first, second := opts.sequenceSeeds(fresh), opts.sequenceSeeds(fresh)
		if !reflect.DeepEqual(first, st.Seeds) || !reflect.DeepEqual(second, st.Seeds) {
			t.Errorf("%s: two grades ran seeds %v and %v, not the step's fixed seeds %v", st.Name, first, second, st.Seeds)
		}
		if b := opts.budget(); b != checks.BudgetFull {
			t.Errorf("%s: a grade runs the %q budget, not the full one", st.Name, b)
		}
	}
}
