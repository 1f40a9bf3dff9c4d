package dataplane

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	netv1 "github.com/10xdev/gw10/step01/api/v1"
)

// Logging is a data plane that logs every push and withdraw, ACKs every
// push, and holds what it was pushed, as a proxy holds its table: the
// default for `make run` when no proxy is given with --dataplane-url. Its
// table lives in the process, so a controller started again finds it empty,
// as after a proxy's restart. The zero value, with Log set, is ready to use.
type Logging struct {
	Log logr.Logger

	mu   sync.Mutex
	held map[types.NamespacedName]bool
}

// Program logs the route, holds it and ACKs it.
func (l *Logging) Program(_ context.Context, er *netv1.EdgeRoute) error {
	r := RouteFor(er)
	l.Log.Info("data plane: push", "namespace", er.Namespace, "name", er.Name,
		"hostname", r.Hostname, "prefix", r.Prefix, "service", r.Service, "port", r.Port, "generation", r.Generation)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = map[types.NamespacedName]bool{}
	}
	l.held[types.NamespacedName{Namespace: er.Namespace, Name: er.Name}] = true
	return nil
}

// Remove logs the withdrawal and forgets the route; one it does not hold is
// logged as such.
func (l *Logging) Remove(_ context.Context, key types.NamespacedName) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held[key] {
		l.Log.Info("data plane: withdraw: nothing held", "namespace", key.Namespace, "name", key.Name)
		return nil
	}
	delete(l.held, key)
	l.Log.Info("data plane: withdraw", "namespace", key.Namespace, "name", key.Name)
	return nil
}

// Routes lists the routes it holds, in order.
func (l *Logging) Routes(context.Context) ([]types.NamespacedName, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]types.NamespacedName, 0, len(l.held))
	for k := range l.held {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return keys, nil
}
