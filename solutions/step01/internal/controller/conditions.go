package controller

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	netv1 "github.com/10xdev/gw10/solutions/step01/api/v1"
	"github.com/10xdev/gw10/solutions/step01/internal/dataplane"
)

// observation is what one Reconcile pass saw of the world.
type observation struct {
	// serviceMissing: the target Service does not exist.
	serviceMissing bool
	// pushErr is the data plane's answer to the push: nil for an ACK, the
	// NACK (or transport error) otherwise. Only meaningful with the Service present.
	pushErr error
	//gw10:begin observation
	//gw10:todo What else must a pass observe, for conditionsFor to report the
	//gw10:todo contract's other rows: an EdgeRoute being deleted while another
	//gw10:todo controller's finalizer keeps it, and a withdraw the proxy refused
	//gw10:todo or never answered? (contract: S-DELETED, ST-MESSAGE; checks: route-deleted, service-removed)
	// deleting: the EdgeRoute is being deleted (its deletionTimestamp is
	// set; another finalizer holds it): its route is withdrawn, never pushed.
	deleting bool
	// withdrawErr is the data plane's answer to a withdraw, when the pass
	// asked for one: nil once the proxy no longer holds the route.
	withdrawErr error
	//gw10:end
}

// conditionsFor is the status contract: the conditions an EdgeRoute should
// carry after a pass that observed obs. It is pure, so it is table-tested.
// What each situation must report is the chapter's table
// (docs/step01.md#the-status-contract); docs/contract.md states it clause by
// clause.
//
// Every message is a function of what was observed, never an error's text
// (the chapter's q-nack-message asks why): a refusal's message is what
// refusalOf says, never "dial tcp 127.0.0.1:41234: connection refused".
// The error, with every detail, belongs in the log.
func conditionsFor(obs observation) []metav1.Condition {
	//gw10:begin conditions
	//gw10:todo Return the Accepted and Programmed conditions for obs, following the
	//gw10:todo status contract's table (checks: missing-service,
	//gw10:todo self-heal, service-removed, push-failure). Messages must not carry an
	//gw10:todo error's text: refusalOf says what a refusal may put in one.
	//gw10:stub return nil
	accepted := metav1.Condition{Type: netv1.ConditionAccepted, Status: metav1.ConditionTrue, Reason: netv1.ReasonValid, Message: "route accepted"}
	if obs.serviceMissing {
		accepted = metav1.Condition{Type: netv1.ConditionAccepted, Status: metav1.ConditionFalse, Reason: netv1.ReasonServiceNotFound,
			Message: "target Service does not exist"}
	}
	switch {
	case obs.deleting:
		return []metav1.Condition{accepted,
			{Type: netv1.ConditionProgrammed, Status: metav1.ConditionFalse, Reason: netv1.ReasonDeleting,
				Message: withdrawal("the EdgeRoute is being deleted", obs.withdrawErr)}}
	case obs.serviceMissing:
		return []metav1.Condition{accepted,
			// Programmed must not stay True from an earlier pass: the route is withdrawn.
			{Type: netv1.ConditionProgrammed, Status: metav1.ConditionFalse, Reason: netv1.ReasonNotAccepted,
				Message: withdrawal("the route is not accepted", obs.withdrawErr)}}
	case obs.pushErr != nil:
		return []metav1.Condition{accepted,
			// The CRD analog of an xDS NACK.
			{Type: netv1.ConditionProgrammed, Status: metav1.ConditionFalse, Reason: netv1.ReasonPushFailed,
				Message: "data plane push failed: " + refusalOf(obs.pushErr)}}
	default:
		return []metav1.Condition{accepted,
			{Type: netv1.ConditionProgrammed, Status: metav1.ConditionTrue, Reason: netv1.ReasonSynced, Message: "data plane updated"}}
	}
	//gw10:end
}

// withdrawal is the message of a condition whose route was withdrawn
// (Programmed's, for a missing Service and for a deletion): why
// (the situation, as a reader would put it: "the EdgeRoute is being
// deleted"), then that the route is out of the data plane, or, when the
// withdraw failed, that it may still be served.
func withdrawal(why string, withdrawErr error) string {
	if withdrawErr != nil {
		return why + "; withdrawing its route failed, the data plane may still serve it: " + refusalOf(withdrawErr)
	}
	return why + ": its route is withdrawn from the data plane"
}

// refusalOf is what a condition message may say of a failed push or
// withdraw: the NACK's status and reason, or "data plane unreachable" when
// the proxy did not answer (a reset connection, a timeout).
func refusalOf(err error) string {
	if nack, ok := errors.AsType[*dataplane.NACKError](err); ok {
		return fmt.Sprintf("the data plane refused it (HTTP %d): %s", nack.StatusCode, nack.Reason)
	}
	return "data plane unreachable"
}

// setCondition sets c on the EdgeRoute (meta.SetStatusCondition), stamped
// with the generation it describes, and says whether that changed the
// EdgeRoute's conditions.
func setCondition(er *netv1.EdgeRoute, c metav1.Condition) (changed bool) {
	c.ObservedGeneration = er.Generation
	return meta.SetStatusCondition(&er.Status.Conditions, c)
}
