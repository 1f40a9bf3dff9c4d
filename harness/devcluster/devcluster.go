// Package devcluster runs the learner's dev cluster: an envtest control
// plane kept in the background between commands, reachable with kubectl
// through a kubeconfig in the repository, for doing the card's tasks by hand.
package devcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/10xdev/gw10/harness/assets"
	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/step"
)

// ContextName is the kubeconfig context of the dev cluster; the harness's
// existing-cluster backend trusts it because the harness created it.
const ContextName = "gw10-dev"

const (
	pidFile        = "serve.pid"
	logFile        = "serve.log"
	kubeconfigFile = "kubeconfig"
	startTimeout   = 2 * time.Minute
	stopTimeout    = 30 * time.Second
)

// Dir is where the dev cluster keeps its state: <root>/.gw10/cluster.
func Dir(root string) string { return filepath.Join(root, ".gw10", "cluster") }

// KubeconfigPath is the kubeconfig the dev cluster writes.
func KubeconfigPath(dir string) string { return filepath.Join(dir, kubeconfigFile) }

// Up starts the dev cluster unless one is already running, in which case it
// reuses it. A stale one (its server was killed) is cleaned up first. self
// is the gw10 binary, started as `self cluster-serve --dir dir` in its own session;
// st is the step whose chapter the printed next steps follow.
func Up(ctx context.Context, dir, self string, st step.Step, out io.Writer) error {
	switch cur := Status(ctx, dir); cur.State {
	case Running:
		fmt.Fprintf(out, "dev cluster already running (pid %d); reusing it\n", cur.PID)
		printNextSteps(out, dir, st)
		return nil
	case Stale:
		fmt.Fprintf(out, "found a stale dev cluster (%s); cleaning it up\n", cur.Detail)
		if err := cleanup(dir, cur.PID); err != nil {
			return err
		}
	}

	// Obtain the binaries here, in the foreground, so the one slow first
	// build shows its progress in this terminal.
	if _, err := assets.Ensure(ctx, assets.Options{Progress: out}); err != nil {
		return fmt.Errorf("obtaining envtest binaries: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	logf, err := os.Create(filepath.Join(dir, logFile))
	if err != nil {
		return fmt.Errorf("creating server log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(self, "cluster-serve", "--dir", dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives this command and its terminal
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the dev cluster server: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		_ = cmd.Process.Kill()
		return fmt.Errorf("writing pid file: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	fmt.Fprintln(out, "starting kube-apiserver and etcd ...")
	deadline := time.After(startTimeout)
	for {
		if Status(ctx, dir).State == Running {
			fmt.Fprintf(out, "dev cluster running (pid %d)\n", cmd.Process.Pid)
			printNextSteps(out, dir, st)
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("the dev cluster server exited (%v); its log:\n%s", err, tail(filepath.Join(dir, logFile), 20))
		case <-deadline:
			_ = cleanup(dir, cmd.Process.Pid)
			return fmt.Errorf("the dev cluster did not become ready within %s; its log:\n%s", startTimeout, tail(filepath.Join(dir, logFile), 20))
		case <-ctx.Done():
			_ = cleanup(dir, cmd.Process.Pid)
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Down stops the dev cluster and removes its state.
func Down(ctx context.Context, dir string, out io.Writer) error {
	st := Status(ctx, dir)
	if st.State == Absent {
		fmt.Fprintln(out, "no dev cluster running")
		return nil
	}
	if st.PID > 0 && cluster.Alive(st.PID) {
		_ = syscall.Kill(st.PID, syscall.SIGTERM)
		deadline := time.Now().Add(stopTimeout)
		for cluster.Alive(st.PID) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if err := cleanup(dir, st.PID); err != nil {
		return err
	}
	fmt.Fprintln(out, "dev cluster stopped and its data removed")
	return nil
}

// cleanup kills whatever still runs from dir and removes it.
func cleanup(dir string, pid int) error {
	if pid > 0 && cluster.Alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if _, err := cluster.KillProcessesUnder(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}

// State of the dev cluster.
type State int

const (
	Absent  State = iota // nothing there
	Running              // server alive and API server answering
	Stale                // state left behind: server dead or API server not answering
)

// StatusInfo describes the dev cluster as found on disk and on the network.
type StatusInfo struct {
	State  State
	PID    int
	Detail string
}

// Status inspects dir.
func Status(ctx context.Context, dir string) StatusInfo {
	b, err := os.ReadFile(filepath.Join(dir, pidFile))
	if errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(dir); err == nil {
			return StatusInfo{State: Stale, Detail: "state without a server"}
		}
		return StatusInfo{State: Absent}
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if !cluster.Alive(pid) {
		return StatusInfo{State: Stale, PID: pid, Detail: fmt.Sprintf("server pid %d is gone", pid)}
	}
	if err := ping(ctx, KubeconfigPath(dir)); err != nil {
		return StatusInfo{State: Stale, PID: pid, Detail: fmt.Sprintf("server pid %d is up but the API server does not answer: %v", pid, err)}
	}
	return StatusInfo{State: Running, PID: pid}
}

func ping(ctx context.Context, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.Timeout = 2 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = dc.RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err
}

// printNextSteps says how to use the cluster for st's chapter: the hand-run
// tasks its descriptor declares (step.Step.HandRun).
func printNextSteps(out io.Writer, dir string, st step.Step) {
	abs, _ := filepath.Abs(KubeconfigPath(dir))
	fmt.Fprintf(out, "\nUse it from your shell:\n\n  export KUBECONFIG=%s\n  kubectl get ns\n\n", abs)
	if len(st.HandRun) > 0 {
		fmt.Fprintf(out, "Then the chapter's tasks (%s), in %s/, each shell with that KUBECONFIG:\n", st.Chapter, st.Dir)
		fmt.Fprintln(out)
		for _, c := range st.HandRun {
			fmt.Fprintf(out, "  %-56s # %s\n", c.Command, c.Why)
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out, "This cluster has no kubelet and no built-in controllers: Services get no endpoints and")
	fmt.Fprintln(out, "namespaces never finish deleting. Stop it with: make cluster-down")
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
