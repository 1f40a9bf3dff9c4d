package checks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/proxy"
)

// RouteKey is the proxy key of primary object name in the check's namespace.
func RouteKey(t *T, name string) proxy.Key { return proxy.Key{Namespace: t.Namespace, Name: name} }

// Sleep waits for d, or until the check is stopped.
func (t *T) Sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// LastMetrics returns the controller's newest scraped metrics; false when
// there are none or the newest scrape failed (never an older scrape in its
// place).
func (t *T) LastMetrics() (ctrlproc.Metrics, bool) { return t.activity.metrics() }

// MeasuredMetrics returns the controller's newest metrics, waiting up to
// Timeouts.Measure for a scrape that succeeds; the error says that nothing could be measured.
// A check that measures (a rate of reconciles, say) fails on that error
// instead of passing having measured nothing.
func (t *T) MeasuredMetrics(ctx context.Context) (ctrlproc.Metrics, error) {
	deadline := time.Now().Add(t.Timeouts.Measure)
	for {
		if m, ok := t.activity.metrics(); ok {
			return m, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return ctrlproc.Metrics{}, fmt.Errorf("the controller's metrics could not be read for %s: nothing was measured", t.Timeouts.Measure)
		}
		t.Sleep(ctx, t.Timeouts.Scrape)
	}
}

// ResultsSince counts the reconciles with one of results (success, error,
// requeue, requeue_after) since r was created by the check.
func (t *T) ResultsSince(r *Route, results ...string) int {
	var since time.Time
	for _, ev := range t.Record.Events() {
		if ev.Kind == evidence.Action && ev.Trigger == evidence.RouteCreated && ev.Object == r.Object() {
			since = ev.At
			break
		}
	}
	tl := evidence.TallyAfter(t.Record.Events(), since, "")
	n := 0
	for _, res := range results {
		n += tl.ByResult[res]
	}
	return n
}

// KillController SIGKILLs the controller and waits until it is gone.
func (t *T) KillController(ctx context.Context) {
	t.Did(evidence.Killed, "", "killing the controller (SIGKILL)")
	t.Must(t.Controller.Kill(ctx), "killing the controller")
}

// StartController starts a new controller process and waits until it is ready.
func (t *T) StartController(ctx context.Context) {
	t.Did(evidence.Restarted, "", "starting a new controller process")
	t.Must(t.Controller.Start(ctx), "starting a new controller process")
}

// StartControllerIn starts a new controller process that watches only
// namespaces, when its binary has the scaffold's --namespaces flag, and says
// whether it does.
func (t *T) StartControllerIn(ctx context.Context, namespaces ...string) bool {
	t.Did(evidence.Restarted, "", "starting a new controller process that watches only %s (--namespaces)", strings.Join(namespaces, ", "))
	scoped, err := t.Controller.StartIn(ctx, namespaces)
	t.Must(err, "starting a new controller process")
	if !scoped {
		t.Logf("the controller has no --namespaces flag: it was started watching every namespace")
	}
	return scoped
}

// WipeStatus empties r's status conditions through the status subresource.
func (t *T) WipeStatus(ctx context.Context, r *Route) {
	obj := r.MustGet(ctx)
	_ = unstructured.SetNestedSlice(obj.Object, []any{}, "status", "conditions")
	t.Did(evidence.StatusWiped, r.Object(), "wiping the status of %s %s", t.Primary.Kind(), r.Name)
	t.Must(t.Client.Status().Update(ctx, obj), "clearing the status of %s", r)
}

// DescribeTimes renders the conditions with their transition times.
func DescribeTimes(obj *unstructured.Unstructured) string {
	var parts []string
	for _, c := range conditionsOf(obj) {
		parts = append(parts, fmt.Sprintf("%s=%s lastTransitionTime=%s", c.Type, c.Status, c.LastTransitionTime))
	}
	return strings.Join(parts, "; ")
}
