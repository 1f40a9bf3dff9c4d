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
// that should have changed something. The reconcile count is the
// controller's, not a route's: after a Service event, those passes may be
// other work (an echo of an earlier status write under load) while the event
// woke nothing, so the cause names both readings.
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
		return ". Those passes changed nothing (no push, no withdraw, no status write), and the count cannot say which " +
			"route they were for: either the Service event never reached the EdgeRoutes that name it (the passes were " +
			"other work, such as the echo of an earlier status write), or Reconcile saw it and returned early; " +
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
