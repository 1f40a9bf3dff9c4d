package cluster

import (
	"context"
	"fmt"
	"io"
	"os"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Backend is a cluster the harness runs checks on.
type Backend interface {
	// Name is envtest, kind or existing.
	Name() string
	// Admin is the harness's own identity.
	Admin() *rest.Config
	// ControllerIdentity returns the identity the learner's controller runs
	// as: bound to the ClusterRole named role and to nothing else.
	ControllerIdentity(ctx context.Context, c client.Client, role string) (*rest.Config, error)
	// Stop releases what the backend created.
	Stop(ctx context.Context) error
	// Outlives reports that the cluster outlives the run, so the run must
	// leave it as it found it.
	Outlives() bool
}

// ControllerUser is the name of the controller's identity.
const ControllerUser = "gw10-controller"

// EnvtestBackend runs the checks on an envtest control plane it owns.
type EnvtestBackend struct {
	cp *Envtest
}

// NewEnvtestBackend starts a control plane with its state under dir.
func NewEnvtestBackend(ctx context.Context, dir string, progress io.Writer) (*EnvtestBackend, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	cp, err := StartEnvtest(ctx, dir, progress)
	if err != nil {
		return nil, err
	}
	return &EnvtestBackend{cp: cp}, nil
}

func (b *EnvtestBackend) Name() string        { return "envtest" }
func (b *EnvtestBackend) Admin() *rest.Config { return b.cp.Config }
func (b *EnvtestBackend) Outlives() bool      { return false }
func (b *EnvtestBackend) Stop(context.Context) error {
	return b.cp.Stop()
}

// ControllerIdentity adds a client-certificate user (no rights of its own)
// and binds the role to it.
func (b *EnvtestBackend) ControllerIdentity(ctx context.Context, c client.Client, role string) (*rest.Config, error) {
	cfg, err := b.cp.AddUser(ControllerUser)
	if err != nil {
		return nil, err
	}
	subject := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: ControllerUser}
	if err := BindClusterRole(ctx, c, role, subject); err != nil {
		return nil, err
	}
	return cfg, nil
}

// BindClusterRole binds role to subject (and to nothing else), replacing an
// earlier binding of the harness.
func BindClusterRole(ctx context.Context, c client.Client, role string, subject rbacv1.Subject) error {
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "gw10-controller", Labels: map[string]string{ManagedLabel: "true"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{subject},
	}
	err := c.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: binding.Name}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("replacing ClusterRoleBinding %s: %w", binding.Name, err)
	}
	if err := c.Create(ctx, binding); err != nil {
		return fmt.Errorf("binding ClusterRole %s to %s: %w", role, subject.Name, err)
	}
	return nil
}

// ManagedLabel marks what the harness created, so it can find and remove it.
const ManagedLabel = "gw10.10xdev.io/managed"
