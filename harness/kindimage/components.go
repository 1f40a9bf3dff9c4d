package kindimage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
)

// goComponent is a set of programs built from one module of the Go module
// proxy, in a throwaway module of its own.
type goComponent struct {
	name    string // also the directory of its outputs
	module  string
	version string
	// bins maps each output binary to its main package.
	bins    map[string]string
	tags    string
	ldflags string
	cgo     bool
	// stagingReplaces: pin the k8s.io staging modules that
	// k8s.io/kubernetes's go.mod replaces with ./staging paths.
	stagingReplaces bool
}

// components are the programs of the node image and of its preloaded
// images, at the versions kind v0.33.0's base image uses where it names one
// (containerd, crictl, CNI plugins) and the versions kubeadm 1.37.2 asks for
// (etcd, CoreDNS).
func components(kubeVersion string) []goComponent {
	major, minor, _ := strings.Cut(kubeVersion, ".")
	minor, _, _ = strings.Cut(minor, ".")
	kube := func(name string) string { return "k8s.io/kubernetes/cmd/" + name }
	return []goComponent{
		{
			name: "kubernetes", module: "k8s.io/kubernetes", version: "v" + kubeVersion,
			bins: map[string]string{
				"kubelet": kube("kubelet"), "kubeadm": kube("kubeadm"), "kubectl": kube("kubectl"),
				"kube-apiserver": kube("kube-apiserver"), "kube-controller-manager": kube("kube-controller-manager"),
				"kube-scheduler": kube("kube-scheduler"), "kube-proxy": kube("kube-proxy"),
			},
			// The same flags as the envtest build (harness/assets), so the
			// two share the Go build cache.
			ldflags: fmt.Sprintf("-s -w -X k8s.io/component-base/version.gitVersion=v%s"+
				" -X k8s.io/component-base/version.gitMajor=%s -X k8s.io/component-base/version.gitMinor=%s",
				kubeVersion, major, minor),
			cgo: true, stagingReplaces: true,
		},
		{
			name: "etcd", module: "go.etcd.io/etcd/server/v3", version: "v" + EtcdVersion,
			bins:    map[string]string{"etcd": "go.etcd.io/etcd/server/v3"},
			ldflags: "-s -w",
		},
		{
			name: "containerd", module: "github.com/containerd/containerd/v2", version: ContainerdVersion,
			bins: map[string]string{
				"containerd":              "github.com/containerd/containerd/v2/cmd/containerd",
				"ctr":                     "github.com/containerd/containerd/v2/cmd/ctr",
				"containerd-shim-runc-v2": "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2",
			},
			// kind's base image leaves out the snapshotters it never selects.
			tags:    "no_aufs no_zfs no_btrfs no_devmapper",
			ldflags: "-s -w -X github.com/containerd/containerd/v2/version.Version=" + ContainerdVersion,
			cgo:     true,
		},
		{
			name: "crictl", module: "sigs.k8s.io/cri-tools", version: CrictlVersion,
			bins:    map[string]string{"crictl": "sigs.k8s.io/cri-tools/cmd/crictl"},
			ldflags: "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=" + CrictlVersion,
		},
		{
			name: "cni", module: "github.com/containernetworking/plugins", version: CNIPluginsVersion,
			bins: map[string]string{
				"host-local": "github.com/containernetworking/plugins/plugins/ipam/host-local",
				"loopback":   "github.com/containernetworking/plugins/plugins/main/loopback",
				"ptp":        "github.com/containernetworking/plugins/plugins/main/ptp",
				"portmap":    "github.com/containernetworking/plugins/plugins/meta/portmap",
			},
			ldflags: "-s -w",
		},
		{
			name: "coredns", module: "github.com/coredns/coredns", version: CoreDNSVersion,
			bins:    map[string]string{"coredns": "github.com/coredns/coredns"},
			ldflags: "-s -w",
		},
	}
}

