package cluster

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindEngine(t *testing.T) {
	installed := func(names ...string) func(string) (string, error) {
		return func(n string) (string, error) {
			for _, m := range names {
				if m == n {
					return "/usr/bin/" + n, nil
				}
			}
			return "", exec.ErrNotFound
		}
	}
	running := func(names ...string) func(context.Context, string) (string, error) {
		return func(_ context.Context, n string) (string, error) {
			for _, m := range names {
				if m == n {
					return "", nil
				}
			}
			return "Cannot connect to the Docker daemon at unix:///var/run/docker.sock.\nmore", errors.New("exit status 1")
		}
	}
	tests := []struct {
		name    string
		probe   engineProbe
		want    string // engine, or "" for an error
		wantErr []string
	}{
		{"nothing installed", engineProbe{installed(), running()}, "", []string{"neither Docker nor Podman is installed", "make cluster-up"}},
		{"docker not running", engineProbe{installed("docker"), running()}, "", []string{"docker is installed but not running", "Cannot connect to the Docker daemon", "make cluster-up"}},
		{"docker running", engineProbe{installed("docker", "podman"), running("docker")}, "docker", nil},
		{"podman running", engineProbe{installed("docker", "podman"), running("podman")}, "podman", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := tt.probe.find(context.Background())
			if tt.want != "" {
				if err != nil || e.Name != tt.want {
					t.Fatalf("got %+v, %v; want %s", e, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("found %+v, want an error", e)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestContextGuard(t *testing.T) {
	for _, ok := range []string{"gw10-dev", "kind-gw10"} {
		if err := CheckContext(ok, nil); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	err := CheckContext("prod-eu", nil)
	if err == nil || !strings.Contains(err.Error(), "--allow-context prod-eu") {
		t.Fatalf("prod-eu: %v; want a refusal naming --allow-context", err)
	}
	if err := CheckContext("prod-eu", []string{"prod-eu"}); err != nil {
		t.Fatalf("an explicitly allowed context was refused: %v", err)
	}
}

func TestExistingBackendRefusesAForeignCurrentContext(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "config")
	body := `apiVersion: v1
kind: Config
clusters: [{name: prod, cluster: {server: "https://203.0.113.1:6443"}}]
users: [{name: admin, user: {token: x}}]
contexts: [{name: prod-eu, context: {cluster: prod, user: admin}}]
current-context: prod-eu
`
	if err := os.WriteFile(kc, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kc)
	if _, err := NewExistingBackend("", nil); err == nil || !strings.Contains(err.Error(), `refusing to run the checks on kubeconfig context "prod-eu"`) {
		t.Fatalf("want a refusal, got %v", err)
	}
	if _, err := NewExistingBackend("", []string{"prod-eu"}); err != nil {
		t.Fatalf("an allowed context: %v", err)
	}
}

// TestKindScriptsFailFastWithoutAnEngine runs scripts/kind-up.sh and
// kind-down.sh with no container engine on PATH.
func TestKindScriptsFailFastWithoutAnEngine(t *testing.T) {
	bin := t.TempDir() // only what the scripts need before the preflight
	for _, tool := range []string{"bash", "dirname", "cat", "grep"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s not found", tool)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	run := func(script string, wants ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join("..", "..", "scripts", script))
		cmd.Env = []string{"PATH=" + bin, "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("%s: %v, want exit status 1\n%s", script, err, out)
		}
		for _, want := range wants {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s output lacks %q:\n%s", script, want, out)
			}
		}
	}
	for _, script := range []string{"kind-up.sh", "kind-down.sh"} {
		run(script, "neither Docker nor Podman is installed", "make cluster-up")
	}
	// A Docker client whose daemon does not answer, as on a machine with the
	// docker CLI but no engine.
	fake := "#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	run("kind-up.sh", "docker is installed but not running", "make cluster-up")
}
