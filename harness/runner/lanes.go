package runner

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/proxy"
	"github.com/10xdev/gw10/harness/report"
)

// A learner's run (make check: Options.Lanes) runs its checks side by side,
// each in a lane of its own: its namespaces, made before anything else, a
// proxy stand-in, and a controller process started with --namespaces, which
// watches and reconciles only them. A check's metrics, proxy events and
// controller log are then its own, as in a run of one check at a time: its
// quiet windows, its idleness and its doom proofs read its controller only,
// and a check that kills the controller or takes the proxy down kills or
// takes down its own.

// namespacesFlag is the scaffold's flag that scopes a controller's cache.
const namespacesFlag = "namespaces"

// laneNeighbours is how many neighbour namespaces (checks.T.Neighbour) a
// lane makes before its controller starts: no check of a step asks for more.
const laneNeighbours = 2

// lane is what one check runs against.
type lane struct {
	ctrl  *controller // nil: a probe's check, which drives no controller
	proxy *proxy.Server
	prior *checks.Prior
	log   *ctrlproc.Log // the lane's own controller's, closed with it
	// ownProxy: the proxy stand-in is the lane's, closed with it.
	ownProxy bool

	mu sync.Mutex
	// made are the namespaces made before the lane's controller started,
	// the check's first, then its neighbours'; empty on the serial path,
	// which makes them as the check asks.
	made []string
	next int
}

// namespace is the check's namespace: the lane's first, or a new one.
func (l *lane) namespace(ctx context.Context, create func(context.Context) (string, error)) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.made) == 0 {
		return create(ctx)
	}
	l.next = 1
	return l.made[0], nil
}

// neighbour is another namespace for the check: the lane's next one, or a
// new one.
func (l *lane) neighbour(ctx context.Context, create func(context.Context) (string, error)) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.made) == 0 {
		return create(ctx)
	}
	if l.next >= len(l.made) {
		return "", fmt.Errorf("the check asks for more than %d neighbour namespaces, all its controller watches (a harness bug: raise laneNeighbours)", len(l.made)-1)
	}
	l.next++
	return l.made[l.next-1], nil
}

// unused are the lane's namespaces the check did not ask for.
func (l *lane) unused() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.next == 0 {
		return nil
	}
	return slices.Clone(l.made[l.next:])
}

// concurrently says whether the run's checks run side by side, and when
// they do not though the run asked, why (a note for the learner).
func (r *run) concurrently(ctx context.Context) (bool, string) {
	switch {
	case r.opts.Lanes < 2 || r.opts.Sandbox != nil || r.opts.FixedSeeds || r.opts.FailFast || len(r.opts.Checks) < 2:
		return false, "" // a grade (sandboxed or not: the fixed seeds), make test, make mutants
	case r.backend.Outlives():
		return false, "the checks run one at a time on a cluster that outlives the run"
	case r.opts.Verbose:
		return false, "the checks run one at a time with -v: the logs of controllers side by side would interleave"
	case !hasFlag(ctx, r.ctrl.cfg.Binary, namespacesFlag):
		return false, "the checks run one at a time: cmd/main.go has no --" + namespacesFlag +
			" flag (the scaffold's has: it scopes a controller to its check's namespaces, so that checks run side by side)"
	}
	return true, ""
}

// hasFlag reports whether the binary defines the flag name (without
// dashes), from its -h output.
func hasFlag(ctx context.Context, binary, name string) bool {
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(hctx, binary, "-h").CombinedOutput()
	return flagIn(string(out), name)
}

// flagIn reports whether a -h output defines the flag name.
func flagIn(usage, name string) bool {
	return strings.Contains(usage, "-"+name+" ") || strings.Contains(usage, "-"+name+"\n")
}

// stopSharedController stops the start stage's controller, which watches
// every namespace: it would act on the lanes' objects.
func (r *run) stopSharedController() {
	if p := r.ctrl.current(); p != nil {
		p.Stop(5 * time.Second)
	}
}

