// Package kindimage builds a kind node image from the Go module proxy and
// Debian's packages only, for machines that reach those but no container
// registry. It follows kind v0.33.0's own base and node images: a Debian root
// file system with systemd, containerd, runc, crictl and the CNI plugins,
// kind's entrypoint and units (read from kind's sources in the module cache),
// kubelet, kubeadm and kubectl, and the control-plane images preloaded into
// the node's containerd, all built from source.
package kindimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/10xdev/gw10/harness/words"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Versions of what goes into the image. Kubernetes matches the envtest
// binaries; containerd, crictl and the CNI plugins are kind v0.33.0's; etcd,
// CoreDNS and pause are what kubeadm 1.37 deploys.
const (
	KubernetesVersion = "1.37.2"
	KindVersion       = "v0.33.0"
	ContainerdVersion = "v2.3.4"
	CrictlVersion     = "v1.36.0"
	CNIPluginsVersion = "v1.9.1"
	EtcdVersion       = "3.7.0"
	CoreDNSVersion    = "v1.14.6"
	PauseVersion      = "3.10.2"
)

// Image is the node image this package builds.
const Image = "gw10.local/kind-node:v" + KubernetesVersion

// recipeLabel carries the hash of everything the image was built from; an
// image with the current hash is up to date.
const recipeLabel = "gw10.kind-image.recipe"

// recipeRevision changes whenever the assembly below changes in a way the
// inputs do not show.
const recipeRevision = "1"

// DefaultMirror is the Debian mirror debootstrap uses unless told otherwise.
const DefaultMirror = "http://deb.debian.org/debian"

// Options configure Build.
type Options struct {
	// WorkDir keeps the builds between runs; default: the user cache dir's
	// gw10/kind-image/<version>.
	WorkDir  string
	Mirror   string // Debian mirror for debootstrap
	Progress io.Writer
	// Rebuild makes a new image even when the current one is up to date
	// (the component builds stay cached).
	Rebuild bool
}

// Result says what Build did.
type Result struct {
	Image   string
	Built   bool // false: the image was already up to date
	Elapsed time.Duration
}

// Build makes Image unless the container engine already has it from the
// same recipe.
func Build(ctx context.Context, opts Options) (Result, error) {
	start := time.Now()
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.Mirror == "" {
		opts.Mirror = DefaultMirror
	}
	if opts.WorkDir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return Result{}, fmt.Errorf("locating the user cache dir: %w", err)
		}
		opts.WorkDir = filepath.Join(cache, "gw10", "kind-image", "v"+KubernetesVersion)
	}
	if err := os.MkdirAll(opts.WorkDir, 0o755); err != nil {
		return Result{}, fmt.Errorf("creating %s: %w", opts.WorkDir, err)
	}
	if err := dockerRunning(ctx); err != nil {
		return Result{}, err
	}
	kindFiles, err := kindBaseFiles(ctx, opts.WorkDir)
	if err != nil {
		return Result{}, err
	}
	comps := components(KubernetesVersion)
	recipe := recipeHash(comps, opts.Mirror)
	if !opts.Rebuild {
		if got, _ := imageLabel(ctx, Image, recipeLabel); got == recipe {
			fmt.Fprintf(opts.Progress, "kind node image %s is up to date (recipe %s)\n", Image, recipe)
			return Result{Image: Image, Elapsed: time.Since(start)}, nil
		}
	}
	fmt.Fprintf(opts.Progress, "building kind node image %s from the Go module proxy and Debian packages (work dir %s; the first run takes a long while)\n", Image, opts.WorkDir)

	bins := filepath.Join(opts.WorkDir, "bin")
	for _, c := range comps {
		if err := c.ensure(ctx, opts.WorkDir, filepath.Join(bins, c.name), opts.Progress); err != nil {
			return Result{}, err
		}
	}
	if err := ensurePause(ctx, opts.WorkDir, filepath.Join(bins, "pause"), KubernetesVersion, opts.Progress); err != nil {
		return Result{}, err
	}
	rootfs := filepath.Join(opts.WorkDir, "rootfs")
	if err := ensureRootfs(ctx, rootfs, opts.Mirror, opts.Progress); err != nil {
		return Result{}, err
	}
	b := &assembly{work: opts.WorkDir, bins: bins, rootfs: rootfs, kindFiles: kindFiles, recipe: recipe, progress: opts.Progress}
	if err := b.run(ctx); err != nil {
		return Result{}, err
	}
	res := Result{Image: Image, Built: true, Elapsed: time.Since(start)}
	fmt.Fprintf(opts.Progress, "kind node image %s built in %s\n", Image, res.Elapsed.Round(time.Second))
	return res, nil
}

// recipeHash names everything the image is made from.
func recipeHash(comps []goComponent, mirror string) string {
	h := sha256.New()
	fmt.Fprintf(h, "revision %s kind %s pause %s debian %s %s %s\n", recipeRevision, KindVersion, PauseVersion,
		DebianSuite, mirror, strings.Join(debianPackages, ","))
	for _, c := range comps {
		_, _ = io.WriteString(h, c.stamp()) // a hash.Hash never fails a write
	}
	for _, f := range []string{containerdConfig, cniConfig, defaultCNIManifest, nodeSetup} {
		_, _ = io.WriteString(h, f)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// kindBaseFiles returns the files/ directory of kind's base image in the
// module cache: its entrypoint, systemd units and helper scripts.
func kindBaseFiles(ctx context.Context, work string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "sigs.k8s.io/kind@"+KindVersion)
	cmd.Dir = work
	cmd.Env = goEnv()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download sigs.k8s.io/kind@%s: %w%s", KindVersion, err, stderrOf(err))
	}
	dir, err := jsonField(out, "Dir")
	if err != nil {
		return "", err
	}
	files := filepath.Join(dir, "images", "base", "files")
	if _, err := os.Stat(filepath.Join(files, "usr", "local", "bin", "entrypoint")); err != nil {
		return "", fmt.Errorf("kind %s's node entrypoint is not in the module cache: %w", KindVersion, err)
	}
	return files, nil
}

func dockerRunning(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput()
	if err != nil {
		return fmt.Errorf("building the kind node image needs a running Docker engine (scripts/docker-up.sh starts one): docker info: %v: %s",
			err, words.FirstLine(strings.TrimSpace(string(out))))
	}
	return nil
}

func imageLabel(ctx context.Context, image, label string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", "image", "inspect", "--format",
		fmt.Sprintf("{{index .Config.Labels %q}}", label), image).Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
