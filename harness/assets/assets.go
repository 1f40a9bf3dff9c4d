// Package assets provides the envtest binaries (kube-apiserver and etcd) that
// every control plane of the workbook runs on.
//
// They are looked up, in this order, and always end up in setup-envtest's own
// store so that `go tool setup-envtest` and this package agree:
//
//  1. $KUBEBUILDER_ASSETS, when it holds both binaries;
//  2. setup-envtest's store, installed versions only;
//  3. a setup-envtest download (works where its index is reachable);
//  4. a build from source through the Go module proxy, sideloaded into the store.
//
// Concurrent callers are serialised by a file lock in the store, and an
// interrupted or failed build leaves nothing half-installed.
package assets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/tools/setup-envtest/store"
	"sigs.k8s.io/controller-runtime/tools/setup-envtest/versions"
)

const (
	// KubernetesVersion is the version of kube-apiserver every check runs on.
	KubernetesVersion = "1.37.2"
	// EtcdVersion is the etcd server module version built when building from source.
	EtcdVersion = "v3.6.16"
)

// Binaries are the executables a control plane needs.
var Binaries = []string{"kube-apiserver", "etcd"}

// Source says where the binaries came from.
type Source string

const (
	FromEnv      Source = "KUBEBUILDER_ASSETS"
	FromStore    Source = "setup-envtest store"
	FromDownload Source = "setup-envtest download"
	FromBuild    Source = "built from source"
)

// Options tune Ensure. The zero value is usable.
type Options struct {
	// Version is the Kubernetes version; KubernetesVersion when empty.
	Version string
	// StoreDir is setup-envtest's store; its default location when empty.
	StoreDir string
	// Progress receives human-readable progress lines; discarded when nil.
	Progress io.Writer
	// NoDownload skips the setup-envtest download step.
	NoDownload bool
	// IndexURL overrides setup-envtest's default index (tests point it at a dead address).
	IndexURL string
	// NoBuild makes a missing store entry an error instead of building it.
	NoBuild bool
	// Env, when non-nil, replaces os.Getenv (tests).
	Env func(string) string
}

// Result says where the binaries are and where they came from.
type Result struct {
	Dir    string
	Source Source
}

func (o *Options) defaults() error {
	if o.Version == "" {
		o.Version = KubernetesVersion
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Env == nil {
		o.Env = os.Getenv
	}
	if o.StoreDir == "" {
		dir, err := store.DefaultStoreDir()
		if err != nil {
			return fmt.Errorf("locating setup-envtest's store: %w", err)
		}
		o.StoreDir = dir
	}
	return nil
}

// Ensure returns a directory holding kube-apiserver and etcd for the wanted
// version, obtaining them if needed.
func Ensure(ctx context.Context, opts Options) (Result, error) {
	if err := opts.defaults(); err != nil {
		return Result{}, err
	}
	if dir := opts.Env("KUBEBUILDER_ASSETS"); dir != "" {
		if err := hasBinaries(dir); err == nil {
			return Result{Dir: dir, Source: FromEnv}, nil
		} else {
			fmt.Fprintf(opts.Progress, "ignoring KUBEBUILDER_ASSETS=%s: %v\n", dir, err)
		}
	}

	item, err := storeItem(opts.Version)
	if err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(opts.StoreDir, 0o755); err != nil {
		return Result{}, fmt.Errorf("creating setup-envtest store %s: %w", opts.StoreDir, err)
	}
	lock, err := acquireLock(ctx, filepath.Join(opts.StoreDir, ".gw10.lock"), opts.Progress)
	if err != nil {
		return Result{}, err
	}
	defer lock.release()

	st := store.NewAt(opts.StoreDir)
	dir := filepath.Join(opts.StoreDir, "k8s", item.Platform.BaseName(item.Version))
	if hasBinaries(dir) == nil {
		return Result{Dir: dir, Source: FromStore}, nil
	}

	logCtx := logr.NewContext(ctx, logr.Discard())
	if err := st.Initialize(logCtx); err != nil {
		return Result{}, fmt.Errorf("initialising setup-envtest store %s: %w", opts.StoreDir, err)
	}

	if !opts.NoDownload {
		err := download(logCtx, st, item, opts.IndexURL)
		if err == nil && hasBinaries(dir) == nil {
			fmt.Fprintf(opts.Progress, "downloaded envtest binaries %s into %s\n", opts.Version, dir)
			return Result{Dir: dir, Source: FromDownload}, nil
		}
		if err == nil {
			err = errors.New("the downloaded archive lacks kube-apiserver or etcd")
		}
		fmt.Fprintf(opts.Progress, "setup-envtest download unavailable (%v); building from source instead\n", err)
	}
	if opts.NoBuild {
		return Result{}, fmt.Errorf("envtest binaries %s are not in %s and building is disabled", opts.Version, opts.StoreDir)
	}

	start := time.Now()
	archive, err := buildArchive(ctx, opts)
	if err != nil {
		return Result{}, err
	}
	defer os.Remove(archive)
	if err := sideload(logCtx, st, item, archive); err != nil {
		return Result{}, err
	}
	if err := hasBinaries(dir); err != nil {
		return Result{}, fmt.Errorf("after sideloading: %w", err)
	}
	fmt.Fprintf(opts.Progress, "envtest binaries %s ready in %s (built in %s)\n", opts.Version, dir, time.Since(start).Round(time.Second))
	return Result{Dir: dir, Source: FromBuild}, nil
}

func storeItem(version string) (store.Item, error) {
	spec, err := versions.FromExpr(version)
	if err != nil {
		return store.Item{}, fmt.Errorf("parsing Kubernetes version %q: %w", version, err)
	}
	concrete := spec.AsConcrete()
	if concrete == nil {
		return store.Item{}, fmt.Errorf("Kubernetes version %q is not a concrete x.y.z version", version)
	}
	return store.Item{
		Version:  *concrete,
		Platform: versions.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH},
	}, nil
}

// hasBinaries reports why dir cannot serve as an envtest assets directory.
func hasBinaries(dir string) error {
	for _, name := range Binaries {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("%s missing in %s", name, dir)
		}
		if fi.Mode()&0o111 == 0 || !fi.Mode().IsRegular() {
			return fmt.Errorf("%s in %s is not an executable file", name, dir)
		}
	}
	return nil
}
