package runner

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/step"
)

// A plan says what one drive of the pipeline does: make check (Run), one
// pass of make watch (Loop.Run) and the bench's session (Start) differ only
// in it.
type plan struct {
	// cluster waits for the control plane started meanwhile: the cluster
	// stage, run after the unit tests; nil when it is up already (a loop's
	// later passes).
	cluster func() error
	// built hears whether the build and generate stages passed, before any
	// other stage runs (a loop stops its previous controller there, before
	// the CRD and the role change under it).
	built func(ok bool)
	// checks runs the checks once the controller started; false stops there
	// (the bench measures in the world the stages made).
	checks bool
	// progress hears of each check; nil prints a line per check on Out.
	progress Progress
	// firstAlone runs the first check on the run's controller before the
	// others side by side (lanes.go): make watch's first is the one being
	// fixed, whose verdict should come first and at once.
	firstAlone bool
}

// Progress hears of each check as it starts and as it ends.
type Progress interface {
	CheckStarted(i, n int, chk checks.Check)
	CheckDone(i, n int, res report.CheckResult)
}

// drive runs the stages in order (build, generate, unit tests, probes,
// cluster, install CRD, controller identity, proxy stand-in, start
// controller: runStages) and, as the plan says, the checks, or a row per
// check saying why it did not run. It says whether every stage passed. The
// caller makes the run's directory and tears the run down: what is kept
// between runs is its own.
func (r *run) drive(ctx context.Context, p plan) bool {
	var binary string
	ok := r.runStages(ctx, r.buildStages(&binary)...)
	if p.built != nil {
		p.built(ok)
	}
	var probes []stage
	if p.checks {
		probes = r.probeStages()
	}
	ok = ok && r.runStages(ctx, slices.Concat(r.unitStages(&binary), probes, clusterStage(p.cluster), r.deployStages(&binary))...)
	if !p.checks {
		return ok
	}
	if !ok {
		reason := "not run: an earlier stage failed"
		if ctx.Err() != nil {
			reason = "not run: interrupted"
		}
		for _, c := range r.opts.Checks {
			r.rep.Checks = append(r.rep.Checks, NotRun(r.opts.Step, c, reason))
		}
		return false
	}
	r.runChecks(ctx, p.progress, p.firstAlone)
	return true
}

// NotRun is the report's row of a check that did not run, and why: every
// skipped row (a stage failed, an interrupt, a submission not gradable) is
// built here.
func NotRun(st step.Step, chk checks.Check, why string) report.CheckResult {
	res := resultOf(st, chk)
	res.Status, res.Message = report.Skip, why
	return res
}

// resultOf is a check's row before it runs: what the step says of it.
func resultOf(st step.Step, chk checks.Check) report.CheckResult {
	res := report.CheckResult{ID: chk.ID, Title: chk.Title, SeedRef: chk.SeedRef, Clauses: chk.Clauses, Points: chk.Points,
		Doc: st.DocAnchor(chk.ID)}
	if chk.Probe != nil {
		res.Probe = probeBasis
	}
	return res
}

// probeBasis is what a probe check's verdict rests on, as every report says it.
const probeBasis = "a probe: the grader's code around your Reconcile, judged at the API front and the proxy stand-in (no code of yours ran in it but what the grader called; what it printed only explains)"

