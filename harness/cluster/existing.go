package cluster

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TrustedContexts are kubeconfig contexts the harness created itself: the dev
// cluster (make cluster-up) and the kind cluster of scripts/kind-up.sh.
var TrustedContexts = []string{"gw10-dev", "kind-gw10"}

// CheckContext refuses a context the harness did not create, unless it is
// explicitly allowed: checks create and delete objects, and a learner's
// kubeconfig may well point at a cluster that matters.
func CheckContext(context string, allowed []string) error {
	if slices.Contains(TrustedContexts, context) || slices.Contains(allowed, context) {
		return nil
	}
	return fmt.Errorf("refusing to run the checks on kubeconfig context %q: the harness only touches clusters it created (%v); "+
		"if this cluster is yours to test on, pass --allow-context %s", context, TrustedContexts, context)
}

// ExistingBackend runs the checks on a cluster from a kubeconfig. It
// creates and labels what it needs and removes it again (see Stop).
type ExistingBackend struct {
	admin    *rest.Config
	identity *ServiceAccountIdentity
}

// NewExistingBackend loads the kubeconfig (KUBECONFIG or ~/.kube/config) and
// checks its context. An empty context means the current one.
func NewExistingBackend(kubeconfigContext string, allowed []string) (*ExistingBackend, error) {
	return NewExistingBackendAt("", kubeconfigContext, allowed)
}

// NewExistingBackendAt is NewExistingBackend with the kubeconfig file named
// (empty: KUBECONFIG or ~/.kube/config), for a caller that must not set the
// process's environment (parallel tests).
func NewExistingBackendAt(kubeconfig, kubeconfigContext string, allowed []string) (*ExistingBackend, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeconfigContext})
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	name := kubeconfigContext
	if name == "" {
		name = raw.CurrentContext
	}
	if name == "" {
		return nil, fmt.Errorf("the kubeconfig has no current context: start the dev cluster (make cluster-up) and export its KUBECONFIG")
	}
	if err := CheckContext(name, allowed); err != nil {
		return nil, err
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig context %s: %w", name, err)
	}
	return &ExistingBackend{admin: cfg}, nil
}

func (b *ExistingBackend) Name() string        { return "existing" }
func (b *ExistingBackend) Admin() *rest.Config { return b.admin }
func (b *ExistingBackend) Outlives() bool      { return true }

// ControllerIdentity is a ServiceAccount bound to the role, with a token
// from the TokenRequest API.
func (b *ExistingBackend) ControllerIdentity(ctx context.Context, c client.Client, role string) (*rest.Config, error) {
	id, cfg, err := NewServiceAccountIdentity(ctx, c, b.admin, role)
	b.identity = id
	return cfg, err
}

// Stop removes the controller's identity; the runner removes the rest.
func (b *ExistingBackend) Stop(ctx context.Context) error {
	if b.identity != nil {
		b.identity.Remove(ctx)
	}
	return nil
}
