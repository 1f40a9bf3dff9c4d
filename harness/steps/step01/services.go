package step01

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/evidence"
)

// Step 01's own triggers (Step.Triggers): what its checks do to the
// Services its routes name, which its causes read (noReconcile, didNothing).
const (
	ServiceCreated evidence.Trigger = "service-created"
	ServiceDeleted evidence.Trigger = "service-deleted"
	ServiceTouched evidence.Trigger = "service-touched" // a change that matters to no route
)

// createService creates Service name in the check's namespace: the kind
// step 01's routes name, and watch (Step.Watched).
func createService(ctx context.Context, t *checks.T, name string) {
	createServiceIn(ctx, t, t.Namespace, name)
}

// createServiceIn creates Service name in namespace ns.
func createServiceIn(ctx context.Context, t *checks.T, ns, name string) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8080}}},
	}
	t.Did(ServiceCreated, "Service "+ns+"/"+name, "creating Service %s", t.ShortName(ns, name))
	t.Must(t.Client.Create(ctx, svc), "creating Service %s/%s", ns, name)
}

// deleteService deletes Service name in the check's namespace.
func deleteService(ctx context.Context, t *checks.T, name string) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: name}}
	t.Did(ServiceDeleted, "Service "+t.Namespace+"/"+name, "deleting Service %s", name)
	t.Must(t.Client.Delete(ctx, svc), "deleting Service %s/%s", t.Namespace, name)
}
