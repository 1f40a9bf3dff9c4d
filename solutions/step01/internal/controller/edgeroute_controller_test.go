package controller

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	netv1 "github.com/10xdev/gw10/solutions/step01/api/v1"
	"github.com/10xdev/gw10/solutions/step01/internal/dataplane"
)

const (
	eventually = 30 * time.Second // generous: CI machines are slow and shared
	poll       = 100 * time.Millisecond
)

func newRoute(ns, name, service string) *netv1.EdgeRoute {
	return &netv1.EdgeRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       netv1.EdgeRouteSpec{Hostname: "shop.example.com", Prefix: "/", Service: service, Port: 8080},
	}
}

func newService(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8080}}},
	}
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := k8sClient.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// reconcileOnce runs one pass of Reconcile with a direct client.
func reconcileOnce(t *testing.T, r *EdgeRouteReconciler, er *netv1.EdgeRoute) (ctrl.Result, error) {
	t.Helper()
	return r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(er)})
}

func get(t *testing.T, er *netv1.EdgeRoute) *netv1.EdgeRoute {
	t.Helper()
	var got netv1.EdgeRoute
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(er), &got); err != nil {
		t.Fatalf("getting EdgeRoute %s: %v", er.Name, err)
	}
	return &got
}

// expectCondition asserts one condition and that it describes the current generation.
func expectCondition(g Gomega, er *netv1.EdgeRoute, typ string, status metav1.ConditionStatus, reason string) {
	c := meta.FindStatusCondition(er.Status.Conditions, typ)
	g.Expect(c).NotTo(BeNil(), "EdgeRoute %s has no %s condition: %+v", er.Name, typ, er.Status.Conditions)
	g.Expect(c.Status).To(Equal(status), "EdgeRoute %s %s status (reason %s: %s)", er.Name, typ, c.Reason, c.Message)
	g.Expect(c.Reason).To(Equal(reason), "EdgeRoute %s %s reason", er.Name, typ)
	g.Expect(c.ObservedGeneration).To(Equal(er.Generation), "EdgeRoute %s %s observedGeneration", er.Name, typ)
}

// Status contract, row 1; seed defect 4 (Programmed left stale).
func TestMissingServiceIsNotAcceptedAndItsRouteIsWithdrawn(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	dp := newFakeDataPlane()
	r := &EdgeRouteReconciler{Client: k8sClient, Programmer: dp}
	er := newRoute(ns, "web", "web")
	svc := newService(ns, "web")
	create(t, er, svc)

	_, err := reconcileOnce(t, r, er)
	g.Expect(err).NotTo(HaveOccurred())
	expectCondition(g, get(t, er), netv1.ConditionProgrammed, metav1.ConditionTrue, netv1.ReasonSynced)

	g.Expect(k8sClient.Delete(context.Background(), svc)).To(Succeed())
	_, err = reconcileOnce(t, r, er)
	g.Expect(err).NotTo(HaveOccurred())
	got := get(t, er)
	expectCondition(g, got, netv1.ConditionAccepted, metav1.ConditionFalse, netv1.ReasonServiceNotFound)
	expectCondition(g, got, netv1.ConditionProgrammed, metav1.ConditionFalse, netv1.ReasonNotAccepted)
	_, present := dp.route(client.ObjectKeyFromObject(er))
	g.Expect(present).To(BeFalse(), "the route of an EdgeRoute without Service is still in the data plane")
}

// Status contract, row 2.
func TestACKedPushIsAcceptedAndProgrammed(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	dp := newFakeDataPlane()
	r := &EdgeRouteReconciler{Client: k8sClient, Programmer: dp}
	er := newRoute(ns, "web", "web")
	create(t, er, newService(ns, "web"))

	res, err := reconcileOnce(t, r, er)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(ctrl.Result{}))
	got := get(t, er)
	expectCondition(g, got, netv1.ConditionAccepted, metav1.ConditionTrue, netv1.ReasonValid)
	expectCondition(g, got, netv1.ConditionProgrammed, metav1.ConditionTrue, netv1.ReasonSynced)
	route, ok := dp.route(client.ObjectKeyFromObject(er))
	g.Expect(ok).To(BeTrue(), "no route was pushed")
	g.Expect(route.Port).To(Equal(int32(8080)))
	g.Expect(route.Generation).To(Equal(got.Generation))
}

