package cluster

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// namespaceGrace is how long a deleted namespace may take to go away before
// the harness concludes no namespace controller is there to finish it.
const namespaceGrace = 10 * time.Second

// DeleteNamespace deletes a namespace whose content the harness already removed
// and waits until it is gone (see FinishNamespaces).
func DeleteNamespace(ctx context.Context, c client.Client, name string) {
	_ = c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	FinishNamespaces(ctx, c, []string{name})
}

// FinishNamespaces waits for deleted namespaces to disappear. A cluster
// without a namespace controller (envtest, the dev cluster) leaves them
// Terminating forever; after namespaceGrace the harness clears their
// finalizer itself, which is what that controller would do once the
// namespace is empty (the harness deleted what it created in them).
func FinishNamespaces(ctx context.Context, c client.Client, names []string) {
	deadline := time.Now().Add(namespaceGrace)
	pending := names
	for len(pending) > 0 && time.Now().Before(deadline) {
		pending = stillThere(ctx, c, pending)
		if len(pending) > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	for _, name := range pending {
		var ns corev1.Namespace
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &ns); err != nil || ns.DeletionTimestamp == nil {
			continue
		}
		ns.Spec.Finalizers = nil
		_ = c.SubResource("finalize").Update(ctx, &ns)
	}
}

func stillThere(ctx context.Context, c client.Client, names []string) []string {
	var out []string
	for _, name := range names {
		var ns corev1.Namespace
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &ns); !apierrors.IsNotFound(err) {
			out = append(out, name)
		}
	}
	return out
}
