package checks

import (
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/evidence"
)

func TestACauseReadsWhatFollowedTheAction(t *testing.T) {
	created := evidence.Event{Trigger: evidence.ServiceCreated, Text: "creating Service heal-svc"}
	deleted := evidence.Event{Trigger: evidence.RouteDeleted, Text: "deleting EdgeRoute bye"}
	write := &evidence.Event{Text: "status of heal: Accepted=True/Valid"}
	cases := []struct {
		name   string
		action evidence.Event
		tl     evidence.Tally
		want   []string
		not    []string
	}{
		{"a pass that returned early after the Service appeared", created,
			evidence.Tally{Reconciles: 1, ByResult: map[string]int{"success": 1}},
			[]string{"reconciled once (1 success), pushed 0 times (0 refused), withdrew 0 times and wrote no status",
				"Reconcile ran and changed nothing", "its generation did not change, its Service did"}, nil},
		{"a deletion that withdrew nothing", deleted,
			evidence.Tally{Reconciles: 1, ByResult: map[string]int{"success": 1}},
			[]string{"withdrew nothing", "still routes to an EdgeRoute that is gone"}, nil},
		{"a deletion that withdrew nothing, while the last pass's echo still pushed", deleted,
			evidence.Tally{Reconciles: 3, ByResult: map[string]int{"success": 3}, Pushes: 1, StatusWrites: 1, LastStatus: write},
			[]string{"reconciled 3 times", "withdrew nothing"}, nil},
		{"a deletion that withdrew", deleted,
			evidence.Tally{Reconciles: 1, ByResult: map[string]int{"success": 1}, Withdraws: 1},
			[]string{"withdrew once"}, []string{"withdrew nothing"}},
		{"a pass that did its work", created,
			evidence.Tally{Reconciles: 2, ByResult: map[string]int{"success": 2}, Pushes: 1, StatusWrites: 1, LastStatus: write},
			[]string{"reconciled twice", "pushed once", "wrote status once; the last write: status of heal"},
			[]string{"changed nothing"}},
		{"a pass that failed is not one that returned early", created,
			evidence.Tally{Reconciles: 1, ByResult: map[string]int{"error": 1}},
			[]string{"(1 error)"}, []string{"changed nothing"}},
	}
	for _, c := range cases {
		got := didReconcileCause(c.action, c.tl)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q says %q", c.name, got, w)
			}
		}
	}
}
