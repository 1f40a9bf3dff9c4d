package assets

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"sigs.k8s.io/controller-runtime/tools/setup-envtest/store"
)

// progressEvery is how often a running build reports that it is still going.
const progressEvery = 15 * time.Second

// component is one binary built from a throwaway module.
type component struct {
	name    string // binary name
	module  string // module to require
	version string
	pkg     string // main package to build
	ldflags string
	// replaces maps module paths to versions; filled for kube-apiserver from
	// k8s.io/kubernetes's own go.mod, whose ./staging replaces cannot be used
	// from the module cache.
	replaces map[string]string
}

// buildArchive builds kube-apiserver and etcd from the Go module proxy and
// returns a .tar.gz of them, in the shape setup-envtest sideloads.
func buildArchive(ctx context.Context, opts Options) (string, error) {
	work, err := buildRoot(opts.Version)
	if err != nil {
		return "", err
	}
	out, err := os.MkdirTemp(work, "bin-")
	if err != nil {
		return "", fmt.Errorf("creating build output dir: %w", err)
	}
	defer os.RemoveAll(out)

	apiserver, err := apiserverComponent(ctx, opts.Version, work)
	if err != nil {
		return "", err
	}
	etcd := component{
		name:    "etcd",
		module:  "go.etcd.io/etcd/server/v3",
		version: EtcdVersion,
		pkg:     "go.etcd.io/etcd/server/v3",
		ldflags: "-s -w",
	}
	for _, c := range []component{etcd, apiserver} {
		if err := c.build(ctx, work, out, opts.Progress); err != nil {
			return "", err
		}
	}
	if err := checkVersion(ctx, filepath.Join(out, "kube-apiserver"), "v"+opts.Version); err != nil {
		return "", err
	}

	archive, err := os.CreateTemp(work, "envtest-*.tar.gz")
	if err != nil {
		return "", fmt.Errorf("creating archive: %w", err)
	}
	defer archive.Close()
	if err := writeTarGz(archive, out, Binaries); err != nil {
		os.Remove(archive.Name())
		return "", err
	}
	return archive.Name(), nil
}

// buildRoot is a per-version directory that keeps the throwaway modules (and
// their go.sum) between runs; build outputs live in temp dirs inside it.
func buildRoot(version string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locating the user cache dir: %w", err)
	}
	dir := filepath.Join(cache, "gw10", "envtest-build", version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	return dir, nil
}

func apiserverComponent(ctx context.Context, version, work string) (component, error) {
	c := component{
		name:    "kube-apiserver",
		module:  "k8s.io/kubernetes",
		version: "v" + version,
		pkg:     "k8s.io/kubernetes/cmd/kube-apiserver",
	}
	major, minor, _ := strings.Cut(version, ".")
	minor, _, _ = strings.Cut(minor, ".")
	c.ldflags = fmt.Sprintf("-s -w -X k8s.io/component-base/version.gitVersion=v%s"+
		" -X k8s.io/component-base/version.gitMajor=%s -X k8s.io/component-base/version.gitMinor=%s",
		version, major, minor)

	// Read k8s.io/kubernetes's go.mod: its staging replaces name every
	// k8s.io module that must be pinned to the matching published v0.x.y.
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", c.module+"@"+c.version)
	cmd.Dir = work
	cmd.Env = goEnv()
	outb, err := cmd.Output()
	if err != nil {
		return c, fmt.Errorf("go mod download %s@%s: %w%s", c.module, c.version, err, stderrOf(err))
	}
	var info struct{ GoMod, Error string }
	if err := json.Unmarshal(outb, &info); err != nil {
		return c, fmt.Errorf("reading go mod download output: %w", err)
	}
	if info.Error != "" {
		return c, fmt.Errorf("go mod download %s@%s: %s", c.module, c.version, info.Error)
	}
	data, err := os.ReadFile(info.GoMod)
	if err != nil {
		return c, fmt.Errorf("reading %s: %w", info.GoMod, err)
	}
	mf, err := modfile.Parse(info.GoMod, data, nil)
	if err != nil {
		return c, fmt.Errorf("parsing %s: %w", info.GoMod, err)
	}
	c.replaces = map[string]string{}
	for _, r := range mf.Replace {
		if strings.HasPrefix(r.New.Path, "./staging/") {
			c.replaces[r.Old.Path] = "v0." + strings.TrimPrefix(version, "1.")
		}
	}
	if len(c.replaces) == 0 {
		return c, fmt.Errorf("%s has no ./staging replaces: cannot build kube-apiserver from it", info.GoMod)
	}
	return c, nil
}

