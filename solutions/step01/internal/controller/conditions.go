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
	//gw10:todo What else must a pass observe, for conditionsFor to report every row
	//gw10:todo of the status contract's table? (checks: route-deleted, service-removed)
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
// (the chapter's q-nack-message asks why): a refusal's message says what the
// proxy answered (a dataplane.NACKError holds its status and reason) or that
// it did not answer, never "dial tcp 127.0.0.1:41234: connection refused".
// The error, with every detail, belongs in the log.
func conditionsFor(obs observation) []metav1.Condition {
	//gw10:begin conditions
	//gw10:todo Return the Accepted and Programmed conditions for obs, following the
	//gw10:todo status contract's table (checks: missing-service,
	//gw10:todo self-heal, service-removed, push-failure). Messages must not carry an
	//gw10:todo error's text (contract: ST-MESSAGE).
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

//gw10:begin messages
//gw10:todo Helpers for conditionsFor's messages go here, if it needs any. The
//gw10:todo table's rows the given tests leave out say what a message must hold
//gw10:todo when a withdraw fails (contract: S-MISSING, S-DELETED, ST-MESSAGE).

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

//gw10:end

// setCondition sets c on the EdgeRoute's conditions and says whether that
// changed them (TestSetCondition).
func setCondition(er *netv1.EdgeRoute, c metav1.Condition) (changed bool) {
	//gw10:begin set-condition
	//gw10:todo Set c on er's conditions, stamped with the generation it describes
	//gw10:todo (contract: ST-OBSGEN), its lastTransitionTime moved only when its
	//gw10:todo status does (ST-NO-CHURN), and say whether anything changed. The
	//gw10:todo apimachinery has a helper: go doc k8s.io/apimachinery/pkg/api/meta
	//gw10:todo (checks: spec-update, status-writes, quiescent).
	//gw10:stub return false
	c.ObservedGeneration = er.Generation
	return meta.SetStatusCondition(&er.Status.Conditions, c)
	//gw10:end
}
