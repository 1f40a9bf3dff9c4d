package cluster

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SystemNamespace holds the controller's ServiceAccount on kind and existing clusters.
const SystemNamespace = "gw10-system"

// tokenLifetime is the life of the controller's token: longer than any run.
const tokenLifetime = 2 * time.Hour

// ServiceAccountIdentity is what NewServiceAccountIdentity created, to Remove it again.
type ServiceAccountIdentity struct {
	c         client.Client
	createdNS bool
}

// NewServiceAccountIdentity (the kind and existing backends' identity)
// creates the ServiceAccount gw10-controller in gw10-system, binds role to it (nothing else), and returns a config that
// authenticates with a token from the TokenRequest API.
func NewServiceAccountIdentity(ctx context.Context, c client.Client, admin *rest.Config, role string) (*ServiceAccountIdentity, *rest.Config, error) {
	id := &ServiceAccountIdentity{c: c}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: SystemNamespace, Labels: map[string]string{ManagedLabel: "true"}}}
	switch err := c.Create(ctx, ns); {
	case err == nil:
		id.createdNS = true
	case !apierrors.IsAlreadyExists(err):
		return id, nil, fmt.Errorf("creating namespace %s: %w", SystemNamespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: SystemNamespace, Name: ControllerUser, Labels: map[string]string{ManagedLabel: "true"}}}
	if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return id, nil, fmt.Errorf("creating ServiceAccount %s/%s: %w", SystemNamespace, ControllerUser, err)
	}
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: SystemNamespace, Name: ControllerUser}
	if err := BindClusterRole(ctx, c, role, subject); err != nil {
		return id, nil, err
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(tokenLifetime.Seconds()))}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		return id, nil, fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", SystemNamespace, ControllerUser, err)
	}
	cfg := &rest.Config{
		Host:            admin.Host,
		BearerToken:     tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData, CAFile: admin.CAFile, ServerName: admin.ServerName, Insecure: admin.Insecure},
	}
	return id, cfg, nil
}

// Remove deletes the binding, the ServiceAccount and, if it created it, the namespace.
func (id *ServiceAccountIdentity) Remove(ctx context.Context) {
	_ = id.c.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "gw10-controller"}})
	_ = id.c.Delete(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: SystemNamespace, Name: ControllerUser}})
	if id.createdNS {
		DeleteNamespace(ctx, id.c, SystemNamespace)
	}
}

func ptrTo[T any](v T) *T { return &v }
