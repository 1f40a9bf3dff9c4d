package runner

import (
	"context"
	"fmt"
	"github.com/10xdev/gw10/harness/words"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/report"
)

// runCheck runs one check against the run's controller and proxy stand-in
// (one check at a time).
func (r *run) runCheck(ctx context.Context, c client.WithWatch, chk checks.Check) report.CheckResult {
	return r.runCheckIn(ctx, c, chk, &lane{ctrl: r.ctrl, proxy: r.proxy, prior: r.priorProof()})
}

// restoreScope gives the run's controller back its own scope when a check
// started it watching fewer namespaces (checks.T.StartControllerIn): the
// next check's objects must be in its view. A start that fails leaves the
// process exited, and the next check starts it again and says so.
func (r *run) restoreScope(ctx context.Context, ctrl *controller) {
	if !ctrl.startedIn() || ctx.Err() != nil {
		return
	}
	if err := ctrl.Kill(ctx); err != nil {
		ctrl.log.Mark("--- the harness could not stop the controller it had started with a narrower scope: " + err.Error() + " ---")
		return
	}
	if err := ctrl.Start(ctx); err != nil {
		ctrl.log.Mark("--- the harness could not start the controller again with its own scope: " + err.Error() + " ---")
	}
}

// runCheckIn runs one check in its lane: its namespace, the controller
// alive (restarted as a Deployment would if it had exited), the check under
// its timeout, and the diagnosis when it fails.
func (r *run) runCheckIn(ctx context.Context, c client.WithWatch, chk checks.Check, l *lane) report.CheckResult {
	res := resultOf(r.opts.Step, chk)
	start := time.Now()
	var restarted string
	if l.ctrl != nil {
		if exited, how := l.ctrl.current().Exited(); exited {
			restarted = "the controller had exited (" + how + ") and was restarted for this check"
			if err := l.ctrl.Start(ctx); err != nil {
				res.Status, res.Duration = report.Fail, report.Since(start)
				res.Message = "the controller could not be started again: " + err.Error()
				r.diagnose(ctx, &res, chk, start, l.ctrl)
				return res
			}
		}
	}
	if l.ctrl != nil && l.ctrl == r.ctrl {
		defer r.restoreScope(ctx, l.ctrl)
	}
	checkCtx, cancel := context.WithTimeout(ctx, r.opts.Timeouts.Check)
	defer cancel()
	ns, err := l.namespace(checkCtx, func(ctx context.Context) (string, error) { return r.createNamespace(ctx, c, chk.ID) })
	if err != nil {
		res.Status, res.Duration, res.Message = report.Fail, report.Since(start), err.Error()
		if ctx.Err() != nil {
			res.Status, res.Message = report.Skip, "not run: interrupted"
		}
		return res
	}
	defer r.deleteNamespace(c, ns, l.ctrl)
	// A crash ends the check at once, and its waits say why. A probe's
	// check drives no controller: in a grade each run of its probe in the
	// sandbox ends by killing every process of the sandbox's user, the
	// controller among them (the next check starts it again), and that is
	// no crash of the controller's.
	checkCtx, crashed := context.WithCancelCause(checkCtx)
	defer crashed(nil)
	if l.ctrl != nil && chk.Probe == nil {
		stopWatching := r.endOnCrash(checkCtx, crashed, l.ctrl)
		defer stopWatching()
	}

	var mu sync.Mutex
	var neighbours []string
	defer func() {
		for _, n := range append(neighbours, l.unused()...) {
			r.deleteNamespace(c, n, l.ctrl)
		}
	}()
	newNamespace := func(ctx context.Context) (string, error) {
		n, err := l.neighbour(ctx, func(ctx context.Context) (string, error) { return r.createNamespace(ctx, c, chk.ID) })
		if err == nil {
			mu.Lock()
			neighbours = append(neighbours, n)
			mu.Unlock()
		}
		return n, err
	}
	env := checks.Env{
		Client: c, Proxy: l.proxy, API: r.front, APIRequests: checks.FrontRecord(r.front), StepDir: r.opts.StepDir,
		Namespace: ns, Timeouts: r.opts.Timeouts, Seeds: r.opts.sequenceSeeds(freshSeed), Fixed: r.opts.Step.Seeds,
		Budget:       r.opts.budget(),
		Prior:        l.prior,
		NewNamespace: newNamespace, Invariants: r.opts.Step.Invariants, Primary: r.opts.Step.Primary, Watched: r.opts.Step.Watched,
		Triggers: r.opts.Step.Triggers,
		Probe:    r.probe,
	}
	if l.ctrl != nil { // a nil *controller in the interface would not be nil
		env.Controller = l.ctrl
	}
	t := checks.NewT(chk.ID, env)
	out := checks.Execute(checkCtx, chk, t)
	if !out.Failed && checkCtx.Err() == nil && chk.Probe == nil && l.ctrl != nil {
		// A pass needs the controller alive once the work the check caused
		// is done: one that exits right after the step a check looks for
		// (the withdraw, then os.Exit) would pass, and only the next
		// check would find it gone.
		l.ctrl.waitQuiet(checkCtx, r.opts.Timeouts.EndQuiet, r.opts.Timeouts.EndQuietLimit)
		if l.ctrl.exitedWithin(checkCtx, r.opts.Timeouts.EndAlive) {
			_, how := l.ctrl.current().Exited()
			out.Failed = true
			out.Message = fmt.Sprintf("the controller exited (%s) during this check, though nothing asked it to stop (in a cluster: a restart, and CrashLoopBackOff)", how)
		}
	}
	r.keepBlocker(chk, out)
	res.Duration = report.Since(start)
	res.Evidence = out.Evidence
	res.Notes = out.Notes
	switch {
	case ctx.Err() != nil:
		res.Status, res.Message = report.Skip, "not run to the end: interrupted"
		return res
	case !out.Failed:
		res.Status, res.Earned = report.Pass, chk.Points
		return res
	}
	res.Status, res.Message, res.Causes = report.Fail, out.Message, out.Causes
	if checkCtx.Err() == context.DeadlineExceeded {
		res.Message = fmt.Sprintf("the check did not finish within %s\n%s", r.opts.Timeouts.Check, res.Message)
	}
	if restarted != "" {
		res.Causes = append(res.Causes, restarted)
	}
	r.diagnose(ctx, &res, chk, start, l.ctrl)
	if out.Hint != "" && res.Hint == chk.Hint {
		res.Hint = out.Hint // the proof that ended a wait knows better than the check
	}
	if chk.Probe == nil && l.ctrl != nil {
		r.focusLog(&res, ns, start, l.ctrl)
	}
	return res
}