// Status contract, row 3; seed defect 5 (no Requeue: true, errors back off).
func TestNACKedPushIsReportedAsPushFailedAndRetried(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	dp := newFakeDataPlane()
	dp.setNACK("port 8080 is reserved")
	r := &EdgeRouteReconciler{Client: k8sClient, Programmer: dp}
	er := newRoute(ns, "web", "web")
	create(t, er, newService(ns, "web"))

	res, err := reconcileOnce(t, r, er)
	g.Expect(err).To(MatchError(ContainSubstring("port 8080 is reserved")), "a NACK must be returned so the queue retries with backoff")
	g.Expect(res).To(Equal(ctrl.Result{}), "never return a Result together with an error")
	got := get(t, er)
	expectCondition(g, got, netv1.ConditionAccepted, metav1.ConditionTrue, netv1.ReasonValid)
	expectCondition(g, got, netv1.ConditionProgrammed, metav1.ConditionFalse, netv1.ReasonPushFailed)
	g.Expect(meta.FindStatusCondition(got.Status.Conditions, netv1.ConditionProgrammed).Message).To(ContainSubstring("port 8080 is reserved"))
}

// Status contract, row 4; seed defect 6 (deleted EdgeRoute never withdrawn).
func TestDeletedEdgeRouteIsWithdrawn(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	dp := newFakeDataPlane()
	r := &EdgeRouteReconciler{Client: k8sClient, Programmer: dp}
	er := newRoute(ns, "web", "web")
	create(t, er, newService(ns, "web"))
	_, err := reconcileOnce(t, r, er)
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(k8sClient.Delete(context.Background(), er)).To(Succeed())
	_, err = reconcileOnce(t, r, er)
	g.Expect(err).NotTo(HaveOccurred())
	_, present := dp.route(client.ObjectKeyFromObject(er))
	g.Expect(present).To(BeFalse(), "the deleted EdgeRoute's route is still in the data plane")
}

