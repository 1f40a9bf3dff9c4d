package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/sandbox"
)

var errStopped = errors.New("the controller is not running")

// controllerFlags are the step's ControllerFlags that binary defines, as
// arguments, by name.
func controllerFlags(ctx context.Context, binary string, sb *sandbox.Sandbox, flags map[string]string) []string {
	var args []string
	for _, name := range slices.Sorted(maps.Keys(flags)) {
		if binaryHasFlag(ctx, binary, sb, name) {
			args = append(args, fmt.Sprintf("--%s=%s", name, flags[name]))
		}
	}
	return args
}

// binaryHasFlag reports whether the learner's binary defines the flag name,
// from its -h output, run as the controller runs: in the sandbox sb when
// there is one, since in a grade no learner code runs outside it.
func binaryHasFlag(ctx context.Context, binary string, sb *sandbox.Sandbox, name string) bool {
	if sb == nil {
		return hasFlag(ctx, binary, name)
	}
	res, err := sb.Run(ctx, sandbox.Spec{Path: binary, Args: []string{"-h"}}, 10*time.Second, "the controller's -h")
	return err == nil && flagIn(string(res.Output), name)
}

// controller is the handle checks use on the learner's controller process:
// it outlives each process (a check may kill and start it).
type controller struct {
	cfg   ctrlproc.Config
	log   *ctrlproc.Log
	ready time.Duration
	// leases, when set, reads and deletes the Leases in cfg.LeaseNamespace
	// (releaseLeases): a restart must not wait for a killed process's lease.
	leases client.Client

	mu   sync.Mutex
	proc *ctrlproc.Process // the current process; replaced by Start
	// scoped says the current process was started by StartIn, with a
	// narrower scope than cfg's.
	scoped bool
}

func (c *controller) current() *ctrlproc.Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.proc
}

// Start runs a new process and waits until it is ready. A process that
// could not listen because another took its port first (the harness picks
// the ports, see ctrlproc.PortTaken) is started again on other ports; one
// that exits before it is ready for any other reason fails the start with
// its last lines (*exitedEarly).
func (c *controller) Start(ctx context.Context) error { return c.start(ctx, c.cfg, false) }

// StartIn runs a new process with --namespaces=namespaces (the scaffold's
// flag, after any of cfg's: the last one counts) and says whether it
// watches only those. A binary without the flag exits at once saying so;
// it is then started as Start starts it. Nothing of the learner's runs
// outside the process's sandbox to find that out.
func (c *controller) StartIn(ctx context.Context, namespaces []string) (bool, error) {
	cfg := c.cfg
	cfg.Args = append(slices.Clone(cfg.Args), "--"+namespacesFlag+"="+strings.Join(namespaces, ","))
	err := c.start(ctx, cfg, true)
	if early, ok := errors.AsType[*exitedEarly](err); ok && unknownFlag(early.lines, namespacesFlag) {
		c.log.Mark("--- the controller has no --" + namespacesFlag + " flag: starting it again watching every namespace ---")
		return false, c.Start(ctx)
	}
	return err == nil, err
}

// unknownFlag reports whether lines say the flag name is not defined (the
// flag package's words).
func unknownFlag(lines []string, name string) bool {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasSuffix(l, "flag provided but not defined: -"+name) || strings.HasSuffix(l, "unknown flag: --"+name) {
			return true
		}
	}
	return false
}

// startedIn says the current process runs with a scope of StartIn's.
func (c *controller) startedIn() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scoped
}

func (c *controller) start(ctx context.Context, cfg ctrlproc.Config, scoped bool) error {
	if c.current() != nil {
		c.releaseLeases(ctx)
	}
	for attempt := 1; ; attempt++ {
		since := time.Now()
		p, err := ctrlproc.Start(ctx, cfg, c.log)
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.proc, c.scoped = p, scoped
		c.mu.Unlock()
		err = p.WaitReady(ctx, c.ready)
		if err == nil {
			return nil
		}
		if exited, _ := p.Exited(); !exited {
			return err
		}
		lines := lineTexts(c.log.Since(since))
		if attempt < startAttempts && p.PortTaken(lines) {
			c.log.Mark("--- another process took the controller's metrics or probe port before it could listen (the harness's doing, not the controller's): starting it again on other ports ---")
			continue
		}
		return &exitedEarly{err: err, lines: lines}
	}
}

