package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	netv1 "github.com/10xdev/gw10/solutions/step01/api/v1"
	"github.com/10xdev/gw10/solutions/step01/internal/dataplane"
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
//gw10:begin rbac
//gw10:todo Let the controller read the Services its routes name (checks: missing-service, self-heal).
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch
//gw10:end

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
		//gw10:begin withdraw-deleted
		//gw10:todo The EdgeRoute is gone: make sure the data plane no longer routes it (check: route-deleted).
		//gw10:stub return ctrl.Result{}, nil
		// NotFound = deleted. Withdraw its route: Remove is idempotent, so this
		// is right whether or not the route was ever programmed.
		if err := r.Programmer.Remove(ctx, req.NamespacedName); err != nil {
			return ctrl.Result{}, fmt.Errorf("withdrawing route of deleted EdgeRoute %s: %w", req.NamespacedName, err)
		}
		return ctrl.Result{}, nil
		//gw10:end
	}
	//gw10:begin reconcile
	//gw10:todo Make the data plane hold what this EdgeRoute asks for, in the situation
	//gw10:todo you find it in, and its status say what is true; return what the pass
	//gw10:todo leaves undone, for the queue to retry. The chapter's status contract says,
	//gw10:todo for each situation, what the proxy must hold and what the conditions say;
	//gw10:todo conditionsFor (conditions.go) is where the conditions are decided
	//gw10:todo (contract: S-*, ST-*, Q-BACKOFF) (checks: missing-service, self-heal,
	//gw10:todo service-removed, read-error, status-writes, spec-update, push-failure,
	//gw10:todo quiescent, route-deleted, restart-reconverge, sequences).
	//gw10:stub return ctrl.Result{}, nil
	// 2. Observe ACTUAL state: does the target Service exist? And is the
	// EdgeRoute being deleted (held by another's finalizer)?
	obs := observation{deleting: !er.DeletionTimestamp.IsZero()}
	var svc corev1.Service
	err := r.Get(ctx, types.NamespacedName{Namespace: er.Namespace, Name: er.Spec.Service}, &svc)
	switch {
	case apierrors.IsNotFound(err):
		obs.serviceMissing = true
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading Service %s/%s: %w", er.Namespace, er.Spec.Service, err)
	}

	// 3. Converge: program the data plane for THIS route (idempotent), or
	// withdraw it while its Service is missing or it is being deleted.
	if obs.serviceMissing || obs.deleting {
		obs.withdrawErr = r.Programmer.Remove(ctx, req.NamespacedName)
	} else {
		obs.pushErr = r.Programmer.Program(ctx, &er)
	}

	// 4. Report status: only Programmed=True AFTER the push succeeded, in one
	// write, and none when nothing changed.
	before := er.Status.DeepCopy()
	for _, c := range conditionsFor(obs) {
		setCondition(&er, c)
	}
	if !equality.Semantic.DeepEqual(before, &er.Status) {
		if err := r.Status().Update(ctx, &er); err != nil {
			return ctrl.Result{}, errors.Join(obs.withdrawErr, obs.pushErr, fmt.Errorf("updating status of %s: %w", req.NamespacedName, err))
		}
	}

	if obs.withdrawErr != nil {
		// The status is written; the error makes the queue retry the withdraw with backoff.
		return ctrl.Result{}, fmt.Errorf("withdrawing route of %s: %w", req.NamespacedName, obs.withdrawErr)
	}
	if obs.pushErr != nil {
		// The NACK is in the status; the error makes the queue retry with backoff.
		return ctrl.Result{}, fmt.Errorf("programming route %s: %w", req.NamespacedName, obs.pushErr)
	}
	return ctrl.Result{}, nil
	//gw10:end
}

// SetupWithManager registers the controller with the manager: what it
// reconciles, and what wakes it.
func (r *EdgeRouteReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	//gw10:begin watch
	//gw10:todo Reconcile the EdgeRoutes that name a Service whenever that Service is
	//gw10:todo created or deleted (contract: Q-FANOUT; checks: self-heal, service-removed,
	//gw10:todo restart-reconverge). Its updates may wake them too, or not: a pass woken
	//gw10:todo for nothing must change nothing (check: quiescent).
	//gw10:todo Then make a deletion reach the data plane even when it happened while
	//gw10:todo the controller was stopped (check: deleted-while-down; see the last TODO of this file).
	//gw10:stub return ctrl.NewControllerManagedBy(mgr).
	//gw10:stub 	For(&netv1.EdgeRoute{}).
	//gw10:stub 	Named("edgeroute").
	//gw10:stub 	Complete(r)
	// Endpoint churn does not reach the Service watch: it changes
	// EndpointSlices, not the Service. A data plane that tracks endpoints would
	// also watch EndpointSlices (their kubernetes.io/service-name label names
	// the Service).
	if err := mgr.GetFieldIndexer().IndexField(ctx, &netv1.EdgeRoute{}, serviceIndex, serviceOf); err != nil {
		return fmt.Errorf("indexing EdgeRoutes by %s: %w", serviceIndex, err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&netv1.EdgeRoute{}).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(r.routesFor)).
		WatchesRawSource(source.Func(r.sweep)).
		Named("edgeroute").
		WithOptions(controller.Options{RateLimiter: retryLimiter()}).
		Complete(r)
	//gw10:end
}