// inLanes runs chks side by side, at most Options.Lanes at once, with the
// proof an earlier check found (prior, or nil), and returns their verdicts
// in order. started hears of each check as its lane opens; emit gets each
// verdict in the order of chks, as soon as it and every one before it are
// known.
//
// A check that fails with a proof that holds for the rest of the run (its
// status writes refused, every worker stuck) is, in a serial run, the
// prerequisite the later checks name: when no earlier one was known, those
// run again, one at a time, with that proof, so that their verdicts and
// causes are a serial run's; their first verdicts are never emitted.
func (r *run) inLanes(ctx context.Context, c client.WithWatch, chks []checks.Check, prior *checks.Prior,
	started func(i int), emit func(i int, res report.CheckResult)) []report.CheckResult {
	n := len(chks)
	results := make([]report.CheckResult, n)
	done := make([]bool, n)
	var mu sync.Mutex
	emitted, first := 0, -1
	flush := func() {
		for first < 0 && emitted < n && done[emitted] {
			if prior == nil && r.blockerOf(chks[emitted], results[emitted]) != nil {
				first = emitted // the later verdicts are run again
			}
			emit(emitted, results[emitted])
			emitted++
		}
	}
	slots := make(chan struct{}, r.opts.Lanes)
	var wg sync.WaitGroup
	for i, chk := range chks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var res report.CheckResult
			select {
			case slots <- struct{}{}:
				started(i)
				res = r.runInLane(ctx, c, chk, prior)
				<-slots
			case <-ctx.Done():
				res = NotRun(r.opts.Step, chk, "not run: interrupted")
			}
			mu.Lock()
			defer mu.Unlock()
			results[i], done[i] = res, true
			flush()
		}()
	}
	wg.Wait()
	if first < 0 {
		return results
	}
	blocker := chks[first]
	prior = &checks.Prior{Check: blocker.ID, Blocker: *r.blockerOf(blocker, results[first])}
	r.setPrior(prior) // the one a serial run keeps
	for i := first + 1; i < n; i++ {
		if ctx.Err() == nil {
			started(i)
			results[i] = r.runInLane(ctx, c, chks[i], prior)
		} else {
			results[i] = NotRun(r.opts.Step, chks[i], "not run: interrupted")
		}
		emit(i, results[i])
	}
	return results
}

// runInLane runs one check in a lane of its own.
func (r *run) runInLane(ctx context.Context, c client.WithWatch, chk checks.Check, prior *checks.Prior) report.CheckResult {
	l, err := r.openLane(ctx, c, chk, prior)
	if err != nil {
		res := resultOf(r.opts.Step, chk)
		res.Status, res.Message = report.Fail, err.Error()
		if ctx.Err() != nil {
			res.Status, res.Message = report.Skip, "not run: interrupted"
		}
		return res
	}
	defer l.close()
	return r.runCheckIn(ctx, c, chk, l)
}

// openLane makes a lane for the check: its namespaces, its proxy stand-in,
// and its controller started, its caches synced. A probe's check gets none.
func (r *run) openLane(ctx context.Context, c client.WithWatch, chk checks.Check, prior *checks.Prior) (*lane, error) {
	l := &lane{prior: prior, proxy: r.proxy}
	if chk.Probe != nil {
		return l, nil
	}
	for range 1 + laneNeighbours {
		ns, err := r.createNamespace(ctx, c, chk.ID)
		if err != nil {
			for _, made := range l.made {
				r.deleteNamespace(c, made, nil)
			}
			return nil, err
		}
		l.made = append(l.made, ns)
	}
	fail := func(err error) (*lane, error) {
		l.close()
		for _, made := range l.made {
			r.deleteNamespace(c, made, nil)
		}
		return nil, err
	}
	p, err := proxy.Start()
	if err != nil {
		return fail(fmt.Errorf("starting the check's proxy stand-in: %w", err))
	}
	l.proxy, l.ownProxy = p, true
	logFile := filepath.Join(r.dir, "controller-"+chk.ID+".log")
	if l.log, err = ctrlproc.NewLog(logFile, nil); err != nil {
		return fail(err)
	}
	cfg := r.ctrl.cfg
	cfg.DataplaneURL, cfg.LogFile = p.URL(), logFile
	cfg.Args = append(slices.Clone(cfg.Args), "--"+namespacesFlag+"="+strings.Join(l.made, ","))
	// A Lease namespace of its own: the lanes' controllers run side by side,
	// each the leader of its own Lease, whose renewals fall in no check's
	// namespace (a quiet window counts the requests about its namespaces).
	if cfg.LeaseNamespace, err = r.leaseNamespace(ctx, c); err != nil {
		return fail(err)
	}
	l.ctrl = &controller{cfg: cfg, log: l.log, ready: controllerReadyTimeout, leases: r.ctrl.leases}
	started := time.Now()
	if err := l.ctrl.Start(ctx); err != nil {
		return fail(fmt.Errorf("starting the check's controller: %w", err))
	}
	if err := r.waitForWorkers(ctx, l.ctrl, started); err != nil {
		return fail(fmt.Errorf("starting the check's controller: %w", err))
	}
	return l, nil
}

// close stops the lane's controller and proxy stand-in.
func (l *lane) close() {
	if l.ctrl != nil {
		if p := l.ctrl.current(); p != nil {
			p.Stop(5 * time.Second)
		}
	}
	if l.log != nil {
		_ = l.log.Close()
	}
	if l.ownProxy {
		_ = l.proxy.Close()
	}
}