// releaseLeases deletes the Leases a previous process of this handle took
// in its lease namespace before a new one starts. That process is gone
// (killed by a check, or exited), so it leads nothing; a Lease it did not
// release (SIGKILL gives it no chance) would keep the new process waiting
// out its duration (controller-runtime's default: 15 s) before it leads and
// starts its workers, and every wait for its first reconciles would take
// that for a controller that does nothing. In a cluster the same wait
// follows a crash; the harness, which killed the holder, knows it is dead.
func (c *controller) releaseLeases(ctx context.Context) {
	if c.leases == nil || c.cfg.LeaseNamespace == "" {
		return
	}
	if p := c.current(); p != nil {
		if exited, _ := p.Exited(); !exited {
			return // still running: its lease is its own
		}
	}
	var leases coordinationv1.LeaseList
	if err := c.leases.List(ctx, &leases, client.InNamespace(c.cfg.LeaseNamespace)); err != nil {
		c.log.Mark(fmt.Sprintf("--- the harness could not list the Leases in %s to release the stopped controller's: %v ---", c.cfg.LeaseNamespace, err))
		return
	}
	for i := range leases.Items {
		l := &leases.Items[i]
		if err := c.leases.Delete(ctx, l); err != nil && !apierrors.IsNotFound(err) {
			c.log.Mark(fmt.Sprintf("--- the harness could not release Lease %s/%s of the stopped controller: %v ---", l.Namespace, l.Name, err))
			continue
		}
		c.log.Mark(fmt.Sprintf("--- the harness released Lease %s/%s, held by the stopped controller (%s) ---", l.Namespace, l.Name, holder(l)))
	}
}

// holder is a Lease's holder, as its spec names it.
func holder(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return "no holder"
	}
	return *l.Spec.HolderIdentity
}

// startAttempts bounds the starts of one Start (see ctrlproc.PortTaken).
const startAttempts = 3

// exitedEarly is a start whose process exited before it was ready: the
// error, then the process's own last lines, which say why (a start in the
// middle of a check shows them nowhere else).
type exitedEarly struct {
	err   error
	lines []string
}

// exitedEarlyLines is how many of its last lines the error shows.
const exitedEarlyLines = 8

func (e *exitedEarly) Error() string {
	lines := ctrlproc.Excerpt(e.lines)
	if len(lines) > exitedEarlyLines {
		lines = lines[len(lines)-exitedEarlyLines:]
	}
	if len(lines) == 0 {
		return e.err.Error() + "; it printed nothing"
	}
	return e.err.Error() + "; its last lines:\n  | " + strings.Join(lines, "\n  | ")
}

func (e *exitedEarly) Unwrap() error { return e.err }

// Kill SIGKILLs the current process and waits until it is gone.
func (c *controller) Kill(context.Context) error {
	p := c.current()
	if p == nil {
		return errStopped
	}
	p.Kill()
	return nil
}

// Metrics scrapes the current process.
func (c *controller) Metrics(ctx context.Context) (ctrlproc.Metrics, error) {
	p := c.current()
	if p == nil {
		return ctrlproc.Metrics{}, errStopped
	}
	return p.Scrape(ctx)
}

// Work reads the current process's work so far (ctrlproc.Process.Work).
func (c *controller) Work() (ctrlproc.Work, error) {
	p := c.current()
	if p == nil {
		return ctrlproc.Work{}, errStopped
	}
	return p.Work()
}

// LogSince returns the log lines since t, across restarts.
func (c *controller) LogSince(t time.Time) []ctrlproc.Line { return c.log.Since(t) }

