// Package cluster starts and reaches the control planes the workbook runs
// on: envtest's kube-apiserver + etcd (the default), kind, or an existing
// cluster the harness is allowed to touch.
package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/10xdev/gw10/harness/assets"
)

// Envtest is a running envtest control plane whose etcd data and apiserver
// certificates live in a directory the caller owns, so that processes left
// behind by a killed run can be found by that path (see KillProcessesUnder).
type Envtest struct {
	Dir    string
	Config *rest.Config // admin
	env    *envtest.Environment
}

// StartEnvtest obtains the binaries and starts kube-apiserver and etcd with
// their state under dir.
func StartEnvtest(ctx context.Context, dir string, progress io.Writer) (*Envtest, error) {
	res, err := assets.Ensure(ctx, assets.Options{Progress: progress})
	if err != nil {
		return nil, fmt.Errorf("obtaining envtest binaries: %w", err)
	}
	etcdDir, certDir := filepath.Join(dir, "etcd"), filepath.Join(dir, "apiserver")
	for _, d := range []string{etcdDir, certDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	env := &envtest.Environment{BinaryAssetsDirectory: res.Dir}
	// envtest's own 20 s is short on a busy 2-core machine (a learner's
	// laptop compiling, or CI): kube-apiserver then "fails" while starting.
	// KUBEBUILDER_CONTROLPLANE_START_TIMEOUT, when set, still decides.
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		env.ControlPlaneStartTimeout = controlPlaneStartTimeout
	}
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: etcdDir}
	env.ControlPlane.GetAPIServer().CertDir = certDir
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("starting kube-apiserver and etcd (binaries in %s): %w\nhint:  %s", res.Dir, err, busyHint())
	}
	return &Envtest{Dir: dir, Config: cfg, env: env}, nil
}

// AddUser creates a client-certificate identity. With no groups it has no
// rights at all until something binds a role to it.
func (e *Envtest) AddUser(name string, groups ...string) (*rest.Config, error) {
	u, err := e.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", name, err)
	}
	return u.Config(), nil
}

// Stop stops kube-apiserver and etcd and removes their state.
func (e *Envtest) Stop() error {
	err := e.env.Stop()
	if rmErr := os.RemoveAll(filepath.Join(e.Dir, "etcd")); rmErr != nil && err == nil {
		err = rmErr
	}
	if rmErr := os.RemoveAll(filepath.Join(e.Dir, "apiserver")); rmErr != nil && err == nil {
		err = rmErr
	}
	if err != nil {
		return fmt.Errorf("stopping the control plane: %w", err)
	}
	return nil
}

// controlPlaneStartTimeout is how long each of etcd and kube-apiserver may
// take to start.
const controlPlaneStartTimeout = 90 * time.Second

// busyHint says what to do when the control plane did not start: nothing in
// the learner's code starts it, so it is the machine.
func busyHint() string {
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			load = fmt.Sprintf(" (load average %s on %d cores)", f[0], runtime.NumCPU())
		}
	}
	return "nothing in your code starts the control plane: the machine was too busy to start it in time" + load +
		"; run make check again when it is quieter, or raise the wait with KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=3m"
}
