package controller

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	netv1 "github.com/10xdev/gw10/solutions/step01/api/v1"
	"github.com/10xdev/gw10/solutions/step01/internal/dataplane"
)

// A proxy shared with controllers of other namespaces: a controller that
// watches only its own (--namespaces) cannot read the EdgeRoutes of the
// others' routes (its cache answers with an error, not NotFound). Those
// routes are left alone, and the orphans of its own namespace are still
// withdrawn.
func TestTheSweepOfAScopedControllerSkipsRoutesOfOtherNamespaces(t *testing.T) {
	g := NewWithT(t)
	ns, other := newNamespace(t), newNamespace(t)
	kept := newRoute(ns, "kept", "svc")
	create(t, kept, newService(ns, "svc"))
	dp := newFakeDataPlane()
	orphan := types.NamespacedName{Namespace: ns, Name: "deleted-while-stopped"}
	foreign := types.NamespacedName{Namespace: other, Name: "theirs"}
	for _, key := range []types.NamespacedName{orphan, foreign} {
		dp.routes[key] = dataplane.Route{Hostname: "old.example.com", Prefix: "/", Service: "svc", Port: 8080}
	}
	dp.routes[client.ObjectKeyFromObject(kept)] = dataplane.RouteFor(kept)

	startManagerWith(t, dp, func(o *ctrl.Options) {
		o.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}
	})
	g.Eventually(func(g Gomega) {
		_, held := dp.route(orphan)
		g.Expect(held).To(BeFalse(), "the orphan of the watched namespace is still in the data plane")
		expectCondition(g, get(t, kept), netv1.ConditionProgrammed, metav1.ConditionTrue, netv1.ReasonSynced)
	}, eventually, poll).Should(Succeed())
	g.Consistently(func() bool { _, held := dp.route(foreign); return held }, "1s", poll).Should(BeTrue(),
		"the route of a namespace this controller does not watch was withdrawn")
}

// A route that has failed for as long as a proxy outage lasts is retried
// within maxRetryDelay of the outage's end, not after the default's 1000 s.
func TestAFailingRoutesBackoffIsCapped(t *testing.T) {
	limiter := retryLimiter()
	key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "web"}}
	var last time.Duration
	for range 40 { // 40 failures: minutes of an outage
		last = limiter.When(key)
	}
	if last != maxRetryDelay {
		t.Fatalf("after 40 failures the next retry waits %s, want the cap %s", last, maxRetryDelay)
	}
	limiter.Forget(key)
	if d := limiter.When(key); d > 10*time.Millisecond {
		t.Fatalf("a route that succeeded starts again from %s, want milliseconds", d)
	}
}
