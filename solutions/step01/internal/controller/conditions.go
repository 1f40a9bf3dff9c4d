package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	netv1 "github.com/10xdev/gw10/solutions/step01/api/v1"
)

// observation is what one Reconcile pass saw of the world.
type observation struct {
	// serviceMissing: the target Service does not exist.
	serviceMissing bool
	// pushErr is the data plane's answer to the push: nil for an ACK, the
	// NACK (or transport error) otherwise. Only meaningful with the Service present.
	pushErr error
	// withdrawErr is the data plane's answer to a withdraw, when the pass
	// asked for one: nil once the proxy no longer holds the route.
	withdrawErr error
}

// conditionsFor is the status contract: the conditions an EdgeRoute should
// carry after a pass that observed obs. It is pure, so it is table-tested.
//
//	Service missing      Accepted=False ServiceNotFound  Programmed=False NotAccepted
//	push ACKed           Accepted=True  Valid            Programmed=True  Synced
//	push NACKed          Accepted=True  Valid            Programmed=False PushFailed (message: the NACK)
func conditionsFor(obs observation) []metav1.Condition {
	//gw10:begin conditions
	//gw10:todo Return the Accepted and Programmed conditions for obs, following the
	//gw10:todo status contract in the comment above (checks: missing-service,
	//gw10:todo self-heal, service-removed, push-failure).
	//gw10:stub return nil
	switch {
	case obs.serviceMissing:
		return []metav1.Condition{
			{Type: netv1.ConditionAccepted, Status: metav1.ConditionFalse, Reason: netv1.ReasonServiceNotFound,
				Message: "target Service does not exist"},
			// Programmed must not stay True from an earlier pass: the route is withdrawn.
			{Type: netv1.ConditionProgrammed, Status: metav1.ConditionFalse, Reason: netv1.ReasonNotAccepted,
				Message: "route is withdrawn from the data plane until it is accepted"},
		}
	case obs.pushErr != nil:
		return []metav1.Condition{
			{Type: netv1.ConditionAccepted, Status: metav1.ConditionTrue, Reason: netv1.ReasonValid, Message: "route accepted"},
			// The CRD analog of an xDS NACK.
			{Type: netv1.ConditionProgrammed, Status: metav1.ConditionFalse, Reason: netv1.ReasonPushFailed,
				Message: fmt.Sprintf("data plane push failed: %v", obs.pushErr)},
		}
	default:
		return []metav1.Condition{
			{Type: netv1.ConditionAccepted, Status: metav1.ConditionTrue, Reason: netv1.ReasonValid, Message: "route accepted"},
			{Type: netv1.ConditionProgrammed, Status: metav1.ConditionTrue, Reason: netv1.ReasonSynced, Message: "data plane updated"},
		}
	}
	//gw10:end
}

// setCondition sets c on the EdgeRoute (meta.SetStatusCondition), stamped
// with the generation it describes.
func setCondition(er *netv1.EdgeRoute, c metav1.Condition) {
	c.ObservedGeneration = er.Generation
	meta.SetStatusCondition(&er.Status.Conditions, c)
}
