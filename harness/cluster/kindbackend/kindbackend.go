// Package kindbackend runs the checks on a kind cluster (make check
// CLUSTER=kind). It is a package of its own so that the checking build of
// gw10 (bin/gw10, built with -tags gw10checkonly) does not link kind's
// libraries; bin/gw10-full does.
package kindbackend

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	kindexec "sigs.k8s.io/kind/pkg/exec"
	kindlog "sigs.k8s.io/kind/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/kindimage"
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
	// Image is the node image; empty: kind's default where the engine has
	// it or a registry serves it, else the workbook's locally built image
	// (kindimage.NodeImage).
	Image    string
	Progress io.Writer
}

// KindBackend runs the checks on a kind cluster it creates (or reuses).
type KindBackend struct {
	opts     KindOptions
	provider *kindcluster.Provider
	admin    *rest.Config
	identity *cluster.ServiceAccountIdentity
}

// kindCreateWait bounds waiting for the control plane to be ready (a busy
// 2-core machine needs minutes).
const kindCreateWait = 5 * time.Minute

// NewKindBackend checks for a container engine first, so that a machine
// without one fails fast with a message instead of a traceback.
func NewKindBackend(ctx context.Context, opts KindOptions) (*KindBackend, error) {
	engine, err := cluster.FindEngine(ctx)
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
	p := kindcluster.NewProvider(providerOpt, kindcluster.ProviderWithLogger(kindLogger{w: opts.Progress}))
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
		image := opts.Image
		if image == "" {
			if image, err = kindimage.NodeImage(ctx, opts.Progress); err != nil {
				return nil, err
			}
		}
		ForCgroupV1Host(cfg, CgroupV1Host())
		fmt.Fprintf(opts.Progress, "creating kind cluster %s (%s, node image %s)\n", opts.Name, engine.Name, image)
		if err := p.Create(opts.Name, kindcluster.CreateWithV1Alpha4Config(cfg), kindcluster.CreateWithNodeImage(image),
			kindcluster.CreateWithWaitForReady(kindCreateWait),
			kindcluster.CreateWithDisplayUsage(false), kindcluster.CreateWithDisplaySalutation(false)); err != nil {
			return nil, kindError(fmt.Sprintf("creating kind cluster %s", opts.Name), err)
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
	id, cfg, err := cluster.NewServiceAccountIdentity(ctx, c, b.admin, role)
	b.identity = id
	return cfg, err
}

// Stop deletes the cluster unless it is kept.
func (b *KindBackend) Stop(ctx context.Context) error {
	if b.opts.Keep {
		if b.identity != nil {
			b.identity.Remove(ctx)
		}
		return nil
	}
	if err := b.provider.Delete(b.opts.Name, ""); err != nil {
		return fmt.Errorf("deleting kind cluster %s: %w", b.opts.Name, err)
	}
	return nil
}

// failCgroupV1Patch lets kubelet 1.35+ run on a cgroup v1 host: it refuses
// one by default (failCgroupV1: true), and kind does not override that.
const failCgroupV1Patch = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
`

// CgroupV1Host reports whether this machine mounts cgroup v1 (no unified
// hierarchy at /sys/fs/cgroup): kind's nodes inherit it.
func CgroupV1Host() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err != nil
}

// ForCgroupV1Host adds the kubelet patch that cgroup v1 hosts need to cfg,
// and nothing elsewhere.
func ForCgroupV1Host(cfg *v1alpha4.Cluster, v1 bool) {
	if v1 && !slices.Contains(cfg.KubeadmConfigPatches, failCgroupV1Patch) {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, failCgroupV1Patch)
	}
}

// kindError keeps what kind says about a failed command (kind's errors only
// say "exit status 1"; the cause, e.g. a registry that does not answer, is
// in the command's output).
func kindError(what string, err error) error {
	rerr := kindexec.RunErrorForError(err)
	if rerr == nil || len(strings.TrimSpace(string(rerr.Output))) == 0 {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w\n%s said:\n%s", what, err, rerr.PrettyCommand(), lastLines(string(rerr.Output), 20))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// kindLogger shows kind's progress ("Preparing nodes", "Starting
// control-plane", ...) and warnings on the harness's progress output.
type kindLogger struct{ w io.Writer }

func (l kindLogger) Warn(m string)                        { fmt.Fprintf(l.w, "kind: %s\n", strings.TrimSpace(m)) }
func (l kindLogger) Warnf(f string, a ...any)             { l.Warn(fmt.Sprintf(f, a...)) }
func (l kindLogger) Error(m string)                       { fmt.Fprintf(l.w, "kind: ERROR: %s\n", m) }
func (l kindLogger) Errorf(f string, a ...any)            { l.Error(fmt.Sprintf(f, a...)) }
func (l kindLogger) V(v kindlog.Level) kindlog.InfoLogger { return kindInfo{w: l.w, on: v == 0} }

type kindInfo struct {
	w  io.Writer
	on bool
}

func (i kindInfo) Info(m string) {
	if m = strings.TrimSpace(m); i.on && m != "" {
		fmt.Fprintf(i.w, "kind: %s\n", m)
	}
}
func (i kindInfo) Infof(f string, a ...any) { i.Info(fmt.Sprintf(f, a...)) }
func (i kindInfo) Enabled() bool            { return i.on }
