package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"
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
	// TODO(step01): Return the Accepted and Programmed conditions for obs, following the
	// status contract in the comment above (checks: missing-service,
	// self-heal, service-removed, push-failure).
	return nil
}

// setCondition sets c on the EdgeRoute (meta.SetStatusCondition), stamped
// with the generation it describes.
func setCondition(er *netv1.EdgeRoute, c metav1.Condition) {
	c.ObservedGeneration = er.Generation
	meta.SetStatusCondition(&er.Status.Conditions, c)
}