// crashed reports an exit the harness did not cause.
func (c *controller) crashed() bool {
	p := c.current()
	if p == nil {
		return false
	}
	exited, _ := p.Exited()
	return exited && !p.StoppedOnPurpose()
}

// exitedWithin reports whether the controller exited on its own: at once
// when it answers its metrics (alive), else once its exit is reaped, at most
// after d (a scrape can fail a moment before the process's end is seen).
func (c *controller) exitedWithin(ctx context.Context, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if c.crashed() {
			return true
		}
		if _, err := c.Metrics(ctx); err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return c.crashed()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// twoScrapes reads the metrics, and when a worker is busy reads them again a
// second later: the pair tells a hang from slow work.
func (c *controller) twoScrapes(ctx context.Context) (*ctrlproc.Metrics, *ctrlproc.Metrics) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	m, err := c.Metrics(sctx)
	if err != nil {
		return nil, nil
	}
	if m.ActiveWorkers == 0 {
		return &m, nil
	}
	select {
	case <-sctx.Done():
		return &m, nil
	case <-time.After(time.Second):
	}
	m2, err := c.Metrics(sctx)
	if err != nil {
		return &m, nil
	}
	return &m, &m2
}

// waitQuiet waits until the controller has finished no reconcile and had
// nothing queued or running for quiet (ctrlproc.Quiet, the checks' own rule
// of idleness), at most for limit.
func (c *controller) waitQuiet(ctx context.Context, quiet, limit time.Duration) {
	start := time.Now()
	deadline := start.Add(limit)
	var q ctrlproc.Quiet
	for time.Now().Before(deadline) && ctx.Err() == nil {
		m, err := c.Metrics(ctx)
		if err != nil {
			return // not running: nothing to wait for
		}
		if q.Observe(m, nil, time.Now()); q.Since(start) >= quiet {
			return
		}
		time.Sleep(waitQuietPoll)
	}
}

// waitQuietPoll is how often waitQuiet scrapes: finer than the checks'
// scrapes, for the short quiet at the end of a passing check.
const waitQuietPoll = 50 * time.Millisecond

// controllerLimits bound each controller process in the sandbox: a grade's
// checks keep one busy for minutes of wall time but far less CPU time.
func controllerLimits() sandbox.Limits {
	l := sandbox.DefaultLimits()
	l.CPU = 15 * time.Minute
	l.Output = 64 << 20
	return l
}

// controllerReadyTimeout bounds the wait for the controller's /readyz.
const controllerReadyTimeout = time.Minute

// startController starts the learner's binary under the identity the
// identity stage made, pointed at the proxy stand-in.
func (r *run) startController(ctx context.Context, binary string) error {
	echo := r.opts.Out
	if !r.opts.Verbose {
		echo = nil
	}
	log, err := ctrlproc.NewLog(filepath.Join(r.dir, "controller.log"), echo)
	if err != nil {
		return err
	}
	r.onTeardown(func() { _ = log.Close() })
	admin, err := r.adminClient()
	if err != nil {
		return err
	}
	leaseNS, err := r.leaseNamespace(ctx, admin)
	if err != nil {
		return err
	}
	cfg := ctrlproc.Config{Binary: binary, Kubeconfig: r.kubeconfig, DataplaneURL: r.proxy.URL(),
		LogFile: filepath.Join(r.dir, "controller.log"), LeaseNamespace: leaseNS}
	if sb := r.opts.Sandbox; sb != nil {
		// Copies the sandbox's user can read and not change; the run's own
		// directory is closed to it.
		if cfg.Binary, err = sb.Install(binary, filepath.Join("bin", "manager")); err != nil {
			return err
		}
		if cfg.Kubeconfig, err = sb.Put(r.kubeconfig, "controller.kubeconfig"); err != nil {
			return err
		}
		cfg.Sandbox, cfg.Limits = sb, controllerLimits()
		// What it may reach: the API server and the data plane, no
		// other port of the machine (the cluster's etcd above all).
		proxy, err := hostPort(r.proxy.URL())
		if err != nil {
			return fmt.Errorf("the data plane's address: %w", err)
		}
		cfg.Connect = []string{r.apiserver, proxy}
	}
	cfg.Args = append(cfg.Args, controllerFlags(ctx, cfg.Binary, cfg.Sandbox, r.opts.Step.ControllerFlags)...)
	r.ctrl = &controller{cfg: cfg, log: log, ready: controllerReadyTimeout, leases: admin}
	r.onTeardown(func() {
		if p := r.ctrl.current(); p != nil {
			p.Stop(5 * time.Second)
		}
	})
	started := time.Now()
	if err := r.ctrl.Start(ctx); err != nil {
		// The stage's report shows the last lines with the diagnosis.
		if early, ok := errors.AsType[*exitedEarly](err); ok {
			err = early.err
		}
		return fmt.Errorf("%w\n%s", err, r.describeStartFailure())
	}
	return r.waitForWorkers(ctx, r.ctrl, started)
}

