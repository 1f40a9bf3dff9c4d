package controller

import (
	"context"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	netv1 "github.com/10xdev/gw10/solutions/step01/api/v1"
)

// DefaultDriftPeriod is how often the controller compares the proxy's routes
// with the EdgeRoutes when DriftPeriod is zero.
const DefaultDriftPeriod = 30 * time.Second

//gw10:begin dataplane-source
//gw10:todo The proxy can lose its routes while the controller runs (it restarts
//gw10:todo with an empty table): nothing in the cluster changes, so no watch wakes
//gw10:todo the controller. Compare the proxy's routes with the EdgeRoutes now and
//gw10:todo then, and enqueue the keys that differ (contract: S-DRIFT; check:
//gw10:todo sequences). docs/step01.md, "The data plane as an event source".

// watchDataPlane makes the proxy an event source: every DriftPeriod it
// compares the proxy's routes with the EdgeRoutes, both ways, and enqueues
// each key that differs. Reconcile then does what it always does for that
// key: it pushes a route the proxy lost and withdraws one whose EdgeRoute is
// gone. It returns when ctx ends.
func (r *EdgeRouteReconciler) watchDataPlane(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	log := logf.FromContext(ctx).WithName("dataplane-drift")
	period := r.DriftPeriod
	if period <= 0 {
		period = DefaultDriftPeriod
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		keys, err := r.drifted(ctx)
		if err != nil {
			log.Error(err, "comparing the data plane with the EdgeRoutes (will retry next period)")
			continue
		}
		for _, key := range keys {
			queue.Add(reconcile.Request{NamespacedName: key})
		}
		if len(keys) > 0 {
			log.Info("the data plane differs from the EdgeRoutes", "routes", len(keys))
		}
	}
}

// drifted are the keys on which the proxy and the EdgeRoutes disagree: routes
// the proxy holds whose EdgeRoute is gone, and EdgeRoutes reported
// Programmed=True whose route the proxy does not hold. A route waiting for
// its Service is absent on purpose and is not enqueued. It lists the proxy
// once (a look is one GET /v1/routes: a quiet window tolerates a look now
// and then, not a burst) and reads the EdgeRoutes from the cache, which
// costs the API server nothing. A key the cache cannot answer for (another
// namespace's, with --namespaces) is not this controller's: skipped.
func (r *EdgeRouteReconciler) drifted(ctx context.Context) ([]types.NamespacedName, error) {
	held, err := r.Programmer.Routes(ctx)
	if err != nil {
		return nil, err
	}
	var keys []types.NamespacedName
	inProxy := make(map[types.NamespacedName]bool, len(held))
	for _, key := range held {
		inProxy[key] = true
		if r.watches(key.Namespace) && apierrors.IsNotFound(r.Get(ctx, key, &netv1.EdgeRoute{})) {
			keys = append(keys, key) // an orphan
		}
	}
	var routes netv1.EdgeRouteList
	if err := r.List(ctx, &routes); err != nil {
		return nil, err
	}
	for i := range routes.Items {
		er := &routes.Items[i]
		key := client.ObjectKeyFromObject(er)
		if !inProxy[key] && meta.IsStatusConditionTrue(er.Status.Conditions, netv1.ConditionProgrammed) {
			keys = append(keys, key)
		}
	}
	return keys, nil
}

//gw10:end

// watches reports whether the controller's cache watches namespace ns.
func (r *EdgeRouteReconciler) watches(ns string) bool {
	return len(r.Namespaces) == 0 || slices.Contains(r.Namespaces, ns)
}
