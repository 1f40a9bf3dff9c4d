package controller

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	netv1 "github.com/10xdev/gw10/step01/api/v1"
	"github.com/10xdev/gw10/step01/internal/dataplane"
)

// observation is what one Reconcile pass saw of the world.
type observation struct {
	// serviceMissing: the target Service does not exist.
	serviceMissing bool
	// pushErr is the data plane's answer to the push: nil for an ACK, the
	// NACK (or transport error) otherwise. Only meaningful with the Service present.
	pushErr error
	// TODO(step01): What else must a pass observe, for conditionsFor to report the
	// contract's other rows: an EdgeRoute being deleted while another
	// controller's finalizer keeps it, and a withdraw the proxy refused
	// or never answered? (contract: S-DELETED, ST-MESSAGE; checks: route-deleted, service-removed)
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
	// TODO(step01): Return the Accepted and Programmed conditions for obs, following the
	// status contract's table (checks: missing-service,
	// self-heal, service-removed, push-failure). Messages must not carry an
	// error's text: refusalOf says what a refusal may put in one.
	return nil
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