// endOnCrash ends the check at once when the controller exits on its own,
// with the exit as its cause, instead of waiting for every timeout.
func (r *run) endOnCrash(ctx context.Context, cancel context.CancelCauseFunc, ctrl *controller) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if ctrl.crashed() {
					_, how := ctrl.current().Exited()
					cancel(fmt.Errorf("the controller exited (%s)", how))
					return
				}
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}
	}()
	return func() { close(done) }
}

// diagnose adds what the controller's state says (exit, panic, RBAC, hang)
// and the hint: the diagnosis's when it has one, the check's otherwise.
func (r *run) diagnose(ctx context.Context, res *report.CheckResult, chk checks.Check, since time.Time, ctrl *controller) {
	if chk.Probe != nil || ctrl == nil {
		// The probe's test called the code; the controller process did
		// nothing the check looked at, and its log would mislead.
		if res.Hint == "" {
			res.Hint = chk.Hint
		}
		return
	}
	lines := ctrl.log.Since(since)
	snap := ctrlproc.Snapshot{Log: lineTexts(lines), Role: r.role, Kind: r.opts.Step.Primary.Kind(), GoType: r.opts.Step.Primary.Type(),
		NothingToReconcile: !acted(res.Evidence) || justStarted(lines, time.Now(), r.opts.Timeouts.Settle),
		DoneOutside:        doneOutside(res.Evidence)}
	if p := ctrl.current(); p != nil {
		snap.Exited, snap.ExitText = p.Exited()
		if !snap.Exited {
			snap.Metrics, snap.Metrics2 = ctrl.twoScrapes(ctx)
		}
	}
	for _, f := range ctrlproc.Diagnose(snap) {
		res.Causes = append(res.Causes, f.Cause)
		if res.Hint == "" {
			res.Hint = f.Hint // the diagnosis is more specific than the check's hint
		}
	}
	if res.Hint == "" {
		res.Hint = chk.Hint
	}
	if res.Logs == nil {
		res.Logs = ctrlproc.Excerpt(ctrl.log.Last(r.opts.LogLines))
	}
}