//gw10:begin watch-helpers
//gw10:todo Helpers of your own for SetupWithManager go here, if it needs any.

// maxRetryDelay caps a failing route's backoff. The work queue's default
// per-item limiter doubles from 5 ms up to 1000 s: after a proxy outage of a
// few minutes, a route that failed all along would wait up to 16 minutes
// more once the proxy is back. Capped, it is retried within half a minute.
const maxRetryDelay = 30 * time.Second

// retryLimiter is the queue's per-item backoff: the default's, capped.
func retryLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, maxRetryDelay)
}

// serviceIndex indexes EdgeRoutes by the name of the Service they target, so
// that a Service event finds its routes without listing every EdgeRoute.
const serviceIndex = ".spec.service"

// serviceOf is the index function: the Service an EdgeRoute targets.
func serviceOf(obj client.Object) []string {
	er, ok := obj.(*netv1.EdgeRoute)
	if !ok || er.Spec.Service == "" {
		return nil
	}
	return []string{er.Spec.Service}
}

// routesFor maps a Service to the EdgeRoutes in its namespace that target it.
func (r *EdgeRouteReconciler) routesFor(ctx context.Context, svc client.Object) []reconcile.Request {
	var routes netv1.EdgeRouteList
	if err := r.List(ctx, &routes,
		client.InNamespace(svc.GetNamespace()),
		client.MatchingFields{serviceIndex: svc.GetName()},
	); err != nil {
		logf.FromContext(ctx).Error(err, "listing EdgeRoutes for Service", "service", client.ObjectKeyFromObject(svc))
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(routes.Items))
	for _, er := range routes.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&er)})
	}
	return reqs
}

//gw10:end

//gw10:begin sweep
//gw10:todo An EdgeRoute deleted while the controller was stopped must still have its
//gw10:todo route withdrawn once the controller runs again (contract: S-DELETED,
//gw10:todo Q-RESTART; check: deleted-while-down). What does a controller that starts
//gw10:todo see of such a deletion? Try it first: docs/step01.md, "Deletion across
//gw10:todo restarts". Code that asks the proxy may live in the data-plane source
//gw10:todo (dataplane_source.go) instead, and leave this region empty.

// sweep is a source of events for the routes nothing else names: when the
// controller starts, it enqueues every route the proxy holds whose EdgeRoute
// is gone, and Reconcile, getting NotFound for it, withdraws it. Going through
// the queue keeps one key in one worker: a withdraw never races a reconcile
// of an EdgeRoute created again under the same name. A withdraw that outlives
// its timeout may still land after that reconcile's push; it names the uid of
// the route it read (dataplane.HTTP.Remove), so the proxy refuses it for the
// new route. The controller starts
// its sources once per process, and only while it leads (with
// --leader-elect), so the sweep runs once per leadership. A source's Start
// must not block, so the sweep runs in the background, retrying with backoff
// while the proxy cannot be listed.
func (r *EdgeRouteReconciler) sweep(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	log := logf.FromContext(ctx).WithName("sweep")
	retry := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 8, Cap: time.Minute}
	go func() {
		_ = retry.DelayFunc().Until(ctx, true, false, func(ctx context.Context) (bool, error) {
			orphans, err := r.orphans(ctx)
			if err != nil {
				log.Error(err, "sweeping the data plane for routes of deleted EdgeRoutes (will retry)")
				return false, nil
			}
			for _, key := range orphans {
				queue.Add(reconcile.Request{NamespacedName: key})
			}
			log.Info("swept the data plane", "orphans", len(orphans))
			return true, nil
		})
		r.watchDataPlane(ctx, queue)
	}()
	return nil
}

// orphans are the keys of the routes the proxy holds whose EdgeRoute does not
// exist. The cache answers (it waits for its first list), so a route is an
// orphan only if the EdgeRoute is absent from a synced view of the cluster.
// A key the cache cannot answer for is not this controller's to judge: with
// --namespaces, a namespace it does not watch is an error, not NotFound (a
// proxy shared with other controllers holds such routes). It is logged and
// skipped; one such key never keeps the others' orphans from being withdrawn.
func (r *EdgeRouteReconciler) orphans(ctx context.Context) ([]types.NamespacedName, error) {
	log := logf.FromContext(ctx)
	keys, err := r.Programmer.Routes(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the data plane's routes: %w", err)
	}
	var gone []types.NamespacedName
	for _, key := range keys {
		if !r.watches(key.Namespace) {
			continue
		}
		switch err := r.Get(ctx, key, &netv1.EdgeRoute{}); {
		case apierrors.IsNotFound(err):
			gone = append(gone, key)
		case err != nil:
			log.Info("sweep: skipping a route whose EdgeRoute cannot be read here", "route", key.String(), "error", err.Error())
		}
	}
	return gone, nil
}

//gw10:end
