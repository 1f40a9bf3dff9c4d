package controller

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	netv1 "github.com/10xdev/gw10/solutions/step01/api/v1"
	"github.com/10xdev/gw10/solutions/step01/internal/dataplane"
)

// A proxy that loses its routes while the controller runs
// (a restart with an empty table) gets them back without any change in the
// cluster; a route whose EdgeRoute is gone that appears meanwhile is withdrawn.
func TestRoutesTheProxyLostWhileTheControllerRunsArePushedAgain(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	a, waiting := newRoute(ns, "a", "svc"), newRoute(ns, "waiting", "absent")
	create(t, a, waiting, newService(ns, "svc"))
	dp := newFakeDataPlane()
	startManagerWith(t, &EdgeRouteReconciler{Programmer: dp, DriftPeriod: 200 * time.Millisecond})
	g.Eventually(func(g Gomega) {
		expectCondition(g, get(t, a), netv1.ConditionProgrammed, metav1.ConditionTrue, netv1.ReasonSynced)
		expectCondition(g, get(t, waiting), netv1.ConditionAccepted, metav1.ConditionFalse, netv1.ReasonServiceNotFound)
	}, eventually, poll).Should(Succeed())

	orphan := types.NamespacedName{Namespace: ns, Name: "appeared-while-running"}
	dp.mu.Lock()
	dp.routes = map[types.NamespacedName]dataplane.Route{orphan: {Hostname: "old.example.com", Prefix: "/", Service: "svc", Port: 8080}}
	dp.mu.Unlock()

	g.Eventually(func(g Gomega) {
		_, held := dp.route(client.ObjectKeyFromObject(a))
		g.Expect(held).To(BeTrue(), "the route the proxy lost was not pushed again")
		_, held = dp.route(orphan)
		g.Expect(held).To(BeFalse(), "the route whose EdgeRoute does not exist is still in the proxy")
	}, eventually, poll).Should(Succeed())
	_, held := dp.route(client.ObjectKeyFromObject(waiting))
	g.Expect(held).To(BeFalse(), "a route waiting for its Service was pushed")
}

// With --namespaces, the proxy may hold routes of namespaces the controller
// does not watch (another shard's): they stay, and the orphans of the watched
// namespaces are still withdrawn.
func TestTheSweepWithdrawsOrphansAmongRoutesOfUnwatchedNamespaces(t *testing.T) {
	g := NewWithT(t)
	ns, other := newNamespace(t), newNamespace(t)
	kept := newRoute(ns, "kept", "svc")
	create(t, kept, newService(ns, "svc"))
	dp := newFakeDataPlane()
	orphan := types.NamespacedName{Namespace: ns, Name: "deleted-while-stopped"}
	foreign := types.NamespacedName{Namespace: other, Name: "another-shards"}
	for _, k := range []types.NamespacedName{orphan, foreign} {
		dp.routes[k] = dataplane.Route{Hostname: "old.example.com", Prefix: "/", Service: "svc", Port: 8080}
	}

	startManagerWith(t, &EdgeRouteReconciler{Programmer: dp, Namespaces: []string{ns}})
	g.Eventually(func(g Gomega) {
		_, held := dp.route(orphan)
		g.Expect(held).To(BeFalse(), "the orphan of the watched namespace is still in the data plane")
		expectCondition(g, get(t, kept), netv1.ConditionProgrammed, metav1.ConditionTrue, netv1.ReasonSynced)
	}, eventually, poll).Should(Succeed())
	_, held := dp.route(foreign)
	g.Expect(held).To(BeTrue(), "the route of an unwatched namespace was withdrawn")
}

// A key the cache cannot answer for is skipped, not fatal to the sweep.
func TestOrphansSkipsKeysItCannotReadAndReturnsTheRest(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	dp := newFakeDataPlane()
	orphan := types.NamespacedName{Namespace: ns, Name: "gone"}
	unreadable := types.NamespacedName{Namespace: ns, Name: "Not_A_Valid-Name"}
	for _, k := range []types.NamespacedName{orphan, unreadable} {
		dp.routes[k] = dataplane.Route{}
	}
	r := &EdgeRouteReconciler{Client: failingGet{Client: k8sClient, key: unreadable}, Programmer: dp}
	got, err := r.orphans(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(ConsistOf(orphan))
}

// failingGet fails every Get of key.
type failingGet struct {
	client.Client
	key types.NamespacedName
}

func (f failingGet) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if key == f.key {
		return context.DeadlineExceeded
	}
	return f.Client.Get(ctx, key, obj, opts...)
}

// The queue's per-item backoff is capped, so a route that failed through a
// long outage is retried soon after the proxy is back.
func TestRetryBackoffIsCapped(t *testing.T) {
	l := retryLimiter()
	item := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "r"}}
	var d time.Duration
	for range 40 {
		d = l.When(item)
	}
	if d != maxRetryDelay {
		t.Fatalf("after 40 failures the delay is %v, want the cap %v", d, maxRetryDelay)
	}
}
