package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// TestTwoManagersWithDefaultFlagsRunSideBySide: `make run` starts the
// manager with its default flags. Two learners on one machine (or one
// learner's make run beside a make check) must not fight over a port: two
// managers started with no flags both serve their health probes, each on a
// port of its own. It runs on the solution and on the skeleton generated
// from it (make skeleton), whose cmd/main.go the learner runs.
func TestTwoManagersWithDefaultFlagsRunSideBySide(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	t.Parallel() // beside the package's other long runs (planes)
	st := steps.Default()
	backend := planes.acquire(t)
	s, err := scheme()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(backend.Admin(), client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := cluster.Kubeconfig(backend.Admin(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{st.SolutionDir, st.Dir} {
		t.Run(dir, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			mod := copyModule(t, filepath.Join(root, dir))
			crds, err := CRDsOf(mod)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := InstallCRDs(ctx, admin, crds, false); err != nil {
				t.Fatal(err)
			}
			bin, err := build(ctx, Options{StepDir: mod, GoEnv: workspaceFor(t, mod)}, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			var addrs []string
			for i := range 2 {
				addr, err := startWithDefaultFlags(t, bin, kubeconfig)
				if err != nil {
					t.Fatalf("manager %d of 2, started with no flags: %v", i+1, err)
				}
				addrs = append(addrs, addr)
			}
			if addrs[0] == addrs[1] {
				t.Fatalf("both managers report their health probe on %s", addrs[0])
			}
			for _, addr := range addrs {
				if err := readyz(addr); err != nil {
					t.Errorf("the probe of the manager on %s, with the other running: %v", addr, err)
				}
			}
		})
	}
}

// probeLineRE is controller-runtime's log line for the probe server, with
// the address it listens on: "starting server	{"name": "health probe",
// "addr": "[::]:41234"}".
var probeLineRE = regexp.MustCompile(`starting server.*"name": "health probe", "addr": "([^"]+)"`)

// startWithDefaultFlags runs the manager as make run does (no flags) until
// the test ends, and returns the address its health probe listens on, once
// it has logged it, while the process is still running.
func startWithDefaultFlags(t *testing.T, bin, kubeconfig string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	deadline := time.After(time.Minute)
	for {
		select {
		case <-done:
			return "", fmt.Errorf("it exited:\n%s", out.String())
		case <-deadline:
			return "", fmt.Errorf("it logged no health probe address within a minute:\n%s", out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if m := probeLineRE.FindStringSubmatch(out.String()); m != nil {
			return m[1], nil
		}
	}
}

// readyz asks the probe server at addr (as logged: "[::]:41234") for /readyz.
func readyz(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + net.JoinHostPort("127.0.0.1", port) + "/readyz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz answered %s", resp.Status)
	}
	return nil
}
