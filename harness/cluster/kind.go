package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/yaml"
)

// KindConfigPath is the workbook's kind config, relative to its root.
const KindConfigPath = "scripts/kind-config.yaml"

// LoadKindConfig reads and checks a kind cluster config.
func LoadKindConfig(path string) (*v1alpha4.Cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading kind config: %w", err)
	}
	cfg := &v1alpha4.Cluster{}
	if err := yaml.UnmarshalStrict(data, cfg); err != nil {
		return nil, fmt.Errorf("parsing kind config %s: %w", path, err)
	}
	if cfg.Kind != "Cluster" || cfg.APIVersion != "kind.x-k8s.io/v1alpha4" {
		return nil, fmt.Errorf("%s: want kind Cluster, apiVersion kind.x-k8s.io/v1alpha4; got %s %s", path, cfg.Kind, cfg.APIVersion)
	}
	if !slices.ContainsFunc(cfg.Nodes, func(n v1alpha4.Node) bool { return n.Role == v1alpha4.ControlPlaneRole }) {
		return nil, fmt.Errorf("%s: no control-plane node", path)
	}
	return cfg, nil
}

// KindOptions configure the kind backend.
type KindOptions struct {
	Name       string // cluster name
	ConfigPath string
	Keep       bool // reuse an existing cluster and leave it running
	Progress   io.Writer
}

// KindBackend runs the checks on a kind cluster it creates (or reuses).
type KindBackend struct {
	opts     KindOptions
	provider *kindcluster.Provider
	admin    *rest.Config
	identity *serviceAccountIdentity
}

// kindCreateWait bounds waiting for the control plane to be ready.
const kindCreateWait = 3 * time.Minute

// NewKindBackend checks for a container engine first, so that a machine
// without one fails fast with a message instead of a traceback.
func NewKindBackend(ctx context.Context, opts KindOptions) (*KindBackend, error) {
	engine, err := FindEngine(ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := LoadKindConfig(opts.ConfigPath)
	if err != nil {
		return nil, err
	}
	providerOpt := kindcluster.ProviderWithDocker()
	if engine.Name == "podman" {
		providerOpt = kindcluster.ProviderWithPodman()
	}
	p := kindcluster.NewProvider(providerOpt)
	b := &KindBackend{opts: opts, provider: p}
	existing, err := p.List()
	if err != nil {
		return nil, fmt.Errorf("listing kind clusters: %w", err)
	}
	if slices.Contains(existing, opts.Name) {
		if !opts.Keep {
			return nil, fmt.Errorf("a kind cluster %q already exists; delete it (kind delete cluster --name %s) or pass --keep to reuse it", opts.Name, opts.Name)
		}
		fmt.Fprintf(opts.Progress, "reusing kind cluster %s\n", opts.Name)
	} else {
		fmt.Fprintf(opts.Progress, "creating kind cluster %s (%s; the node image is pulled on first use)\n", opts.Name, engine.Name)
		if err := p.Create(opts.Name, kindcluster.CreateWithV1Alpha4Config(cfg), kindcluster.CreateWithWaitForReady(kindCreateWait),
			kindcluster.CreateWithDisplayUsage(false), kindcluster.CreateWithDisplaySalutation(false)); err != nil {
			return nil, fmt.Errorf("creating kind cluster %s: %w", opts.Name, err)
		}
	}
	kc, err := p.KubeConfig(opts.Name, false)
	if err != nil {
		_ = b.Stop(ctx)
		return nil, fmt.Errorf("reading the kubeconfig of kind cluster %s: %w", opts.Name, err)
	}
	b.admin, err = clientcmd.RESTConfigFromKubeConfig([]byte(kc))
	if err != nil {
		_ = b.Stop(ctx)
		return nil, fmt.Errorf("parsing the kubeconfig of kind cluster %s: %w", opts.Name, err)
	}
	return b, nil
}

func (b *KindBackend) Name() string        { return "kind" }
func (b *KindBackend) Admin() *rest.Config { return b.admin }
func (b *KindBackend) Outlives() bool      { return b.opts.Keep }

// ControllerIdentity is a ServiceAccount bound to the role, with a token
// from the TokenRequest API.
func (b *KindBackend) ControllerIdentity(ctx context.Context, c client.Client, role string) (*rest.Config, error) {
	id, cfg, err := newServiceAccountIdentity(ctx, c, b.admin, role)
	b.identity = id
	return cfg, err
}

// Stop deletes the cluster unless it is kept.
func (b *KindBackend) Stop(ctx context.Context) error {
	if b.opts.Keep {
		if b.identity != nil {
			b.identity.remove(ctx)
		}
		return nil
	}
	if err := b.provider.Delete(b.opts.Name, ""); err != nil {
		return fmt.Errorf("deleting kind cluster %s: %w", b.opts.Name, err)
	}
	return nil
}
