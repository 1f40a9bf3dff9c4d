package dataplane

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	netv1 "github.com/10xdev/gw10/step01/api/v1"
)

// Logging is a data plane that logs every push and always ACKs: the default
// for `make run` when no proxy is given with --dataplane-url.
type Logging struct {
	Log logr.Logger
}

// Program logs the route and ACKs it.
func (l Logging) Program(_ context.Context, er *netv1.EdgeRoute) error {
	r := RouteFor(er)
	l.Log.Info("data plane: program route", "namespace", er.Namespace, "name", er.Name,
		"hostname", r.Hostname, "prefix", r.Prefix, "service", r.Service, "port", r.Port, "generation", r.Generation)
	return nil
}

// Remove logs the withdrawal.
func (l Logging) Remove(_ context.Context, key types.NamespacedName) error {
	l.Log.Info("data plane: withdraw route", "namespace", key.Namespace, "name", key.Name)
	return nil
}

// Routes lists nothing: a logging data plane holds no routes.
func (l Logging) Routes(context.Context) ([]types.NamespacedName, error) {
	return nil, nil
}
