package checks

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/10xdev/gw10/harness/evidence"
)

// gadgetCreated is the Widget step's own trigger (step.Step.Triggers).
const gadgetCreated evidence.Trigger = "gadget-created"

// widgets is a primary kind no course step has, whose step names its own
// design in its causes: the causes' texts come from the descriptor.
var widgets = Primary{
	GVK:      schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
	Resource: "widgets",
	Causes: Causes{
		NoReconcile: func(tr evidence.Trigger) string {
			if tr == gadgetCreated {
				return "the Gadget event woke no Widget"
			}
			return ""
		},
		DidNothing: func(tr evidence.Trigger, tl evidence.Tally) string {
			if tr == gadgetCreated && tl.StatusWrites == 0 {
				return ". the Widget ignored its Gadget"
			}
			return ""
		},
	},
}

func TestACauseReadsWhatFollowedTheAction(t *testing.T) {
	created := evidence.Event{Trigger: gadgetCreated, Text: "creating Gadget heal-svc"}
	write := &evidence.Event{Text: "status of heal: Accepted=True/Valid"}
	cases := []struct {
		name   string
		action evidence.Event
		tl     evidence.Tally
		want   []string
		not    []string
	}{
		{"a pass that returned early, in the step's words", created,
			evidence.Tally{Reconciles: 1, ByResult: map[string]int{"success": 1}},
			[]string{"reconciled once (1 success), pushed 0 times (0 refused), withdrew 0 times and wrote no status",
				"the Widget ignored its Gadget"}, nil},
		{"a pass that did its work", created,
			evidence.Tally{Reconciles: 2, ByResult: map[string]int{"success": 2}, Pushes: 1, StatusWrites: 1, LastStatus: write},
			[]string{"reconciled twice", "pushed once", "wrote status once; the last write: status of heal"},
			[]string{"ignored"}},
		{"a pass that failed is not one that returned early", created,
			evidence.Tally{Reconciles: 1, ByResult: map[string]int{"error": 1}},
			[]string{"(1 error)"}, []string{"ignored"}},
	}
	for _, c := range cases {
		got := didReconcileCause(widgets, c.action, c.tl)
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
	// A step without causes of its own gets only what any step's evidence says.
	bare := Primary{GVK: widgets.GVK, Resource: widgets.Resource}
	if got := didReconcileCause(bare, created, evidence.Tally{Reconciles: 1, ByResult: map[string]int{"success": 1}}); strings.Contains(got, "ignored") {
		t.Errorf("a step without causes got one: %q", got)
	}
}

func TestNoReconcileNamesThePrimaryKindAndTheStepsCauses(t *testing.T) {
	cases := []struct {
		primary Primary
		action  evidence.Event
		want    string
	}{
		{widgets, evidence.Event{Trigger: evidence.RouteEdited, Text: "editing Widget w: port 9090"},
			"no reconcile followed editing Widget w: port 9090: the Widget event woke no reconcile"},
		{widgets, evidence.Event{Trigger: gadgetCreated, Text: "creating Gadget g"},
			"no reconcile followed creating Gadget g: the Gadget event woke no Widget"},
		{Primary{GVK: widgets.GVK}, evidence.Event{Trigger: gadgetCreated, Text: "creating Gadget g"},
			"no reconcile followed creating Gadget g"},
		{widgets, evidence.Event{Trigger: evidence.Restarted, Text: "starting a new controller process"},
			"no reconcile followed starting a new controller process: the new process reconciled nothing"},
	}
	for _, c := range cases {
		if got := noReconcileCause(c.primary, c.action); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

// TestAnActionNeedsADeclaredTrigger: a trigger is every step's (package
// evidence) or one the step declares; any other fails the check, for no
// cause would read it.
func TestAnActionNeedsADeclaredTrigger(t *testing.T) {
	ct := NewT("x", Env{Triggers: []evidence.Trigger{gadgetCreated}})
	ct.Did(evidence.RouteCreated, "Widget ns/w", "creating Widget w")
	ct.Did(gadgetCreated, "Gadget ns/g", "creating Gadget g")
	if ct.Failed() {
		t.Fatalf("a generic and a declared trigger failed the check")
	}
	ct.Did("gizmo-created", "Gizmo ns/g", "creating Gizmo g")
	if !ct.Failed() {
		t.Errorf("a trigger the step does not declare was recorded as if a cause read it")
	}
	actions := 0
	for _, e := range ct.Evidence() {
		if e.Kind == evidence.Action {
			actions++
		}
	}
	if actions != 3 {
		t.Errorf("every action is still on record: %d actions in %+v", actions, ct.Evidence())
	}
}
