package controller

import (
	"slices"
	"time"
)

// DefaultDriftPeriod is how often the controller compares the proxy's routes
// with the EdgeRoutes when DriftPeriod is zero.
const DefaultDriftPeriod = 30 * time.Second

// TODO(step01): The proxy can lose its routes while the controller runs (it restarts
// with an empty table): nothing in the cluster changes, so no watch wakes
// the controller. Compare the proxy's routes with the EdgeRoutes now and
// then, and enqueue the keys that differ (contract: S-DRIFT; check:
// sequences). docs/step01.md, "The data plane as an event source".

// watches reports whether the controller's cache watches namespace ns.
func (r *EdgeRouteReconciler) watches(ns string) bool {
	return len(r.Namespaces) == 0 || slices.Contains(r.Namespaces, ns)
}
