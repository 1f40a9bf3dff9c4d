package kindimage

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
	"sigs.k8s.io/kind/pkg/apis/config/defaults"
)

func TestDockerArchiveIsWhatCtrImportReads(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "kube-apiserver")
	if err := os.WriteFile(bin, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "base.tar")
	if err := writeLayer(base, map[string]string{"etc/os-release": bin}); err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(dir, "top.tar")
	if err := writeLayer(top, map[string]string{"usr/local/bin/kube-apiserver": bin}); err != nil {
		t.Fatal(err)
	}
	img := ociImage{tags: []string{"registry.k8s.io/kube-apiserver:v1.37.2"}, layers: []string{base, top}, env: []string{imagePath}}
	var buf bytes.Buffer
	if err := writeDockerArchive(&buf, img); err != nil {
		t.Fatal(err)
	}
	files := readTar(t, buf.Bytes())

	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(manifest) != 1 || !slices.Equal(manifest[0].RepoTags, img.tags) || len(manifest[0].Layers) != 2 {
		t.Fatalf("manifest.json = %+v, want one image tagged %v with 2 layers", manifest, img.tags)
	}
	var config struct {
		Architecture, OS string
		Config           struct{ Env []string }
		RootFS           struct {
			Type    string
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(files[manifest[0].Config], &config); err != nil {
		t.Fatalf("config %s: %v", manifest[0].Config, err)
	}
	if config.Architecture != "amd64" || config.OS != "linux" || config.RootFS.Type != "layers" || !slices.Equal(config.Config.Env, img.env) {
		t.Errorf("config = %+v", config)
	}
	for i, l := range manifest[0].Layers {
		sum := sha256.Sum256(files[l])
		if want := "sha256:" + hex.EncodeToString(sum[:]); config.RootFS.DiffIDs[i] != want {
			t.Errorf("layer %d: diff_id %s, want the layer's digest %s", i, config.RootFS.DiffIDs[i], want)
		}
	}
	topFiles := readTar(t, files[manifest[0].Layers[1]])
	if string(topFiles["usr/local/bin/kube-apiserver"]) != "#!/bin/true\n" {
		t.Errorf("top layer holds %v, want usr/local/bin/kube-apiserver", keys(topFiles))
	}
	for _, d := range []string{"usr/", "usr/local/", "usr/local/bin/"} {
		if _, ok := topFiles[d]; !ok {
			t.Errorf("top layer has no directory entry %s (has %v)", d, keys(topFiles))
		}
	}
}

func readTar(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("reading tar: %v", err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = b
	}
}

func keys(m map[string][]byte) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

func TestCRIBaseSpecAddsKindsHookAndDropsRlimits(t *testing.T) {
	spec := []byte(`{"ociVersion":"1.2.0","process":{"args":["sh"],"rlimits":[{"type":"RLIMIT_NOFILE","hard":1024,"soft":1024}]},"hooks":{"createContainer":[{"path":"/other"}]}}`)
	out, err := criBaseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Process map[string]any
		Hooks   struct{ CreateContainer []struct{ Path string } }
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Process["rlimits"]; ok {
		t.Error("rlimits kept; kind's cri-base.json has none")
	}
	if n := len(got.Hooks.CreateContainer); n != 2 || got.Hooks.CreateContainer[1].Path != "/kind/bin/mount-product-files.sh" {
		t.Errorf("createContainer hooks = %+v, want the existing one then /kind/bin/mount-product-files.sh", got.Hooks.CreateContainer)
	}
	if _, err := criBaseSpec([]byte("not json")); err == nil {
		t.Error("criBaseSpec accepted output that is not JSON")
	}
}

func TestKubernetesBinariesBuildInOneGoBuild(t *testing.T) {
	comps := components(KubernetesVersion)
	byName := map[string]goComponent{}
	for _, c := range comps {
		byName[c.name] = c
	}
	kube := byName["kubernetes"].invocations("/out")
	if len(kube) != 1 || len(kube[0].pkgs) != 7 || kube[0].out != "/out/" {
		t.Errorf("kubernetes invocations = %+v, want one go build of 7 packages into /out/", kube)
	}
	etcd := byName["etcd"].invocations("/out")
	if len(etcd) != 1 || etcd[0].out != "/out/etcd" {
		t.Errorf("etcd invocations = %+v, want one build to /out/etcd (its package path ends in v3)", etcd)
	}
	if !strings.Contains(byName["kubernetes"].ldflags, "gitVersion=v"+KubernetesVersion) {
		t.Errorf("kubernetes ldflags %q do not stamp the version", byName["kubernetes"].ldflags)
	}
}

func TestRecipeHashNamesTheInputs(t *testing.T) {
	comps := components(KubernetesVersion)
	a := recipeHash(comps, DefaultMirror)
	if b := recipeHash(components(KubernetesVersion), DefaultMirror); a != b {
		t.Errorf("recipe hash not stable: %s then %s", a, b)
	}
	if b := recipeHash(comps, "http://mirror.example/debian"); a == b {
		t.Error("recipe hash ignores the Debian mirror")
	}
	other := components(KubernetesVersion)
	other[1].version = "v3.6.16"
	if b := recipeHash(other, DefaultMirror); a == b {
		t.Error("recipe hash ignores a component's version")
	}
}

func TestUpToDateNeedsStampAndFiles(t *testing.T) {
	dir := t.TempDir()
	if upToDate(dir, "s", []string{"kubelet"}) {
		t.Error("empty dir is up to date")
	}
	if err := os.WriteFile(filepath.Join(dir, stampFile), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if upToDate(dir, "s", []string{"kubelet"}) {
		t.Error("up to date without its output")
	}
	if err := os.WriteFile(filepath.Join(dir, "kubelet"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if !upToDate(dir, "s", []string{"kubelet"}) {
		t.Error("not up to date with stamp and output")
	}
	if upToDate(dir, "other", []string{"kubelet"}) {
		t.Error("up to date with another stamp")
	}
}

func TestCheckKubeadmImagesNamesWhatIsMissing(t *testing.T) {
	kubeadm := filepath.Join(t.TempDir(), "kubeadm")
	script := "#!/bin/sh\necho registry.k8s.io/kube-apiserver:v1.37.2\necho registry.k8s.io/etcd:3.7.0-0\n"
	if err := os.WriteFile(kubeadm, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	have := []ociImage{{tags: []string{"registry.k8s.io/kube-apiserver:v1.37.2"}}}
	err := checkKubeadmImages(context.Background(), kubeadm, have)
	if err == nil || !strings.Contains(err.Error(), "registry.k8s.io/etcd:3.7.0-0") {
		t.Fatalf("err = %v, want it to name the missing etcd image", err)
	}
	have = append(have, ociImage{tags: []string{"registry.k8s.io/etcd:3.7.0-0"}})
	if err := checkKubeadmImages(context.Background(), kubeadm, have); err != nil {
		t.Fatalf("all images there: %v", err)
	}
}

func TestNodeImageChoice(t *testing.T) {
	ctx := context.Background()
	noPull := func(context.Context, string) error {
		return errors.New(`docker pull: Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host`)
	}
	tests := []struct {
		name      string
		have      []string
		pull      func(context.Context, string) error
		want      string
		wantBuild bool
		wantSay   string
	}{
		{name: "should use the locally built image when the engine has it", have: []string{Image, defaults.Image}, pull: noPull, want: Image, wantSay: "using the locally built"},
		{name: "should use kind's image when the engine has it", have: []string{defaults.Image}, pull: noPull, want: defaults.Image},
		{name: "should use kind's image when a registry serves it", pull: func(context.Context, string) error { return nil }, want: defaults.Image},
		{name: "should build locally when no registry answers, and say why", pull: noPull, want: Image, wantBuild: true, wantSay: "no such host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			built := false
			c := chooser{
				have:  func(_ context.Context, img string) bool { return slices.Contains(tt.have, img) },
				pull:  tt.pull,
				build: func(context.Context) error { built = true; return nil },
			}
			var out bytes.Buffer
			got, err := c.choose(ctx, &out)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || built != tt.wantBuild {
				t.Errorf("chose %s (built %t), want %s (built %t)", got, built, tt.want, tt.wantBuild)
			}
			if !strings.Contains(out.String(), tt.wantSay) {
				t.Errorf("said %q, want it to contain %q", out.String(), tt.wantSay)
			}
		})
	}
}

// The kind version whose files the image copies is the one the harness
// runs (its tool directive in harness/go.mod).
func TestKindVersionMatchesTheHarness(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range mf.Require {
		if r.Mod.Path == "sigs.k8s.io/kind" && r.Mod.Version != KindVersion {
			t.Errorf("harness/go.mod requires kind %s, kindimage copies kind %s's node files", r.Mod.Version, KindVersion)
		}
	}
}
