package controller

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	startReconciler(t, &EdgeRouteReconciler{Programmer: dp, DriftPeriod: 200 * time.Millisecond}, func(*ctrl.Options) {})
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

// listingCount counts the proxy's listings (GET /v1/routes).
type listingCount struct {
	*fakeDataPlane
	n atomic.Int32
}

func (l *listingCount) Routes(ctx context.Context) ([]types.NamespacedName, error) {
	l.n.Add(1)
	return l.fakeDataPlane.Routes(ctx)
}

// A look at the data plane is one listing: the harness's quiet windows
// tolerate a listing now and then, not two at a time.
func TestALookAtTheDataPlaneListsItOnce(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	dp := &listingCount{fakeDataPlane: newFakeDataPlane()}
	dp.routes[types.NamespacedName{Namespace: ns, Name: "gone"}] = dataplane.Route{}
	r := &EdgeRouteReconciler{Client: k8sClient, Programmer: dp}
	keys, err := r.drifted(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keys).To(ContainElement(types.NamespacedName{Namespace: ns, Name: "gone"}))
	g.Expect(dp.n.Load()).To(Equal(int32(1)), "listings of the proxy in one look")
}
