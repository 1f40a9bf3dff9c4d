package kindimage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/10xdev/gw10/harness/words"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// assembly puts the built programs, kind's files and the Debian root file
// system together into the node image.
type assembly struct {
	work, bins, rootfs, kindFiles, recipe string
	progress                              io.Writer
}

const imagePath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func (a *assembly) bin(component, name string) string { return filepath.Join(a.bins, component, name) }

func (a *assembly) run(ctx context.Context) error {
	node := filepath.Join(a.work, "node")
	fmt.Fprintf(a.progress, "assembling the node's root file system\n")
	if err := os.RemoveAll(node); err != nil {
		return fmt.Errorf("clearing %s: %w", node, err)
	}
	if out, err := exec.CommandContext(ctx, "cp", "-a", a.rootfs, node).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the root file system: %v: %s", err, out)
	}
	defer os.RemoveAll(node)
	if err := a.installFiles(ctx, node); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "chroot", node, "/bin/bash", "-c", nodeSetup).CombinedOutput(); err != nil {
		return fmt.Errorf("setting up systemd in the node's root file system: %v:\n%s", err, lastLines(string(out), 20))
	}
	images, err := a.componentImages(ctx)
	if err != nil {
		return err
	}

	stage := "gw10.local/kind-node-stage:" + a.recipe
	fmt.Fprintf(a.progress, "importing the root file system into docker as %s\n", stage)
	if err := importDir(ctx, node, stage); err != nil {
		return err
	}
	defer func() { _ = exec.Command("docker", "rmi", "-f", stage).Run() }() // best effort: a leftover stage image is only disk
	return a.preload(ctx, stage, images)
}

