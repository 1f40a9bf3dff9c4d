// Package ctrlproc runs the learner's controller as a separate process, the
// way it runs in a cluster: its own binary, its own identity, flags for the
// data plane and metrics. It keeps the log, notices exits and panics, and
// scrapes controller-runtime's metrics.
package ctrlproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/10xdev/gw10/harness/sandbox"
)

// Config says how to start the controller.
type Config struct {
	Binary       string
	Kubeconfig   string // the controller's own identity
	DataplaneURL string
	// LogFile receives the full log (appended across restarts).
	LogFile string
	// Args are more flags for the controller (the bench's worker count).
	Args []string
	// LeaseNamespace, when set, is given to the controller as POD_NAMESPACE,
	// the variable a Deployment sets from the Downward API: the namespace of
	// its leader election's Lease, which controller-runtime cannot find out
	// of a cluster on its own (LeaderElectionNamespace).
	LeaseNamespace string
	// Sandbox, when set, runs the controller as its user under Limits
	// (Binary and Kubeconfig must be in its directory, see runner), and Kill
	// kills every process of that user; nil runs it as this process's user.
	Sandbox *sandbox.Sandbox
	Limits  sandbox.Limits
	// Connect are the host:port addresses a sandboxed controller may dial
	// (the API server, the data plane); its metrics and probe addresses
	// are relayed out to the harness. Nothing else on the machine answers it.
	Connect []string
}

// Process is one running controller.
type Process struct {
	cfg         Config
	cmd         *exec.Cmd
	MetricsAddr string
	ProbeAddr   string
	log         *Log
	done        chan struct{}
	waitErr     error
	onPurpose   atomic.Bool // stopped by the harness, not by itself
}

// Start launches the controller. Its log goes to log (shared across restarts).
func Start(ctx context.Context, cfg Config, log *Log) (*Process, error) {
	metrics, err := freePort()
	if err != nil {
		return nil, err
	}
	probe, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--metrics-bind-address=" + metrics,
		"--health-probe-bind-address=" + probe,
		"--dataplane-url=" + cfg.DataplaneURL,
	}
	args = append(args, cfg.Args...)
	env := []string{"KUBECONFIG=" + cfg.Kubeconfig}
	if cfg.LeaseNamespace != "" {
		env = append(env, "POD_NAMESPACE="+cfg.LeaseNamespace)
	}
	var cmd *exec.Cmd
	if cfg.Sandbox != nil {
		// A session of its own, killed with the harness; see sandbox.
		cmd = cfg.Sandbox.Command(sandbox.Spec{Path: cfg.Binary, Args: args, Env: env, Limits: cfg.Limits,
			Connect: cfg.Connect, Serve: []string{metrics, probe}})
	} else {
		cmd = exec.Command(cfg.Binary, args...)
		cmd.Env = append(os.Environ(), env...)
		// Its own process group (a terminal's Ctrl-C reaches the harness, which
		// stops it in order), and killed with the harness if the harness dies.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	pr, pw := io.Pipe()
	var out io.Writer = pw
	if cfg.Sandbox != nil && cfg.Limits.Output > 0 {
		out = &limitWriter{w: pw, max: cfg.Limits.Output, left: cfg.Limits.Output, log: log, sb: cfg.Sandbox}
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting controller %s: %w", cfg.Binary, err)
	}
	p := &Process{cfg: cfg, cmd: cmd, MetricsAddr: metrics, ProbeAddr: probe, log: log, done: make(chan struct{})}
	log.Mark(fmt.Sprintf("--- controller started (pid %d) ---", cmd.Process.Pid))
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		log.Consume(pr)
	}()
	go func() {
		p.waitErr = cmd.Wait()
		pw.Close()
		<-copied
		log.Mark(fmt.Sprintf("--- controller exited: %v ---", exitText(p.waitErr)))
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, string) {
	select {
	case <-p.done:
		return true, exitText(p.waitErr)
	default:
		return false, ""
	}
}

// StoppedOnPurpose reports whether the harness stopped it (Stop or Kill).
func (p *Process) StoppedOnPurpose() bool { return p.onPurpose.Load() }