// runChecks is the one check loop: the run's checks in their order, each
// in a namespace of its own, progress told of each (nil: a line per check
// on Out). A check is skipped when the run was interrupted, or after a
// failure when the run stops at the first (FailFast). When the run can
// (concurrently), the checks run side by side, each told in their order
// (inLanes); firstAlone runs the first before them, on the run's controller.
func (r *run) runChecks(ctx context.Context, progress Progress, firstAlone bool) {
	c, err := r.adminClient()
	if err != nil {
		for _, chk := range r.opts.Checks {
			r.rep.Checks = append(r.rep.Checks, NotRun(r.opts.Step, chk, err.Error()))
		}
		return
	}
	if r.backend.Outlives() {
		// Wait for the check namespaces to go, finishing them where no
		// namespace controller will (the dev cluster).
		r.onTeardown(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cluster.FinishNamespaces(ctx, c, r.deletedNamespaces())
		})
	}
	if progress == nil {
		fmt.Fprintln(r.opts.Out)
		l := newLines(r.opts.Out)
		tick := r.opts.StageTick
		defer ticking(tick, func(now time.Time) { l.still(now, tick) })()
		progress = l
	}
	side, why := r.concurrently(ctx)
	if why != "" {
		fmt.Fprintf(r.opts.Out, "  note: %s\n", why)
		if n := len(r.rep.Stages); n > 0 { // the start controller stage's: its binary's flags
			r.rep.Stages[n-1].Notes = append(r.rep.Stages[n-1].Notes, why)
		}
	}
	n := len(r.opts.Checks)
	for i, chk := range r.opts.Checks {
		if side && (i > 0 || !firstAlone) {
			r.stopSharedController()
			rest := r.inLanes(ctx, c, r.opts.Checks[i:], r.priorProof(),
				func(j int) { progress.CheckStarted(i+j, n, r.opts.Checks[i+j]) },
				func(j int, res report.CheckResult) { progress.CheckDone(i+j, n, res) })
			r.rep.Checks = append(r.rep.Checks, rest...)
			return
		}
		if ctx.Err() != nil {
			r.rep.Checks = append(r.rep.Checks, NotRun(r.opts.Step, chk, "not run: interrupted"))
			continue
		}
		if r.opts.FailFast && slices.ContainsFunc(r.rep.Checks, func(c report.CheckResult) bool { return c.Status == report.Fail }) {
			r.rep.Checks = append(r.rep.Checks, NotRun(r.opts.Step, chk, "not run: the run stops at its first failing check"))
			continue
		}
		progress.CheckStarted(i, n, chk)
		res := r.runCheck(ctx, c, chk)
		r.rep.Checks = append(r.rep.Checks, res)
		progress.CheckDone(i, n, res)
	}
}

// lines is make check's progress: a line per check as it ends, in the
// step's order, and while none has ended for a while, a line that says
// which one the next verdict waits for (still, as a stage's line does).
type lines struct {
	out io.Writer

	mu      sync.Mutex
	started map[int]startedCheck // by the check's index
	next    int                  // the index of the next verdict to print
	spoke   time.Time            // when a line was last printed
}

type startedCheck struct {
	id string
	at time.Time
}

func newLines(out io.Writer) *lines {
	return &lines{out: out, started: map[int]startedCheck{}, spoke: time.Now()}
}

func (l *lines) CheckStarted(i, _ int, chk checks.Check) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.started[i] = startedCheck{id: chk.ID, at: time.Now()}
}

func (l *lines) CheckDone(i, _ int, res report.CheckResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, "  %s %-20s %6s  %s\n", strings.ToUpper(string(res.Status)), res.ID, res.Duration, res.Title)
	l.next, l.spoke = i+1, time.Now()
}

// still says, when no line has been printed for a tick, that the check
// whose verdict comes next still runs (the verdicts after it may be known:
// they print in order).
func (l *lines) still(now time.Time, tick time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.started[l.next]
	if !ok || now.Sub(l.spoke) < tick {
		return
	}
	fmt.Fprintf(l.out, "  … %s still running (%s)\n", c.id, now.Sub(c.at).Round(time.Second))
	l.spoke = now
}

// newReport is the report a run fills in.
func newReport(opts Options) *report.Report {
	return &report.Report{Dir: opts.Label, Started: time.Now(), Cluster: "envtest", Partial: opts.partial()}
}

// finish closes the report: its duration, whether ctx ended it, its
// summary; the error says ctx ended it.
func finish(ctx context.Context, rep *report.Report) error {
	rep.Duration = report.Since(rep.Started)
	rep.Interrupted = ctx.Err() != nil
	rep.Finish()
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
	return nil
}