// Status contract, row 5; seed defect 2 (read errors ignored, route programmed anyway).
func TestServiceReadErrorChangesNothing(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	dp := newFakeDataPlane()
	er := newRoute(ns, "web", "web")
	create(t, er, newService(ns, "web"))
	failing := interceptor.NewClient(k8sClient, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Service); ok {
				return apierrors.NewServiceUnavailable("etcd is having a bad day")
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	r := &EdgeRouteReconciler{Client: failing, Programmer: dp}

	_, err := reconcileOnce(t, r, er)
	g.Expect(err).To(MatchError(ContainSubstring("bad day")))
	g.Expect(dp.callCount()).To(BeZero(), "the data plane was touched although the Service could not be read")
	g.Expect(get(t, er).Status.Conditions).To(BeEmpty(), "status was written although nothing was observed")
}

// Seed defect 3: two status updates per pass, and writes when nothing changed.
func TestOneStatusWritePerPassAndNoneWhenConverged(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	writes := 0
	counting := interceptor.NewClient(k8sClient, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			writes++
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	r := &EdgeRouteReconciler{Client: counting, Programmer: newFakeDataPlane()}
	er := newRoute(ns, "web", "web")
	create(t, er, newService(ns, "web"))

	_, err := reconcileOnce(t, r, er)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(writes).To(Equal(1), "status writes in the first pass")

	// Move every LastTransitionTime an hour back (through the uncounted
	// client): a pass that restamps timestamps it did not need to change
	// would now write, without this test sleeping for the clock to tick.
	past := get(t, er)
	for i := range past.Status.Conditions {
		past.Status.Conditions[i].LastTransitionTime = metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	}
	g.Expect(k8sClient.Status().Update(context.Background(), past)).To(Succeed())
	rv := get(t, er).ResourceVersion

	_, err = reconcileOnce(t, r, er)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(writes).To(Equal(1), "a converged pass wrote the status again")
	g.Expect(get(t, er).ResourceVersion).To(Equal(rv))
}

// Seed defect 1: Owns() never sees a Service the user creates, so nothing
// self-heals; the Service watch through the index must.
func TestSelfHealsWhenTheServiceAppears(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	dp := newFakeDataPlane()
	startManager(t, dp)
	er := newRoute(ns, "web", "web")
	create(t, er)

	g.Eventually(func(g Gomega) {
		expectCondition(g, get(t, er), netv1.ConditionAccepted, metav1.ConditionFalse, netv1.ReasonServiceNotFound)
	}, eventually, poll).Should(Succeed(), "EdgeRoute web should be Accepted=False/ServiceNotFound")
	generation := get(t, er).Generation

	create(t, newService(ns, "web"))
	g.Eventually(func(g Gomega) {
		got := get(t, er)
		expectCondition(g, got, netv1.ConditionAccepted, metav1.ConditionTrue, netv1.ReasonValid)
		expectCondition(g, got, netv1.ConditionProgrammed, metav1.ConditionTrue, netv1.ReasonSynced)
	}, eventually, poll).Should(Succeed(), "EdgeRoute web should self-heal once its Service exists")
	g.Expect(get(t, er).Generation).To(Equal(generation), "the EdgeRoute's spec was changed")

	// A Service of the same name in another namespace must not matter.
	other := newNamespace(t)
	create(t, newRoute(other, "web", "web"))
	g.Eventually(func(g Gomega) {
		expectCondition(g, get(t, newRoute(other, "web", "")), netv1.ConditionAccepted, metav1.ConditionFalse, netv1.ReasonServiceNotFound)
	}, eventually, poll).Should(Succeed())
}

// Card task 3: a fresh controller converges every existing EdgeRoute with no event.
func TestANewControllerReconvergesExistingRoutes(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	withService, without := newRoute(ns, "a", "svc-a"), newRoute(ns, "b", "svc-b")
	create(t, withService, without, newService(ns, "svc-a"))

	dp := newFakeDataPlane()
	startManager(t, dp)
	g.Eventually(func(g Gomega) {
		expectCondition(g, get(t, withService), netv1.ConditionProgrammed, metav1.ConditionTrue, netv1.ReasonSynced)
		expectCondition(g, get(t, without), netv1.ConditionAccepted, metav1.ConditionFalse, netv1.ReasonServiceNotFound)
		_, ok := dp.route(client.ObjectKeyFromObject(withService))
		g.Expect(ok).To(BeTrue(), "route a is not in the data plane")
	}, eventually, poll).Should(Succeed())
}

// Card task 3, deletion while stopped: a route whose EdgeRoute was deleted
// while no controller ran is withdrawn when one starts; the others stay.
func TestANewControllerWithdrawsRoutesOfEdgeRoutesDeletedWhileItWasStopped(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	kept := newRoute(ns, "kept", "svc")
	create(t, kept, newService(ns, "svc"))
	dp := newFakeDataPlane()
	orphan := types.NamespacedName{Namespace: ns, Name: "deleted-while-stopped"}
	dp.routes[orphan] = dataplane.Route{Hostname: "old.example.com", Prefix: "/", Service: "svc", Port: 8080}
	dp.routes[client.ObjectKeyFromObject(kept)] = dataplane.RouteFor(kept)

	startManager(t, dp)
	g.Eventually(func(g Gomega) {
		_, held := dp.route(orphan)
		g.Expect(held).To(BeFalse(), "the route of the EdgeRoute deleted while the controller was stopped is still in the data plane")
		expectCondition(g, get(t, kept), netv1.ConditionProgrammed, metav1.ConditionTrue, netv1.ReasonSynced)
		_, held = dp.route(client.ObjectKeyFromObject(kept))
		g.Expect(held).To(BeTrue(), "the route of an EdgeRoute that exists was withdrawn")
	}, eventually, poll).Should(Succeed())
}

// A withdraw that fails still writes the status it computed, then returns
// the error so that the queue retries the withdraw.
func TestFailedWithdrawStillWritesTheStatus(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	er := newRoute(ns, "web", "absent")
	create(t, er)
	r := &EdgeRouteReconciler{Client: k8sClient, Programmer: failingRemove{newFakeDataPlane()}}
	_, err := reconcileOnce(t, r, er)
	g.Expect(err).To(MatchError(ContainSubstring("proxy restarting")))
	expectCondition(g, get(t, er), netv1.ConditionAccepted, metav1.ConditionFalse, netv1.ReasonServiceNotFound)
	got := get(t, er)
	expectCondition(g, got, netv1.ConditionProgrammed, metav1.ConditionFalse, netv1.ReasonNotAccepted)
	msg := meta.FindStatusCondition(got.Status.Conditions, netv1.ConditionProgrammed).Message
	g.Expect(msg).NotTo(ContainSubstring("withdrawn"), "the withdraw failed: the route may still be served")
	g.Expect(msg).To(ContainSubstring("data plane unreachable"))
}

// failingRemove is a data plane whose withdraws fail.
type failingRemove struct{ *fakeDataPlane }

func (failingRemove) Remove(context.Context, types.NamespacedName) error {
	return errors.New("proxy restarting")
}

// Seed defect 7: the RBAC marker for Services.
func TestRoleAllowsReadingAndWatchingServices(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatalf("reading the generated role (run make manifests): %v", err)
	}
	var role struct {
		Rules []struct {
			APIGroups []string `json:"apiGroups"`
			Resources []string `json:"resources"`
			Verbs     []string `json:"verbs"`
		} `json:"rules"`
	}
	if err := yaml.Unmarshal(data, &role); err != nil {
		t.Fatalf("parsing role.yaml: %v", err)
	}
	for _, rule := range role.Rules {
		if strings.Join(rule.APIGroups, ",") == "" && strings.Join(rule.Resources, ",") == "services" &&
			strings.Join(rule.Verbs, ",") == "get,list,watch" {
			return
		}
	}
	t.Fatalf("config/rbac/role.yaml grants no get/list/watch on services:\n%s", data)
}

// invalidSpecsTable is the table of invalid specs the harness's crd-schema
// check uses too: one table, so the two never drift.
var invalidSpecsTable = filepath.Join("..", "..", "..", "..", "harness", "steps", "step01", "invalid-specs.yaml")

// Seed defect 7 (no validation): the API server rejects every invalid spec
// of the shared table, with a message naming the field.
func TestSchemaRejectsInvalidSpecs(t *testing.T) {
	data, err := os.ReadFile(invalidSpecsTable)
	if err != nil {
		t.Fatalf("reading the shared table: %v", err)
	}
	var rows []map[string]any
	if err := yaml.Unmarshal(data, &rows); err != nil {
		t.Fatalf("parsing %s: %v", invalidSpecsTable, err)
	}
	if len(rows) < 20 {
		t.Fatalf("the table has %d rows, want at least 20", len(rows))
	}
	ns := newNamespace(t)
	for _, row := range rows {
		name, _ := row["name"].(string)
		field, _ := row["field"].(string)
		t.Run(name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "net.10xdev.io/v1", "kind": "EdgeRoute",
				"metadata": map[string]any{"namespace": ns, "name": "bad"},
				"spec":     map[string]any{"hostname": "shop.example.com", "prefix": "/api", "service": "web", "port": int64(8080)},
			}}
			if spec, replace := row["spec"]; replace {
				if spec == nil {
					delete(obj.Object, "spec")
				} else {
					obj.Object["spec"] = spec
				}
			}
			set, _ := row["set"].(map[string]any)
			for k, v := range set {
				spec := obj.Object["spec"].(map[string]any)
				if v == nil {
					delete(spec, k)
				} else {
					spec[k] = v
				}
			}
			err := k8sClient.Create(context.Background(), obj)
			if err == nil {
				_ = k8sClient.Delete(context.Background(), obj)
				t.Fatalf("the API server accepted an EdgeRoute with %s", name)
			}
			if (!apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err)) || !strings.Contains(err.Error(), field) {
				t.Fatalf("want an Invalid error naming %s, got %v", field, err)
			}
		})
	}
	valid := newRoute(ns, "good", "web")
	if err := k8sClient.Create(context.Background(), valid); err != nil {
		t.Fatalf("a valid EdgeRoute was rejected: %v", err)
	}
}

// startManager runs the controller in-process, as main.go wires it, until the test ends.
func startManager(t *testing.T, dp *fakeDataPlane) {
	t.Helper()
	startManagerWith(t, dp, func(*ctrl.Options) {})
}

// startManagerWith starts a manager whose options edit changed (its cache's
// namespaces, as cmd/main.go's --namespaces sets them).
func startManagerWith(t *testing.T, dp *fakeDataPlane, edit func(*ctrl.Options)) {
	t.Helper()
	startReconciler(t, &EdgeRouteReconciler{Programmer: dp}, edit)
}

// startReconciler runs r in a manager whose options edit changed.
func startReconciler(t *testing.T, r *EdgeRouteReconciler, edit func(*ctrl.Options)) {
	t.Helper()
	opts := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)}, // one manager per test
	}
	edit(&opts)
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.Client = mgr.GetClient()
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		cancel()
		t.Fatalf("setting up the controller: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with: %v", err)
		}
	})
}