// stamp describes how the outputs were made; outputs with another stamp are
// rebuilt.
func (c goComponent) stamp() string {
	names := sortedKeys(c.bins)
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%s cgo=%t tags=%q ldflags=%q\n", c.module, c.version, c.cgo, c.tags, c.ldflags)
	for _, n := range names {
		fmt.Fprintf(&b, "%s=%s\n", n, c.bins[n])
	}
	return b.String()
}

// ensure builds c into dir unless dir already holds its outputs.
func (c goComponent) ensure(ctx context.Context, work, dir string, progress io.Writer) error {
	if upToDate(dir, c.stamp(), sortedKeys(c.bins)) {
		return nil
	}
	mod := filepath.Join(work, "modules", c.name)
	if err := os.MkdirAll(mod, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", mod, err)
	}
	gomod, err := c.goMod(ctx, mod)
	if err != nil {
		return err
	}
	if err := writeIfChanged(filepath.Join(mod, "go.mod"), gomod); err != nil {
		return err
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("clearing %s: %w", tmp, err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", tmp, err)
	}
	cgo := "CGO_ENABLED=0"
	if c.cgo {
		cgo = "CGO_ENABLED=1"
	}
	for _, inv := range c.invocations(tmp) {
		// -p 1 and nice: the machine is shared, and a slower build is fine
		// for a one-time step.
		args := []string{"-n", "19", "go", "build", "-p", "1", "-trimpath", "-ldflags", c.ldflags}
		if c.tags != "" {
			args = append(args, "-tags", c.tags)
		}
		args = append(args, "-o", inv.out)
		args = append(args, inv.pkgs...)
		what := fmt.Sprintf("%s %s (%s)", strings.Join(inv.names, ", "), c.version, c.module)
		if err := runStep(ctx, progress, what, mod, append(goEnv(), cgo), "nice", args...); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, stampFile), []byte(c.stamp()), 0o644); err != nil {
		return fmt.Errorf("writing stamp: %w", err)
	}
	return replaceDir(tmp, dir)
}

// invocation is one go build of c.
type invocation struct {
	names []string
	pkgs  []string
	out   string // a directory (ends in /) or a file
}

// invocations builds every binary named after its package in one go build
// (the packages are loaded and linked together), the others one by one.
func (c goComponent) invocations(dir string) []invocation {
	together := invocation{out: dir + string(filepath.Separator)}
	var single []invocation
	for _, name := range sortedKeys(c.bins) {
		pkg := c.bins[name]
		if path.Base(pkg) == name {
			together.names = append(together.names, name)
			together.pkgs = append(together.pkgs, pkg)
			continue
		}
		single = append(single, invocation{names: []string{name}, pkgs: []string{pkg}, out: filepath.Join(dir, name)})
	}
	if len(together.pkgs) == 0 {
		return single
	}
	return append([]invocation{together}, single...)
}

// goMod renders the throwaway module that builds c.
func (c goComponent) goMod(ctx context.Context, dir string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "module gw10.local/kind-image/%s\n\ngo 1.26.0\n\nrequire %s %s\n", c.name, c.module, c.version)
	if !c.stagingReplaces {
		return b.String(), nil
	}
	replaces, err := stagingReplaces(ctx, dir, c.module, c.version)
	if err != nil {
		return "", err
	}
	b.WriteString("\nreplace (\n")
	for _, old := range replaces {
		fmt.Fprintf(&b, "\t%s => %s v0.%s\n", old, old, strings.TrimPrefix(c.version, "v1."))
	}
	b.WriteString(")\n")
	return b.String(), nil
}

