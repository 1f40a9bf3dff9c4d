package kindbackend

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	kindexec "sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/yaml"
)

func TestFailCgroupV1PatchOnlyOnCgroupV1Hosts(t *testing.T) {
	cfg := &v1alpha4.Cluster{}
	ForCgroupV1Host(cfg, false)
	if len(cfg.KubeadmConfigPatches) != 0 {
		t.Fatalf("cgroup v2 host got patches %q", cfg.KubeadmConfigPatches)
	}
	ForCgroupV1Host(cfg, true)
	ForCgroupV1Host(cfg, true)
	if len(cfg.KubeadmConfigPatches) != 1 {
		t.Fatalf("cgroup v1 host: %d patches, want exactly one", len(cfg.KubeadmConfigPatches))
	}
	var patch map[string]any
	if err := yaml.Unmarshal([]byte(cfg.KubeadmConfigPatches[0]), &patch); err != nil {
		t.Fatalf("patch is not YAML: %v", err)
	}
	if patch["kind"] != "KubeletConfiguration" || patch["failCgroupV1"] != false {
		t.Errorf("patch = %v, want a KubeletConfiguration with failCgroupV1: false", patch)
	}
}

func TestKindErrorShowsTheCommandsOutput(t *testing.T) {
	run := &kindexec.RunError{
		Command: []string{"docker", "pull", "kindest/node:v1.37.0"},
		Output:  []byte("Error response from daemon: Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io: no such host\n"),
		Inner:   errors.New("exit status 1"),
	}
	err := kindError("creating kind cluster gw10", run)
	for _, want := range []string{"creating kind cluster gw10", "exit status 1", "docker pull kindest/node:v1.37.0", "no such host"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if !errors.Is(err, run) {
		t.Error("the kind error is not wrapped")
	}
	plain := kindError("creating kind cluster gw10", errors.New("boom"))
	if plain.Error() != "creating kind cluster gw10: boom" {
		t.Errorf("plain error = %q", plain)
	}
}

func TestWorkbookKindConfig(t *testing.T) {
	cfg, err := LoadKindConfig(filepath.Join("..", "..", "..", KindConfigPath))
	if err != nil {
		t.Fatalf("the workbook's kind config: %v", err)
	}
	if len(cfg.Nodes) != 1 {
		t.Fatalf("nodes: %+v", cfg.Nodes)
	}
}

func TestLoadKindConfigRejectsBadConfigs(t *testing.T) {
	for name, body := range map[string]string{
		"wrong kind":       "kind: Pod\napiVersion: kind.x-k8s.io/v1alpha4\nnodes: [{role: control-plane}]\n",
		"no control plane": "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes: [{role: worker}]\n",
		"unknown field":    "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodez: []\n",
	} {
		path := filepath.Join(t.TempDir(), "kind.yaml")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadKindConfig(path); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
