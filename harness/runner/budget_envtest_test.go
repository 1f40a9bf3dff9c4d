package runner

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// learnerSeed is the seed of the learner's budget these tests replay: any
// seed's plan reaches every situation (steps/step01's model tests), one is
// enough to show the short sequence still catches what the check is for.
const learnerSeed = 1

// learnerCauses are the causes the learner's sequence names where it meets
// a mutant's defect in another situation than the grade's sequence does
// (whose cause the mutant's file names).
var learnerCauses = map[string]string{
	// The plan's first change moves a route between two live Services: the
	// withdraw before the push shows as a needless withdraw (Q-NO-FLAP)
	// before any outage comes.
	"withdraw-before-push": "although it should have stayed programmed",
}

// TestTheLearnersBudgetCatchesTheSequencesMutants: make check's short
// planned sequence kills every mutant the sequences check is for, with its
// cause (or the one learnerCauses names), as the grade's full sequence does
// (TestEveryMutantFailsItsCheckWithItsCause).
func TestTheLearnersBudgetCatchesTheSequencesMutants(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	t.Parallel() // beside the package's other long runs (planes)
	for _, st := range steps.All() {
		for _, m := range loadMutants(t, filepath.Join("..", "testdata", st.Name, "mutants")) {
			if m.wantCheck != "sequences" {
				continue
			}
			t.Run(st.Name+"/"+m.name, func(t *testing.T) {
				t.Parallel() // each run holds a control plane of its own (planes)
				dir := copyModule(t, filepath.Join(root, st.SolutionDir))
				m.apply(t, dir)
				rep, out := runLearnerBudget(t, dir, "learner-mutant-"+m.name, mutantTimeouts(), m.wantCheck)
				res := findResult(rep, m.wantCheck)
				if res == nil || res.Status != report.Fail {
					t.Fatalf("mutant %s survives the learner's budget (seed %d):\n%s", m.name, learnerSeed, out)
				}
				text := strings.Join(append(append([]string{}, res.Causes...), res.Hint, res.Message), "\n")
				cause := m.wantCause
				if c, ok := learnerCauses[m.name]; ok {
					cause = c
				}
				if !strings.Contains(text, cause) {
					t.Fatalf("mutant %s: the learner's budget fails it without saying %q:\n%s", m.name, cause, out)
				}
				if !strings.Contains(res.Message, fmt.Sprintf("--seed %d\"", learnerSeed)) || strings.Contains(res.Message, "--budget full") {
					t.Errorf("the failure does not print the learner budget's replay command (--seed %d, no --budget full):\n%s", learnerSeed, res.Message)
				}
			})
		}
	}
}

// runLearnerBudget runs the checks ids on the learner's budget (make
// check's), replaying learnerSeed.
func runLearnerBudget(t *testing.T, dir, name string, timeouts checks.Timeouts, ids ...string) (*report.Report, string) {
	t.Helper()
	st := steps.Default()
	selected, err := checks.Select(st.Checks, ids)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep, err := Run(context.Background(), Options{
		Root: root, Step: st, StepDir: dir, Label: name, Checks: selected,
		Budget: checks.BudgetLearner, Seeds: []int64{learnerSeed},
		Backend: planes.acquire(t), Out: &out, GoEnv: workspaceFor(t, dir), Timeouts: timeouts,
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	rep.Terminal(&out)
	return rep, out.String()
}
