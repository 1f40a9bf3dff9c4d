package controller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/10xdev/gw10/step01/api/v1"
	"github.com/10xdev/gw10/step01/internal/dataplane"
)

// EdgeRouteReconciler converges the data plane to the EdgeRoutes in the
// cluster and reports the outcome in their status.
type EdgeRouteReconciler struct {
	client.Client
	Programmer dataplane.DataPlane // pushes config to the proxy (step 02 / gw-08)
	// Namespaces are the namespaces the manager's cache watches; empty: every
	// namespace. The proxy's routes of other namespaces are not this
	// controller's to judge: it leaves them alone.
	Namespaces []string
	// DriftPeriod is how often the controller compares the proxy's routes with
	// the EdgeRoutes and enqueues the ones that differ; zero: DefaultDriftPeriod.
	DriftPeriod time.Duration
}

// +kubebuilder:rbac:groups=net.10xdev.io,resources=edgeroutes,verbs=get;list;watch
// +kubebuilder:rbac:groups=net.10xdev.io,resources=edgeroutes/status,verbs=get;update;patch
// TODO(step01): Let the controller read the Services its routes name (checks: missing-service, self-heal).

// Reconcile is LEVEL-TRIGGERED: it derives the right state from scratch
// every call. It must be idempotent and survive being called any number
// of times in any order.
func (r *EdgeRouteReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// Load the EdgeRoute; NotFound means it was deleted.
	var er netv1.EdgeRoute
	if err := r.Get(ctx, req.NamespacedName, &er); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("reading EdgeRoute %s: %w", req.NamespacedName, err)
		}
		// TODO(step01): The EdgeRoute is gone: make sure the data plane no longer routes it (check: route-deleted).
		return ctrl.Result{}, nil
	}
	// TODO(step01): Make the data plane hold what this EdgeRoute asks for, in the situation
	// you find it in, and its status say what is true; return what the pass
	// leaves undone, for the queue to retry. The chapter's status contract says,
	// for each situation, what the proxy must hold and what the conditions say;
	// conditionsFor (conditions.go) is where the conditions are decided
	// (contract: S-*, ST-*, Q-BACKOFF) (checks: missing-service, self-heal,
	// service-removed, read-error, status-writes, spec-update, push-failure,
	// quiescent, route-deleted, restart-reconverge, sequences).
	return ctrl.Result{}, nil
}

// SetupWithManager registers the controller with the manager: what it
// reconciles, and what wakes it.
func (r *EdgeRouteReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	// TODO(step01): Reconcile the EdgeRoutes that name a Service whenever that Service is
	// created or deleted (contract: Q-FANOUT; checks: self-heal, service-removed,
	// restart-reconverge). Its updates may wake them too, or not: a pass woken
	// for nothing must change nothing (check: quiescent).
	// Then make a deletion reach the data plane even when it happened while
	// the controller was stopped (check: deleted-while-down; see the last TODO of this file).
	return ctrl.NewControllerManagedBy(mgr).
		For(&netv1.EdgeRoute{}).
		Named("edgeroute").
		Complete(r)
}

// TODO(step01): Helpers of your own for SetupWithManager go here, if it needs any.

// TODO(step01): An EdgeRoute deleted while the controller was stopped must still have its
// route withdrawn once the controller runs again (contract: S-DELETED,
// Q-RESTART; check: deleted-while-down). What does a controller that starts
// see of such a deletion? Try it first: docs/step01.md, "Deletion across
// restarts". Code that asks the proxy may live in the data-plane source
// (dataplane_source.go) instead, and leave this region empty.
