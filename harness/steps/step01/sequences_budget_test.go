package step01

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/proxy"
)

// The full budget's line says which of its steps are the grade's and which
// the fresh seed's, so that "the fixed seeds' 31 steps" and "41 changes in
// 41 steps" add up for a reader.
func TestTheFullBudgetSaysWhichStepsAreTheGrades(t *testing.T) {
	fixed := fixedSeeds()
	fixedSteps := len(generateSegments(fixed, segmentLengths(len(fixed))))
	seeds := append(append([]int64{}, fixed...), 14476)
	total := len(generateSegments(seeds, segmentLengths(len(seeds))))
	got := budgetText(checks.BudgetFull, fixed, seeds)
	for _, want := range []string{seedList(fixed), "14476", "the grade's " + strconv.Itoa(fixedSteps) + " steps",
		"then " + strconv.Itoa(total-fixedSteps) + " from"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
	if learner := budgetText(checks.BudgetLearner, fixed, seeds); !strings.Contains(learner, "fixed seeds' "+strconv.Itoa(fixedSteps)+" steps") {
		t.Errorf("the learner's line %q does not give the grade's %d steps", learner, fixedSteps)
	}
	if grade := budgetText(checks.BudgetFull, fixed, fixed); grade != "full budget (the grade's sequences)" {
		t.Errorf("a grade's line is %q", grade)
	}
}

func TestListedSinceRefusalSaysWhenTheLooksStopped(t *testing.T) {
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		listings []proxy.Listing
		want     string
	}{
		{"no refusal", []proxy.Listing{{At: at}}, ""},
		{"looked again", []proxy.Listing{{At: at, Refused: true}, {At: at.Add(time.Second)}}, ""},
		{"stopped", []proxy.Listing{{At: at}, {At: at.Add(time.Second), Refused: true}}, "since it refused a listing at 09:00:01.000"},
	}
	for _, c := range cases {
		got := listedSinceRefusal(c.listings)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: listedSinceRefusal = %q, want %q", c.name, got, c.want)
		}
	}
}