// installFiles copies kind's node files and the built programs into node.
func (a *assembly) installFiles(ctx context.Context, node string) error {
	if err := copyTree(a.kindFiles, node, map[string]bool{"etc/containerd/config.toml": true}); err != nil {
		return fmt.Errorf("copying kind's node files: %w", err)
	}
	spec, err := exec.CommandContext(ctx, a.bin("containerd", "ctr"), "oci", "spec").Output()
	if err != nil {
		return fmt.Errorf("ctr oci spec: %w%s", err, stderrOf(err))
	}
	criBase, err := criBaseSpec(spec)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"etc/containerd/config.toml":         []byte(containerdConfig),
		"etc/containerd/cri-base.json":       criBase,
		"etc/cni/net.d/10-gw10-ptp.conflist": []byte(cniConfig),
		"kind/manifests/default-cni.yaml":    []byte(defaultCNIManifest),
		"kind/version":                       []byte("v" + KubernetesVersion),
	}
	for rel, data := range files {
		if err := writeFile(filepath.Join(node, rel), data, 0o644); err != nil {
			return err
		}
	}
	bins := []struct{ component, name, dst string }{
		{"kubernetes", "kubelet", "usr/bin"},
		{"kubernetes", "kubeadm", "usr/bin"},
		{"kubernetes", "kubectl", "usr/bin"},
		{"containerd", "containerd", "usr/local/bin"},
		{"containerd", "ctr", "usr/local/bin"},
		{"containerd", "containerd-shim-runc-v2", "usr/local/bin"},
		{"crictl", "crictl", "usr/local/bin"},
		{"cni", "host-local", "opt/cni/bin"},
		{"cni", "loopback", "opt/cni/bin"},
		{"cni", "ptp", "opt/cni/bin"},
		{"cni", "portmap", "opt/cni/bin"},
	}
	for _, b := range bins {
		if err := copyFile(a.bin(b.component, b.name), filepath.Join(node, b.dst, b.name), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// componentImages are the images the node preloads: every image that
// kubeadm config images list names for this version, built from source.
// The Kubernetes programs are linked against glibc, so their images have
// the Debian root file system (which also gives kube-proxy its iptables)
// as the base layer; etcd, CoreDNS and pause are static.
func (a *assembly) componentImages(ctx context.Context) ([]ociImage, error) {
	layers := filepath.Join(a.work, "layers")
	if err := os.MkdirAll(layers, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", layers, err)
	}
	base := filepath.Join(layers, "debian-base.tar")
	if err := a.ensureBaseLayer(ctx, base); err != nil {
		return nil, err
	}
	layer := func(name, src, dst string) (string, error) {
		p := filepath.Join(layers, name+".tar")
		return p, writeLayer(p, map[string]string{dst: src})
	}
	var images []ociImage
	for _, name := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"} {
		l, err := layer(name, a.bin("kubernetes", name), "usr/local/bin/"+name)
		if err != nil {
			return nil, err
		}
		images = append(images, ociImage{tags: []string{"registry.k8s.io/" + name + ":v" + KubernetesVersion}, layers: []string{base, l}, env: []string{imagePath}})
	}
	etcd, err := layer("etcd", a.bin("etcd", "etcd"), "usr/local/bin/etcd")
	if err != nil {
		return nil, err
	}
	coredns, err := layer("coredns", a.bin("coredns", "coredns"), "coredns")
	if err != nil {
		return nil, err
	}
	pause, err := layer("pause", a.bin("pause", "pause"), "pause")
	if err != nil {
		return nil, err
	}
	images = append(images,
		ociImage{tags: []string{"registry.k8s.io/etcd:" + EtcdVersion + "-0"}, layers: []string{etcd}, env: []string{imagePath}},
		ociImage{tags: []string{"registry.k8s.io/coredns/coredns:" + CoreDNSVersion}, layers: []string{coredns}, entrypoint: []string{"/coredns"}, env: []string{imagePath}},
		ociImage{tags: []string{"registry.k8s.io/pause:" + PauseVersion}, layers: []string{pause}, entrypoint: []string{"/pause"}, env: []string{imagePath}},
	)
	return images, checkKubeadmImages(ctx, a.bin("kubernetes", "kubeadm"), images)
}

// checkKubeadmImages makes sure the node preloads every image kubeadm will
// ask for: none of them can be pulled.
func checkKubeadmImages(ctx context.Context, kubeadm string, images []ociImage) error {
	out, err := exec.CommandContext(ctx, kubeadm, "config", "images", "list", "--kubernetes-version", "v"+KubernetesVersion).Output()
	if err != nil {
		return fmt.Errorf("kubeadm config images list: %w%s", err, stderrOf(err))
	}
	var have []string
	for _, img := range images {
		have = append(have, img.tags...)
	}
	var missing []string
	for _, want := range strings.Fields(string(out)) {
		if !slices.Contains(have, want) {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("kubeadm %s asks for images this build does not make: %s", KubernetesVersion, strings.Join(missing, ", "))
	}
	return nil
}

func (a *assembly) ensureBaseLayer(ctx context.Context, path string) error {
	st, err := os.ReadFile(filepath.Join(a.rootfs, stampFile))
	if err != nil {
		return fmt.Errorf("reading the root file system's stamp: %w", err)
	}
	stampPath := path + ".stamp"
	if got, err := os.ReadFile(stampPath); err == nil && bytes.Equal(got, st) {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
	}
	fmt.Fprintf(a.progress, "packing the Debian base layer of the control-plane images\n")
	if err := tarDir(ctx, a.rootfs, path); err != nil {
		return err
	}
	return os.WriteFile(stampPath, st, 0o644)
}

// importDir streams dir as a tar into `docker import`, with the settings
// kind's base image has: systemd as init behind kind's entrypoint. (Its
// STOPSIGNAL cannot be set by import or commit; kind removes node containers
// with docker rm -f, which does not need it.)
func importDir(ctx context.Context, dir, image string) error {
	tarCmd := exec.CommandContext(ctx, "tar", "--numeric-owner", "--exclude=./"+stampFile, "-C", dir, "-c", ".")
	imp := exec.CommandContext(ctx, "docker", "import",
		"--change", "ENV container=docker",
		"--change", `ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`,
		"-", image)
	// An os.Pipe closed here once both have it: if docker import stops
	// early, tar gets EPIPE instead of waiting for a reader forever.
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("piping tar into docker import: %w", err)
	}
	var tarErr, impOut bytes.Buffer
	tarCmd.Stdout, tarCmd.Stderr = w, &tarErr
	imp.Stdin, imp.Stdout, imp.Stderr = r, &impOut, &impOut
	startErr := tarCmd.Start()
	if startErr == nil {
		startErr = imp.Start()
	}
	r.Close()
	w.Close()
	if startErr != nil {
		_ = tarCmd.Wait()
		return fmt.Errorf("starting tar | docker import: %w", startErr)
	}
	impErr := imp.Wait()
	waitErr := tarCmd.Wait()
	if impErr != nil {
		return fmt.Errorf("docker import: %v: %s", impErr, lastLines(impOut.String(), 10))
	}
	if waitErr != nil {
		return fmt.Errorf("tar of %s: %v: %s", dir, waitErr, lastLines(tarErr.String(), 10))
	}
	return nil
}

// preload runs the staged node image with containerd alone (no systemd),
// imports the component images into its k8s.io namespace pinned and
// unpacked on first use, as kind's node image build does, and commits the
// result as Image.
func (a *assembly) preload(ctx context.Context, stage string, images []ociImage) error {
	name := fmt.Sprintf("gw10-kind-image-build-%d", os.Getpid())
	if out, err := exec.CommandContext(ctx, "docker", "run", "-d", "--privileged", "--entrypoint=sleep",
		"--name", name, stage, "infinity").CombinedOutput(); err != nil {
		return fmt.Errorf("starting the build container: %v: %s", err, strings.TrimSpace(string(out)))
	}
	defer func() { _ = exec.Command("docker", "rm", "-f", "-v", name).Run() }() // best effort, as above
	dexec := func(stdin io.Reader, args ...string) error {
		cmd := exec.CommandContext(ctx, "docker", append([]string{"exec", "-i", name}, args...)...)
		cmd.Stdin = stdin
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("in the build container, %s: %v: %s", strings.Join(args, " "), err, lastLines(string(out), 10))
		}
		return nil
	}
	if err := dexec(nil, "bash", "-c", "nohup containerd > /var/log/containerd-build.log 2>&1 &"); err != nil {
		return err
	}
	if err := dexec(nil, "bash", "-c", `for i in $(seq 1 60); do ctr version >/dev/null 2>&1 && exit 0; sleep 1; done
echo "containerd did not answer in 60s"; tail -20 /var/log/containerd-build.log; exit 1`); err != nil {
		return err
	}
	for _, img := range images {
		fmt.Fprintf(a.progress, "preloading %s\n", strings.Join(img.tags, ", "))
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeDockerArchive(pw, img)) }()
		err := dexec(pr, "ctr", "--namespace=k8s.io", "images", "import", "--label=io.cri-containerd.pinned=pinned",
			"--all-platforms", "--no-unpack", "--digests", "-")
		pr.Close()
		if err != nil {
			return err
		}
	}
	// sleep, the container's init, does not reap: a stopped containerd
	// stays a zombie (state Z), which counts as gone.
	if err := dexec(nil, "bash", "-c", `pkill -x containerd; for i in $(seq 1 30); do ps -C containerd -o stat= | grep -qv '^Z' || exit 0; sleep 1; done
echo "containerd did not stop in 30s"; exit 1`); err != nil {
		return err
	}
	if err := dexec(nil, "rm", "-f", "/var/log/containerd-build.log"); err != nil {
		return err
	}
	fmt.Fprintf(a.progress, "committing %s\n", Image)
	out, err := exec.CommandContext(ctx, "docker", "commit",
		"--change", `ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`,
		"--change", `CMD []`,
		"--change", "LABEL "+recipeLabel+"="+a.recipe,
		name, Image).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker commit: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func jsonField(data []byte, field string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("reading JSON: %w", err)
	}
	if e, ok := m["Error"].(string); ok && e != "" {
		return "", fmt.Errorf("%s", e)
	}
	v, _ := m[field].(string)
	if v == "" {
		return "", fmt.Errorf("no %s in %s", field, words.FirstLine(string(data)))
	}
	return v, nil
}
