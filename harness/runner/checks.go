package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/report"
)

// checkFailure is what the gomega fail handler panics with; runCheck recovers it.
type checkFailure struct{ message string }

func (r *run) runChecks(ctx context.Context) {
	c, err := r.adminClient()
	if err != nil {
		for _, chk := range r.opts.Checks {
			r.rep.Checks = append(r.rep.Checks, report.CheckResult{ID: chk.ID, Title: chk.Title, Points: chk.Points, Status: report.Skip, Message: err.Error()})
		}
		return
	}
	if r.backend.Outlives() {
		// Wait for the check namespaces to go, finishing them where no
		// namespace controller will (the dev cluster).
		r.onTeardown(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cluster.FinishNamespaces(ctx, c, r.namespaces)
		})
	}
	fmt.Fprintln(r.opts.Out)
	for _, chk := range r.opts.Checks {
		if ctx.Err() != nil {
			r.rep.Checks = append(r.rep.Checks, report.CheckResult{ID: chk.ID, Title: chk.Title, SeedRef: chk.SeedRef, Points: chk.Points, Status: report.Skip, Message: "not run: interrupted"})
			continue
		}
		res := r.runOne(ctx, c, chk)
		r.rep.Checks = append(r.rep.Checks, res)
		mark := strings.ToUpper(string(res.Status))
		fmt.Fprintf(r.opts.Out, "  %s %-20s %6s  %s\n", mark, chk.ID, res.Duration, chk.Title)
	}
}

func (r *run) runOne(ctx context.Context, c client.WithWatch, chk checks.Check) report.CheckResult {
	res := report.CheckResult{ID: chk.ID, Title: chk.Title, SeedRef: chk.SeedRef, Points: chk.Points, Doc: chk.DocAnchor()}
	start := time.Now()
	var restarted string
	if exited, how := r.ctrl.current().Exited(); exited {
		// As a Deployment would, start it again; the check says so if it fails.
		restarted = "the controller had exited (" + how + ") and was restarted for this check"
		if err := r.ctrl.Start(ctx); err != nil {
			res.Status, res.Duration = report.Fail, report.Since(start)
			res.Message = "the controller could not be started again: " + err.Error()
			r.explain(ctx, &res, chk)
			return res
		}
	}

	checkCtx, cancel := context.WithTimeout(ctx, r.opts.Timeouts.Check)
	defer cancel()
	ns, err := r.createNamespace(checkCtx, c, chk.ID)
	if err != nil {
		res.Status, res.Duration, res.Message = report.Fail, report.Since(start), err.Error()
		if ctx.Err() != nil {
			res.Status, res.Message = report.Skip, "not run: interrupted"
		}
		return res
	}
	defer r.deleteNamespace(c, ns)

	// An unexpected exit of the controller ends the check at once, with the
	// exit as its cause, instead of waiting for every timeout.
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if r.ctrl.crashed() {
					cancel()
					return
				}
			case <-checkCtx.Done():
				return
			}
		}
	}()

	env := &checks.Env{
		Client: c, Proxy: r.proxy, Controller: r.ctrl, StepDir: r.opts.StepDir,
		Namespace: ns, Timeouts: r.opts.Timeouts,
	}
	err = runCheck(checkCtx, chk, env)
	res.Duration = report.Since(start)
	if ctx.Err() != nil {
		res.Status, res.Message = report.Skip, "not run to the end: interrupted"
		return res
	}
	if err == nil {
		res.Status, res.Earned = report.Pass, chk.Points
		return res
	}
	res.Status, res.Message = report.Fail, err.Error()
	if checkCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		res.Message = fmt.Sprintf("the check did not finish within %s\n%s", r.opts.Timeouts.Check, res.Message)
	}
	if restarted != "" {
		res.Causes = append(res.Causes, restarted)
	}
	r.explain(ctx, &res, chk)
	return res
}

// runCheck runs the check with a gomega whose failures end the check.
func runCheck(ctx context.Context, chk checks.Check, env *checks.Env) (err error) {
	defer func() {
		if rec := recover(); rec != nil {
			if f, ok := rec.(checkFailure); ok {
				err = fmt.Errorf("%s", strings.TrimSpace(f.message))
				return
			}
			err = fmt.Errorf("the harness's check %s panicked (a harness bug, please report it): %v", chk.ID, rec)
		}
	}()
	env.G = gomega.NewGomega(func(message string, _ ...int) { panic(checkFailure{message: message}) })
	return chk.Run(ctx, env)
}

// explain adds the diagnosis, the hint and the controller's last log lines.
func (r *run) explain(ctx context.Context, res *report.CheckResult, chk checks.Check) {
	snap := ctrlproc.Snapshot{Log: r.ctrl.log.Last(2000)}
	if p := r.ctrl.current(); p != nil {
		snap.Exited, snap.ExitText = p.Exited()
		if !snap.Exited {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if m, err := p.Scrape(sctx); err == nil {
				snap.Metrics = &m
				if m.ActiveWorkers > 0 { // busy: a second look tells a hang from slow work
					time.Sleep(time.Second)
					if m2, err := p.Scrape(sctx); err == nil {
						snap.Metrics2 = &m2
					}
				}
			}
			cancel()
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
	} else {
		res.Causes = append(res.Causes, "check hint: "+chk.Hint)
	}
	res.Logs = r.ctrl.log.Last(r.opts.LogLines)
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

// deleteNamespace removes what the check created. EdgeRoutes and Services are
// deleted one by one first: envtest has no namespace controller, so deleting
// the namespace alone would leave them (and their routes) behind.
func (r *run) deleteNamespace(c client.Client, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ers := &unstructured.Unstructured{}
	ers.SetGroupVersionKind(checks.EdgeRouteGVK)
	_ = c.DeleteAllOf(ctx, ers, client.InNamespace(ns))
	svcs := &corev1.ServiceList{}
	if err := c.List(ctx, svcs, client.InNamespace(ns)); err == nil {
		for i := range svcs.Items {
			_ = c.Delete(ctx, &svcs.Items[i])
		}
	}
	_ = c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	r.mu.Lock()
	r.namespaces = append(r.namespaces, ns)
	r.mu.Unlock()
}