// WaitReady polls until /readyz answers 200 and /metrics can be scraped, the
// process exits, or timeout.
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	client := &http.Client{Timeout: time.Second}
	var metricsErr error // /readyz answered, the metrics server not yet
	for {
		resp, err := client.Get("http://" + p.ProbeAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				// The manager starts its metrics server beside the probes,
				// not before them: ready means both answer.
				if _, metricsErr = p.Scrape(ctx); metricsErr == nil {
					return nil
				}
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("the controller exited before it was ready (%s)", exitText(p.waitErr))
		case <-deadline.C:
			if metricsErr != nil {
				return fmt.Errorf("the controller answered /readyz but not /metrics on %s within %s (does main pass --metrics-bind-address to the manager?): %v",
					p.MetricsAddr, timeout, metricsErr)
			}
			return fmt.Errorf("the controller did not answer /readyz on %s within %s", p.ProbeAddr, timeout)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop sends SIGTERM and waits up to grace for a clean exit, then SIGKILLs.
func (p *Process) Stop(grace time.Duration) {
	if exited, _ := p.Exited(); exited {
		return
	}
	p.onPurpose.Store(true)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Kill()
	}
}

// Kill SIGKILLs the controller's process group (in a sandbox: every
// process of the sandbox's user, whatever it started) and waits for it to end.
func (p *Process) Kill() {
	p.onPurpose.Store(true)
	if sb := p.cfg.Sandbox; sb != nil {
		left, err := sb.KillAll(context.Background())
		if err != nil {
			p.log.Mark("--- " + err.Error() + " ---")
		}
		if len(left) > 1 {
			sb.Record(fmt.Sprintf("controller: killed %d processes with it (what it started)", len(left)-1))
		}
	} else {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-p.done
}

// limitWriter passes the controller's output on until its limit, then
// drops it (still read: the controller never blocks on a full pipe) and
// says so once in the log.
type limitWriter struct {
	w    io.Writer
	max  int64
	left int64
	log  *Log
	sb   *sandbox.Sandbox
	cut  bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.left <= 0 {
		if !l.cut {
			l.cut = true
			l.log.Mark("--- the sandbox cut off the controller's output here: its limit is reached ---")
			l.sb.Record(fmt.Sprintf("controller: output cut off after %d MiB", l.max>>20))
		}
		return len(p), nil
	}
	n := int64(len(p))
	if n > l.left {
		p = p[:l.left]
	}
	l.left -= int64(len(p))
	if _, err := l.w.Write(p); err != nil {
		return 0, err
	}
	return int(n), nil
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal " + strconv.Itoa(int(ws.Signal())) + " (" + ws.Signal().String() + ")"
		}
		return "exit status " + strconv.Itoa(ee.ExitCode())
	}
	return err.Error()
}

// freePort finds a port the controller can bind a moment later. The port is
// free when found and released before the controller binds it, so another
// process may take it in between: the kernel hands out ports of its
// ephemeral range to every outgoing connection (the harness's clients, the
// API server's, etcd's), so a port is chosen below that range, where only a
// listener asking for it by number takes it. A start that still loses its
// port says so in its log ("address already in use") and is retried (see
// PortTaken).
func freePort() (string, error) {
	low := ephemeralLow()
	for range 20 {
		port := portFloor + rand.IntN(low-portFloor)
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // taken: try another
		}
		addr := ln.Addr().String()
		if err := ln.Close(); err != nil {
			return "", fmt.Errorf("releasing port %d: %w", port, err)
		}
		return addr, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// portFloor is the lowest port freePort picks: above the ports services
// usually claim by number.
const portFloor = 20000

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// default 32768 when it cannot be read).
func ephemeralLow() int {
	const def = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return def
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return def
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low <= portFloor+1000 {
		return def
	}
	return low
}

// PortTaken reports whether lines (a start's log) say the process could
// not listen on its metrics or probe address because another process had
// taken it: the harness's doing (see freePort), not the controller's.
func (p *Process) PortTaken(lines []string) bool {
	for _, l := range lines {
		if strings.Contains(l, "address already in use") &&
			(strings.Contains(l, p.MetricsAddr) || strings.Contains(l, p.ProbeAddr)) {
			return true
		}
	}
	return false
}

// Log keeps the controller's output: all of it in a file, the recent lines
// with the time they arrived in memory, for failure reports and evidence.
type Log struct {
	mu    sync.Mutex
	lines []Line
	file  *os.File
	echo  io.Writer // non-nil with -v: stream lines as they come
}

// Line is one line of the controller's output and when it arrived.
type Line struct {
	At   time.Time
	Text string
}

// maxLines bounds the in-memory log.
const maxLines = 20000

// NewLog writes to path (created) and, if echo is non-nil, streams there too.
func NewLog(path string, echo io.Writer) (*Log, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating controller log: %w", err)
	}
	return &Log{file: f, echo: echo}, nil
}

// Close closes the file.
func (l *Log) Close() error { return l.file.Close() }

// Consume reads lines from r until EOF.
func (l *Log) Consume(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		l.add(sc.Text())
	}
	if sc.Err() != nil {
		// A line longer than the buffer: keep reading so the writer never
		// blocks, and say why the log stops.
		l.add(fmt.Sprintf("--- log reading stopped: %v ---", sc.Err()))
		_, _ = io.Copy(io.Discard, r)
	}
}

// Mark adds a harness line (start, exit) to the log.
func (l *Log) Mark(line string) { l.add(line) }

func (l *Log) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, Line{At: time.Now(), Text: line})
	if len(l.lines) > maxLines {
		l.lines = l.lines[len(l.lines)-maxLines:]
	}
	fmt.Fprintln(l.file, line)
	if l.echo != nil {
		fmt.Fprintln(l.echo, "  | "+line)
	}
}

// Last returns the last n lines.
func (l *Log) Last(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	from := max(0, len(l.lines)-n)
	out := make([]string, 0, len(l.lines)-from)
	for _, ln := range l.lines[from:] {
		out = append(out, ln.Text)
	}
	return out
}

// Since returns the lines that arrived at or after t.
func (l *Log) Since(t time.Time) []Line {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := len(l.lines)
	for i > 0 && !l.lines[i-1].At.Before(t) {
		i--
	}
	return append([]Line(nil), l.lines[i:]...)
}