// leaseNamespace makes the namespace the controller is told to keep its
// leader election's Lease in (POD_NAMESPACE, see ctrlproc.Config): out of a
// cluster, controller-runtime has no namespace of its own to put it in. A
// controller that leaves leader election off never uses it.
func (r *run) leaseNamespace(ctx context.Context, c client.Client) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "gw10-lease-",
		Labels:       map[string]string{runLabel: "lease", cluster.ManagedLabel: "true"},
	}}
	if err := c.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("creating the namespace for the controller's leader election Lease: %w", err)
	}
	r.onTeardown(func() { // after the controller has stopped
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.DeleteAllOf(ctx, &coordinationv1.Lease{}, client.InNamespace(ns.Name))
		if r.backend.Outlives() {
			cluster.DeleteNamespace(ctx, c, ns.Name)
		} else {
			_ = c.Delete(ctx, ns)
		}
	})
	return ns.Name, nil
}

// forbiddenGrace is how long the start waits once a refused request shows.
const forbiddenGrace = 3 * time.Second

// waitForWorkers fails the start when the controller's workers never start
// and its log says why: a watch its role forbids never syncs its cache, and
// every check would otherwise wait out its timeout on a controller that
// cannot reconcile at all. Without such evidence the checks run as usual.
func (r *run) waitForWorkers(ctx context.Context, ctrl *controller, since time.Time) error {
	deadline := time.Now().Add(r.opts.Timeouts.Workers)
	for {
		lines := lineTexts(ctrl.log.Since(since))
		if slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "Starting workers") }) {
			return nil
		}
		var why []string
		for _, f := range ctrlproc.Forbidden(lines, r.role) {
			why = append(why, f.String())
		}
		waited := time.Since(since).Round(100 * time.Millisecond)
		// A refused list is final (the role is installed before the start);
		// a few seconds let every refused watch show up.
		if len(why) > 0 && waited >= forbiddenGrace {
			return fmt.Errorf("the controller runs but its workers have not started after %s: a watch its role forbids cannot sync its cache, "+
				"so it cannot reconcile anything and no check can pass\n%s", waited, strings.Join(why, "\n"))
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil // nothing to say: the checks will show what the controller does
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (r *run) describeStartFailure() string {
	lines := r.ctrl.log.Last(r.opts.LogLines)
	findings := ctrlproc.Diagnose(ctrlproc.Snapshot{Exited: true, ExitText: "before ready", Log: lines, Role: r.role,
		Kind: r.opts.Step.Primary.Kind(), GoType: r.opts.Step.Primary.Type()})
	out := ""
	for _, f := range findings[1:] { // the first is the exit itself, already said
		out += f.String() + "\n"
	}
	out += "controller log (last lines):\n"
	for _, l := range ctrlproc.Excerpt(lines) {
		out += "  | " + l + "\n"
	}
	return out
}
