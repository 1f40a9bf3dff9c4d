// Package dataplane pushes EdgeRoutes to the edge proxy's admin API.
//
// The protocol is xDS-like: a push is either ACKed (2xx) or NACKed (anything
// else, with a reason), and the controller reports which in its status.
package dataplane

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	netv1 "github.com/10xdev/gw10/solutions/step01/api/v1"
)

// DataPlane is what the reconciler converges: the proxy's route table.
// Program and Remove are idempotent.
type DataPlane interface {
	// Program creates or replaces the route for an EdgeRoute; a nil error
	// means the proxy ACKed it.
	Program(ctx context.Context, er *netv1.EdgeRoute) error
	// Remove withdraws the route of the EdgeRoute with this key; withdrawing
	// a route the proxy does not hold succeeds. It first reads the route the
	// proxy holds under the key, then withdraws that route by its uid (the
	// EdgeRoute's metadata.uid, which the push carried). So a withdraw that
	// lands late, after an EdgeRoute was created again under the same name
	// and pushed, names the old uid, and the proxy keeps the new route.
	Remove(ctx context.Context, key types.NamespacedName) error
	// Routes lists the keys of the routes the proxy holds (GET /v1/routes),
	// leaving out a key that is not namespace/name.
	Routes(ctx context.Context) ([]types.NamespacedName, error)
}

// Route is the body of a push: what the proxy needs to route the traffic.
type Route struct {
	Hostname   string `json:"hostname"`
	Prefix     string `json:"prefix"`
	Service    string `json:"service"`
	Port       int32  `json:"port"`
	Generation int64  `json:"generation"`
	// UID is the EdgeRoute's metadata.uid: names repeat, uids do not, so a
	// withdraw that names it removes this EdgeRoute's route and no other.
	UID string `json:"uid"`
}

// RouteFor is the route an EdgeRoute asks for.
func RouteFor(er *netv1.EdgeRoute) Route {
	return Route{
		Hostname:   er.Spec.Hostname,
		Prefix:     er.Spec.Prefix,
		Service:    er.Spec.Service,
		Port:       er.Spec.Port,
		Generation: er.Generation,
		UID:        string(er.UID),
	}
}

// NACKError is a push or withdraw the proxy refused.
type NACKError struct {
	StatusCode int
	// Reason is why the proxy refused: the "reason" field of its JSON
	// answer, or the HTTP status text when the answer has none. The same
	// refusal gives the same Reason, so a condition message may carry it.
	Reason string
	// Body is the proxy's whole answer (bounded), for the log: it may carry
	// what changes from one answer to the next, such as a request id.
	Body string
	// Of names what was refused when it is not a route's push, read or
	// withdraw ("the listing of its routes"); empty: a route.
	Of string
}

func (e *NACKError) Error() string {
	msg := fmt.Sprintf("proxy NACKed the route (HTTP %d): %s", e.StatusCode, e.Reason)
	if e.Of != "" {
		msg = fmt.Sprintf("proxy refused %s (HTTP %d): %s", e.Of, e.StatusCode, e.Reason)
	}
	if e.Body != "" && e.Body != e.Reason {
		msg += "; its answer: " + e.Body
	}
	return msg
}
