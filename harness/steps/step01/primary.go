package step01

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/evidence"
)

// EdgeRouteGVK is the learner's API, the kind step 01's controller
// reconciles. The harness works with unstructured objects so it never
// depends on the learner's Go types.
var EdgeRouteGVK = schema.GroupVersionKind{Group: "net.10xdev.io", Version: "v1", Kind: "EdgeRoute"}

// primary is step 01's primary kind as the checks reach and name it, with
// the causes its design gives a failed wait.
func primary() checks.Primary {
	return checks.Primary{
		GVK:      EdgeRouteGVK,
		Resource: "edgeroutes",
		GoType:   "netv1.EdgeRoute", // the solution's and the skeleton's import alias
		Causes:   checks.Causes{NoReconcile: noReconcile, DidNothing: didNothing},
	}
}

// noReconcile is why nothing followed a Service's coming or going: the
// Service event must wake every EdgeRoute that names it (a watch with a map
// function, not Owns).
func noReconcile(trigger evidence.Trigger) string {
	switch trigger {
	case ServiceCreated, ServiceDeleted:
		return "the Service event woke no EdgeRoute, not even those that name the Service, " +
			"so their status still describes the world before it (S-ACKED, S-MISSING, Q-FANOUT)"
	}
	return ""
}

// didNothing reads successful passes that changed nothing after an event
// that should have changed something: Reconcile saw the event and returned
// early.
//
// A deletion is read by its withdraws alone: the tail of the route's last
// pass (the echo of its status write, pushing again) may still arrive
// after the deletion and count as a push or a write.
func didNothing(trigger evidence.Trigger, tl evidence.Tally) string {
	switch trigger {
	case ServiceCreated, ServiceDeleted:
		if tl.Pushes+tl.Withdraws+tl.StatusWrites > 0 {
			return ""
		}
		return ". Reconcile ran and changed nothing (no push, no withdraw, no status write), as if it returned early: " +
			"the EdgeRoute and its generation did not change, its Service did"
	case evidence.RouteDeleted:
		if tl.Withdraws > 0 {
			return ""
		}
		return ". Reconcile ran after the deletion and withdrew nothing: the proxy still routes to an EdgeRoute " +
			"that is gone (S-DELETED)"
	}
	return ""
}