// doneOutside says what the proxy and the API server saw the controller do
// during the check, since its current process started (the check's last
// restart of it, if any: a new process counts from 0): its pushes,
// withdraws and status writes ("" for none).
func doneOutside(events []evidence.Event) string {
	var since time.Time
	for _, e := range events {
		if e.Kind == evidence.Action && (e.Trigger == evidence.Restarted || e.Trigger == evidence.Killed) {
			since = e.At
		}
	}
	tl := evidence.TallyAfter(events, since, "")
	var parts []string
	if n := tl.Pushes + tl.Withdraws; n > 0 {
		parts = append(parts, "the proxy received "+words.Count(n, "push or withdraw", "pushes and withdraws"))
	}
	if tl.StatusWrites > 0 {
		parts = append(parts, "the API server "+words.Count(tl.StatusWrites, "status write", "status writes"))
	}
	return strings.Join(parts, " and ")
}

// acted says whether the check did something to the world (created,
// changed or deleted an object, restarted the controller) that the
// controller could react to.
func acted(events []evidence.Event) bool {
	for _, e := range events {
		if e.Source == evidence.Harness && e.Kind == evidence.Action {
			return true
		}
	}
	return false
}

// justStarted says whether the controller process was started (a check
// that restarts it) less than settle before now: its metrics count from
// zero, so no reconcile yet is no sign of a reconciler left unregistered.
func justStarted(lines []ctrlproc.Line, now time.Time, settle time.Duration) bool {
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i].Text, "--- controller started") {
			return now.Sub(lines[i].At) < settle
		}
	}
	return false
}

// focusLog keeps the log lines about the check's namespace in its window,
// with stack frames folded; the run's last lines are the fallback.
func (r *run) focusLog(res *report.CheckResult, ns string, since time.Time, ctrl *controller) {
	var about []string
	for _, l := range ctrl.log.Since(since) {
		if strings.Contains(l.Text, ns) || strings.HasPrefix(l.Text, "--- controller") || strings.HasPrefix(l.Text, "panic: ") {
			about = append(about, l.Text)
		}
	}
	if len(about) == 0 {
		return
	}
	ex := ctrlproc.Excerpt(about)
	if len(ex) > r.opts.LogLines {
		ex = ex[len(ex)-r.opts.LogLines:]
	}
	res.Logs, res.LogsAboutCheck = ex, true
}

func lineTexts(lines []ctrlproc.Line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.Text
	}
	return out
}

// runLabel marks the namespaces of harness runs so leftovers can be found.
const runLabel = "gw10.10xdev.io/check"

func (r *run) createNamespace(ctx context.Context, c client.Client, id string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "gw10-" + id + "-",
		Labels:       map[string]string{runLabel: id, cluster.ManagedLabel: "true"},
	}}
	if err := c.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("creating the check's namespace: %w", err)
	}
	return ns.Name, nil
}

// deleteNamespace removes what the check created: the step's Cleanup kinds
// first, in its order (envtest has no namespace controller, so deleting
// the namespace alone would leave them, and their routes, behind), then
// waits for the controller to finish with them, so that the next check
// starts with a quiet controller.
func (r *run) deleteNamespace(c client.Client, ns string, ctrl *controller) {
	ctx, cancel := context.WithTimeout(context.Background(), r.opts.Timeouts.Cleanup)
	defer cancel()
	for _, gvk := range r.opts.Step.Cleanup {
		deleteAllOf(ctx, c, gvk, ns)
	}
	_ = c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if !r.stuck() && ctrl != nil {
		ctrl.waitQuiet(ctx, r.opts.Timeouts.Idle, r.opts.Timeouts.CleanupIdle)
	}
	r.deleted(ns)
}

// deleteAllOf deletes every object of a kind in namespace ns: in one
// request where the API serves it, else one by one (Services have no
// deletecollection).
func deleteAllOf(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns string) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if c.DeleteAllOf(ctx, obj, client.InNamespace(ns)) == nil {
		return
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return
	}
	for i := range list.Items {
		_ = c.Delete(ctx, &list.Items[i])
	}
}