// stagingReplaces lists the modules that k8s.io/kubernetes's own go.mod
// replaces with ./staging directories: from the module cache those must be
// pinned to the published v0.x.y of the same release.
func stagingReplaces(ctx context.Context, dir, module, version string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = dir
	cmd.Env = goEnv()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download %s@%s: %w%s", module, version, err, stderrOf(err))
	}
	var info struct{ GoMod, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, fmt.Errorf("reading go mod download output: %w", err)
	}
	if info.Error != "" {
		return nil, fmt.Errorf("go mod download %s@%s: %s", module, version, info.Error)
	}
	data, err := os.ReadFile(info.GoMod)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", info.GoMod, err)
	}
	mf, err := modfile.Parse(info.GoMod, data, nil)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", info.GoMod, err)
	}
	var olds []string
	for _, r := range mf.Replace {
		if strings.HasPrefix(r.New.Path, "./staging/") {
			olds = append(olds, r.Old.Path)
		}
	}
	if len(olds) == 0 {
		return nil, fmt.Errorf("%s has no ./staging replaces: cannot build from it", info.GoMod)
	}
	sort.Strings(olds)
	return olds, nil
}

// ensurePause compiles Kubernetes's own pause.c (in the k8s.io/kubernetes
// module, build/pause/linux) into a static binary, as its Makefile does.
func ensurePause(ctx context.Context, work, dir, kubeVersion string, progress io.Writer) error {
	st := "pause.c of k8s.io/kubernetes v" + kubeVersion + " version " + PauseVersion + "\n"
	if upToDate(dir, st, []string{"pause"}) {
		return nil
	}
	mod := filepath.Join(work, "modules", "kubernetes")
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "k8s.io/kubernetes@v"+kubeVersion)
	cmd.Dir = mod
	cmd.Env = goEnv()
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go mod download k8s.io/kubernetes: %w%s", err, stderrOf(err))
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil {
		return fmt.Errorf("reading go mod download output: %w", err)
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("clearing %s: %w", tmp, err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", tmp, err)
	}
	src := filepath.Join(info.Dir, "build", "pause", "linux", "pause.c")
	if err := runStep(ctx, progress, "pause "+PauseVersion+" (gcc, static)", tmp, nil,
		"gcc", "-Os", "-Wall", "-Werror", "-static", "-DVERSION=v"+PauseVersion, "-o", filepath.Join(tmp, "pause"), src); err != nil {
		return fmt.Errorf("%w (gcc and libc6-dev come from Debian: apt-get install gcc libc6-dev)", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, stampFile), []byte(st), 0o644); err != nil {
		return fmt.Errorf("writing stamp: %w", err)
	}
	return replaceDir(tmp, dir)
}

const stampFile = ".gw10-stamp"

// upToDate: dir has every named file and the stamp it was made with.
func upToDate(dir, stamp string, files []string) bool {
	got, err := os.ReadFile(filepath.Join(dir, stampFile))
	if err != nil || string(got) != stamp {
		return false
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}

// progressEvery is how often a long step says it is still going.
const progressEvery = 30 * time.Second

// runStep runs one long build step, saying what it does, that it is still
// going, and how long it took; on failure the error carries the command's
// last output lines.
func runStep(ctx context.Context, progress io.Writer, what, dir string, env []string, name string, args ...string) error {
	fmt.Fprintf(progress, "building %s\n", what)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	var output bytes.Buffer
	cmd.Stdout = &output
	cmd.Stderr = &output
	start := time.Now()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(progress, "  still building %s: %s\n", what, time.Since(start).Round(time.Second))
			}
		}
	}()
	err := cmd.Run()
	close(done)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("building %s: interrupted: %w", what, ctx.Err())
		}
		return fmt.Errorf("building %s failed (%v):\n%s", what, err, lastLines(output.String(), 30))
	}
	fmt.Fprintf(progress, "  built %s in %s\n", what, time.Since(start).Round(time.Second))
	return nil
}

// goEnv is the environment of the throwaway builds: outside any workspace,
// free to complete go.sum from the module proxy.
func goEnv() []string {
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

func writeIfChanged(path, content string) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == content {
		return nil
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// replaceDir moves a finished tmp directory into place.
func replaceDir(tmp, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing old %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("moving %s into place: %w", dir, err)
	}
	return nil
}