// goMod renders the throwaway module that builds c.
func (c component) goMod() string {
	var b strings.Builder
	fmt.Fprintf(&b, "module gw10.local/envtest-build/%s\n\ngo 1.26.0\n\nrequire %s %s\n", c.name, c.module, c.version)
	if len(c.replaces) > 0 {
		b.WriteString("\nreplace (\n")
		for _, old := range sortedKeys(c.replaces) {
			fmt.Fprintf(&b, "\t%s => %s %s\n", old, old, c.replaces[old])
		}
		b.WriteString(")\n")
	}
	return b.String()
}

func (c component) build(ctx context.Context, work, out string, progress io.Writer) error {
	dir := filepath.Join(work, c.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := writeIfChanged(filepath.Join(dir, "go.mod"), c.goMod()); err != nil {
		return err
	}
	fmt.Fprintf(progress, "building %s %s from the Go module proxy (one-time; minutes on a fresh machine)\n", c.name, c.version)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", c.ldflags, "-o", filepath.Join(out, c.name), c.pkg)
	cmd.Dir = dir
	cmd.Env = goEnv()
	var stderr bytes.Buffer
	cmd.Stdout = progress
	cmd.Stderr = io.MultiWriter(&stderr, prefixWriter{w: progress, prefix: "  "})

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
				fmt.Fprintf(progress, "  still building %s: %s elapsed\n", c.name, time.Since(start).Round(time.Second))
			}
		}
	}()
	err := cmd.Run()
	close(done)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("building %s: interrupted: %w", c.name, ctx.Err())
		}
		return fmt.Errorf("building %s %s failed (%v); go build said:\n%s", c.name, c.version, err, lastLines(stderr.String(), 30))
	}
	fmt.Fprintf(progress, "built %s in %s\n", c.name, time.Since(start).Round(time.Second))
	return nil
}

// checkVersion makes sure the version stamp took: envtest and kubectl both
// read it, and a binary claiming v0.0.0 confuses discovery.
func checkVersion(ctx context.Context, bin, want string) error {
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("running %s --version: %w: %s", bin, err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "Kubernetes "+want {
		return fmt.Errorf("%s --version printed %q, want %q", bin, got, "Kubernetes "+want)
	}
	return nil
}

// sideload adds the archive to the store the way `setup-envtest sideload`
// does, but atomically: it unpacks into a scratch store next to the real one
// and renames the finished directory into place.
func sideload(ctx context.Context, st *store.Store, item store.Item, archive string) error {
	realDir, err := st.Path(item)
	if err != nil {
		return fmt.Errorf("locating %s in the store: %w", item, err)
	}
	scratch, err := os.MkdirTemp(filepath.Dir(filepath.Dir(realDir)), ".gw10-sideload-")
	if err != nil {
		return fmt.Errorf("creating scratch store: %w", err)
	}
	defer os.RemoveAll(scratch)
	tmpStore := store.NewAt(scratch)
	if err := tmpStore.Initialize(ctx); err != nil {
		return fmt.Errorf("initialising scratch store: %w", err)
	}
	f, err := os.Open(archive)
	if err != nil {
		return fmt.Errorf("opening %s: %w", archive, err)
	}
	defer f.Close()
	if err := tmpStore.Add(ctx, item, f); err != nil {
		return fmt.Errorf("sideloading %s: %w", item, err)
	}
	tmpDir, err := tmpStore.Path(item)
	if err != nil {
		return fmt.Errorf("locating sideloaded %s: %w", item, err)
	}
	if err := os.RemoveAll(realDir); err != nil {
		return fmt.Errorf("removing incomplete %s: %w", realDir, err)
	}
	if err := os.Rename(tmpDir, realDir); err != nil {
		return fmt.Errorf("moving %s into the store: %w", item, err)
	}
	return nil
}

func writeTarGz(w io.Writer, dir string, names []string) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, name := range names {
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("archiving %s: %w", name, err)
		}
		hdr := &tar.Header{Name: "controller-tools/envtest/" + name, Mode: 0o755, Size: fi.Size(), Typeflag: tar.TypeReg, ModTime: fi.ModTime()}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("archiving %s: %w", name, err)
		}
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("archiving %s: %w", name, err)
		}
		_, err = io.Copy(tw, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("archiving %s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("closing tar: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("closing gzip: %w", err)
	}
	return nil
}

// goEnv is the environment of the throwaway builds: outside any workspace,
// free to complete go.sum from the module proxy.
func goEnv() []string {
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
}

func writeIfChanged(path, content string) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == content {
		return nil
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
