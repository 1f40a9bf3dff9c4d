package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	netv1 "github.com/10xdev/gw10/step01/api/v1"
)

// observation is what one Reconcile pass saw of the world.
type observation struct {
	// serviceMissing: the target Service does not exist.
	serviceMissing bool
	// pushErr is the data plane's answer to the push: nil for an ACK, the
	// NACK (or transport error) otherwise. Only meaningful with the Service present.
	pushErr error
	// TODO(step01): What else must a pass observe, for conditionsFor to report every row
	// of the status contract's table? (checks: route-deleted, service-removed)
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
	// TODO(step01): Return the Accepted and Programmed conditions for obs, following the
	// status contract's table (checks: missing-service,
	// self-heal, service-removed, push-failure). Messages must not carry an
	// error's text (contract: ST-MESSAGE).
	return nil
}

// TODO(step01): Helpers for conditionsFor's messages go here, if it needs any. The
// table's rows the given tests leave out say what a message must hold
// when a withdraw fails (contract: S-MISSING, S-DELETED, ST-MESSAGE).

// setCondition sets c on the EdgeRoute's conditions and says whether that
// changed them (TestSetCondition).
func setCondition(er *netv1.EdgeRoute, c metav1.Condition) (changed bool) {
	// TODO(step01): Set c on er's conditions, stamped with the generation it describes
	// (contract: ST-OBSGEN), its lastTransitionTime moved only when its
	// status does (ST-NO-CHURN), and say whether anything changed. The
	// apimachinery has a helper: go doc k8s.io/apimachinery/pkg/api/meta
	// (checks: spec-update, status-writes, quiescent).
	return false
}
