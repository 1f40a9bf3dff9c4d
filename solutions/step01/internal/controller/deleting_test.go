package controller

import (
	"context"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/10xdev/gw10/solutions/step01/api/v1"
)

// foreignFinalizer is another controller's finalizer: it holds a deleted
// EdgeRoute (deletionTimestamp set) for as long as the test wants.
const foreignFinalizer = "example.com/keep"

// pushCounting counts the pushes of the data plane it wraps.
type pushCounting struct {
	*fakeDataPlane
	mu     sync.Mutex
	pushes int
}

func (p *pushCounting) Program(ctx context.Context, er *netv1.EdgeRoute) error {
	p.mu.Lock()
	p.pushes++
	p.mu.Unlock()
	return p.fakeDataPlane.Program(ctx, er)
}

func (p *pushCounting) pushCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pushes
}

// deleteHeld creates er (held by foreignFinalizer) with its Service,
// reconciles it once with r, then deletes it: it stays, being deleted.
func deleteHeld(t *testing.T, g Gomega, r *EdgeRouteReconciler, er *netv1.EdgeRoute) {
	t.Helper()
	er.Finalizers = []string{foreignFinalizer}
	create(t, er, newService(er.Namespace, er.Spec.Service))
	t.Cleanup(func() {
		var cur netv1.EdgeRoute
		if k8sClient.Get(context.Background(), client.ObjectKeyFromObject(er), &cur) == nil {
			cur.Finalizers = nil
			_ = k8sClient.Update(context.Background(), &cur)
		}
	})
	_, err := reconcileOnce(t, r, er)
	g.Expect(err).NotTo(HaveOccurred())
	expectCondition(g, get(t, er), netv1.ConditionProgrammed, metav1.ConditionTrue, netv1.ReasonSynced)
	g.Expect(k8sClient.Delete(context.Background(), er)).To(Succeed())
	g.Expect(get(t, er).DeletionTimestamp.IsZero()).To(BeFalse(), "the finalizer should hold the deleted EdgeRoute")
}

// An EdgeRoute being deleted (another controller's finalizer holds it) is
// on its way out: its route is withdrawn, never pushed again, and its
// status says so rather than Programmed=True.
func TestAnEdgeRouteBeingDeletedIsWithdrawnAndNotProgrammed(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	dp := &pushCounting{fakeDataPlane: newFakeDataPlane()}
	r := &EdgeRouteReconciler{Client: k8sClient, Programmer: dp}
	er := newRoute(ns, "web", "web")
	deleteHeld(t, g, r, er)
	pushed := dp.pushCount()

	for range 2 { // a second pass changes nothing
		_, err := reconcileOnce(t, r, er)
		g.Expect(err).NotTo(HaveOccurred())
		got := get(t, er)
		expectCondition(g, got, netv1.ConditionAccepted, metav1.ConditionTrue, netv1.ReasonValid)
		expectCondition(g, got, netv1.ConditionProgrammed, metav1.ConditionFalse, netv1.ReasonDeleting)
		g.Expect(meta.FindStatusCondition(got.Status.Conditions, netv1.ConditionProgrammed).Message).To(ContainSubstring("withdrawn"))
		_, present := dp.route(client.ObjectKeyFromObject(er))
		g.Expect(present).To(BeFalse(), "the route of an EdgeRoute being deleted is still in the data plane")
		g.Expect(dp.pushCount()).To(Equal(pushed), "an EdgeRoute being deleted was pushed")
	}
}

// When the withdraw of an EdgeRoute being deleted fails, its status says
// the route may still be served, and the error goes back to the queue.
func TestAnEdgeRouteBeingDeletedWhoseWithdrawFailsDoesNotSayWithdrawn(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	dp := newFakeDataPlane()
	er := newRoute(ns, "web", "web")
	deleteHeld(t, g, &EdgeRouteReconciler{Client: k8sClient, Programmer: dp}, er)

	_, err := reconcileOnce(t, &EdgeRouteReconciler{Client: k8sClient, Programmer: failingRemove{dp}}, er)
	g.Expect(err).To(MatchError(ContainSubstring("proxy restarting")), "a failed withdraw must be retried")
	got := get(t, er)
	expectCondition(g, got, netv1.ConditionProgrammed, metav1.ConditionFalse, netv1.ReasonDeleting)
	msg := meta.FindStatusCondition(got.Status.Conditions, netv1.ConditionProgrammed).Message
	g.Expect(msg).NotTo(ContainSubstring("withdrawn"))
	g.Expect(msg).To(ContainSubstring("data plane unreachable"))
	_, present := dp.route(client.ObjectKeyFromObject(er))
	g.Expect(present).To(BeTrue(), "the fake's withdraw failed, so it still holds the route")
}
