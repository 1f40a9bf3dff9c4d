package runner

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestACleanupKindWithoutDeleteCollectionIsDeletedOneByOne: the runner
// deletes the step's Cleanup kinds, not Services by name; a kind the API
// serves no deletecollection for (Services) goes one object at a time, and
// only the check's namespace is touched.
func TestACleanupKindWithoutDeleteCollectionIsDeletedOneByOne(t *testing.T) {
	svc := func(ns, name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "check", Name: "c"}}
	collections := 0
	c := fake.NewClientBuilder().WithObjects(svc("check", "a"), svc("check", "b"), svc("other", "a"), cm).
		WithInterceptorFuncs(interceptor.Funcs{DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			if obj.GetObjectKind().GroupVersionKind().Kind == "Service" {
				return apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "services"}, "deletecollection")
			}
			collections++
			return c.DeleteAllOf(ctx, obj, opts...)
		}}).Build()
	ctx := context.Background()
	for _, kind := range []string{"Service", "ConfigMap"} {
		deleteAllOf(ctx, c, schema.GroupVersionKind{Version: "v1", Kind: kind}, "check")
	}
	left := &corev1.ServiceList{}
	if err := c.List(ctx, left); err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 1 || left.Items[0].Namespace != "other" {
		t.Errorf("want only the other namespace's Service left, got %v", left.Items)
	}
	cms := &corev1.ConfigMapList{}
	if err := c.List(ctx, cms, client.InNamespace("check")); err != nil || len(cms.Items) != 0 || collections != 1 {
		t.Errorf("the ConfigMaps go in one request: %d left, %d collection deletes (%v)", len(cms.Items), collections, err)
	}
}
