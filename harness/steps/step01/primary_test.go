package step01

import (
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/evidence"
)

// The mutants' cause: lines match these words: they are step 01's design
// (a Service wakes the EdgeRoutes that name it; a deletion withdraws).
func TestStep01sCausesNameItsDesign(t *testing.T) {
	success := func(n int) map[string]int { return map[string]int{"success": n} }
	cases := []struct {
		name    string
		trigger evidence.Trigger
		tl      evidence.Tally
		want    string // "" : no cause
	}{
		{"a pass that returned early after the Service appeared", ServiceCreated,
			evidence.Tally{Reconciles: 1, ByResult: success(1)}, "its generation did not change, its Service did"},
		{"a pass that pushed after the Service appeared", ServiceCreated,
			evidence.Tally{Reconciles: 1, ByResult: success(1), Pushes: 1}, ""},
		{"a deletion that withdrew nothing", evidence.RouteDeleted,
			evidence.Tally{Reconciles: 1, ByResult: success(1)}, "still routes to an EdgeRoute that is gone (S-DELETED)"},
		{"a deletion that withdrew nothing, while the last pass's echo still pushed", evidence.RouteDeleted,
			evidence.Tally{Reconciles: 3, ByResult: success(3), Pushes: 1, StatusWrites: 1}, "withdrew nothing"},
		{"a deletion that withdrew", evidence.RouteDeleted,
			evidence.Tally{Reconciles: 1, ByResult: success(1), Withdraws: 1}, ""},
	}
	for _, c := range cases {
		got := didNothing(c.trigger, c.tl)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := noReconcile(ServiceDeleted); !strings.Contains(got, "the Service event woke no EdgeRoute, not even those that name the Service") {
		t.Errorf("a Service event that woke nothing: %q", got)
	}
	if got := noReconcile(evidence.RouteEdited); got != "" {
		t.Errorf("an EdgeRoute event is the checks' own cause, not the step's: %q", got)
	}
	if p := primary(); p.Object("ns", "r") != "EdgeRoute ns/r" || p.CRD() != "edgeroutes.net.10xdev.io" || p.A() != "an EdgeRoute" {
		t.Errorf("step 01's primary kind names its objects %q, its CRD %q, one %q", p.Object("ns", "r"), p.CRD(), p.A())
	}
}
