package bench

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/words"
)

// Bounds of the waits: the bench never waits for ever on a controller that
// does not converge (the pristine skeleton never programs a route).
const (
	// noProgress ends a wait for N routes when none became Programmed for so long.
	noProgress = 20 * time.Second
	// quietFor is how long the controller must be idle to count as settled;
	// settleLimit bounds that wait.
	quietFor    = time.Second
	settleLimit = 30 * time.Second
	// changeLimit bounds the wait for one change's route; after
	// missesToGiveUp such misses in a row with no success, the latency is
	// reported as not measurable.
	changeLimit    = 5 * time.Second
	missesToGiveUp = 3
	poll           = 5 * time.Millisecond
)

// limitWorkers are the worker counts of the limit phase.
var limitWorkers = []int{1, 4, 16}

// measureLimit writes the status of every route with each worker count
// (the controller is stopped), then clears it again. The best rate is the limit.
func (b *bencher) measureLimit(ctx context.Context, ns string, n int) (Limit, error) {
	l := Limit{ByWorkers: map[string]float64{}}
	write := func(workers int, conditions string) (time.Duration, error) {
		start := time.Now()
		err := parallel(ctx, n, workers, func(ctx context.Context, i int) error {
			u := newRoute(b.kind, ns, routeName("route", i), "")
			patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"conditions":`+conditions+`}}`))
			if err := b.c.Status().Patch(ctx, u, patch); err != nil {
				return fmt.Errorf("writing the status of %s %s/%s: %w", b.kind.Kind(), ns, u.GetName(), err)
			}
			b.progress.set("N=%d limit: writing every status with %s (of %v; the table keeps the fastest)", n, words.Count(workers, "worker", "workers"), limitWorkers)
			return nil
		})
		return time.Since(start), err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	for _, w := range limitWorkers {
		cond := fmt.Sprintf(`[{"type":"BenchLimit","status":"True","reason":"Bench","message":"%d workers","lastTransitionTime":%q,"observedGeneration":1}]`, w, now)
		took, err := write(w, cond)
		if err != nil {
			return l, err
		}
		rate := float64(n) / took.Seconds()
		l.ByWorkers[strconv.Itoa(w)] = round(rate, 1)
		if rate > l.PerSecond {
			l.PerSecond, l.Workers = rate, w
		}
	}
	if _, err := write(16, "null"); err != nil { // the controller starts from no status
		return l, err
	}
	l.PerSecond = round(l.PerSecond, 1)
	l.MsPerItem = round(1000/l.PerSecond, 3)
	l.Seconds = round(float64(n)/l.PerSecond, 3)
	return l, nil
}

// measureCold starts the controller on n existing routes and waits until
// all are seen Programmed, or until none became so for noProgress.
func (b *bencher) measureCold(ctx context.Context, ns string, n int, t *tracker, limit Limit) (Cold, error) {
	var cold Cold
	_, _, modBefore, _ := t.counts()
	start := time.Now()
	b.progress.set("N=%d cold start: starting the controller", n)
	if err := b.s.StartController(ctx, b.args...); err != nil {
		return cold, fmt.Errorf("starting the controller: %w", err)
	}
	ready := time.Now()
	lastCount, lastChange := -1, time.Now()
	for {
		count, lastAt, _, err := t.counts()
		if err != nil {
			return cold, err
		}
		cold.Programmed = count
		if count >= n {
			cold.Measured = true
			cold.Seconds = round(lastAt.Sub(start).Seconds(), 3)
			cold.FromReady = round(lastAt.Sub(ready).Seconds(), 3)
			break
		}
		if count != lastCount {
			lastCount, lastChange = count, time.Now()
		}
		if time.Since(lastChange) > noProgress {
			cold.Note = fmt.Sprintf("%d of %d routes were Programmed=True (observedGeneration current) after %.0f s; none more in the last %s",
				count, n, time.Since(start).Seconds(), noProgress)
			break
		}
		b.progress.set("N=%d cold start: %d/%d Programmed so far (%.1f s)", n, count, n, time.Since(start).Seconds())
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return cold, err
		}
	}
	b.progress.set("N=%d cold start: waiting for the controller to settle", n)
	m := b.settle(ctx)
	_, _, modAfter, _ := t.counts()
	usage, err := b.s.Usage()
	if err != nil {
		return cold, err
	}
	cold.Cost = Cost{
		Reconciles: m.ReconcileTotal, StatusWrites: float64(modAfter - modBefore), APIRequests: m.RESTRequests,
		ProxyPushes: float64(b.pushesSince(ns, start)), CPUSeconds: round(usage.CPUSeconds, 2), PeakRSS: usage.PeakRSS,
	}
	if cold.Measured {
		cold.RoutesPerSec = round(float64(n)/cold.Seconds, 1)
		cold.RatioToLimit = round(cold.RoutesPerSec/limit.PerSecond, 2)
	}
	perRoute := func(v float64) float64 { return round(v/float64(n), 3) }
	cold.PerRoute = Cost{
		Reconciles: perRoute(cold.Cost.Reconciles), StatusWrites: perRoute(cold.Cost.StatusWrites),
		APIRequests: perRoute(cold.Cost.APIRequests), ProxyPushes: perRoute(cold.Cost.ProxyPushes),
		CPUSeconds: round(cold.Cost.CPUSeconds/float64(n), 5), PeakRSS: usage.PeakRSS,
	}
	return cold, nil
}

// measureRestart kills the converged controller and starts it again: how
// long until its queue drains, and what it writes and pushes meanwhile.
func (b *bencher) measureRestart(ctx context.Context, ns string, n int, t *tracker) (Restart, error) {
	var r Restart
	if err := b.s.StopController(ctx); err != nil {
		return r, fmt.Errorf("stopping the controller: %w", err)
	}
	_, _, modBefore, _ := t.counts()
	start := time.Now()
	b.progress.set("N=%d restart: starting the controller", n)
	if err := b.s.StartController(ctx, b.args...); err != nil {
		return r, fmt.Errorf("starting the controller again: %w", err)
	}
	ready := time.Now()
	var last ctrlproc.Metrics
	lastTotal, lastChange := -1.0, time.Now()
	for {
		m, err := b.s.Metrics(ctx)
		if err != nil {
			return r, err
		}
		last = m
		if m.Idle() && m.ReconcileTotal >= float64(n) {
			r.Measured = true
			break
		}
		if m.ReconcileTotal != lastTotal || !m.Idle() {
			lastTotal, lastChange = m.ReconcileTotal, time.Now()
		}
		if time.Since(lastChange) > noProgress/4 {
			r.Note = fmt.Sprintf("the controller went idle after %.0f reconciles of %d routes", m.ReconcileTotal, n)
			break
		}
		b.progress.set("N=%d restart: %.0f/%d reconciled (%.1f s)", n, m.ReconcileTotal, n, time.Since(start).Seconds())
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return r, err
		}
	}
	drained := time.Now()
	r.Seconds = round(drained.Sub(start).Seconds(), 3)
	r.FromReady = round(drained.Sub(ready).Seconds(), 3)
	m := b.settle(ctx) // writes that trail the drained queue still count
	if m.ReconcileTotal == 0 {
		m = last
	}
	_, _, modAfter, _ := t.counts()
	r.Reconciles, r.APIRequests = m.ReconcileTotal, m.RESTRequests
	r.StatusWrites = float64(modAfter - modBefore)
	r.ProxyPushes = float64(b.pushesSince(ns, start))
	return r, nil
}

// measureLatency creates routes whose Services are missing, then creates
// their Services one at a time (self-heal), then edits each spec (spec
// change): each time, how long until the route is seen Programmed.
func (b *bencher) measureLatency(ctx context.Context, ns string, n, count int, t *tracker) (selfHeal, spec Latency, err error) {
	b.progress.set("N=%d latency: %d routes without their Services", n, count)
	if err := createSet(ctx, b.c, b.kind, ns, "lat", count, false); err != nil {
		return selfHeal, spec, err
	}
	b.settle(ctx)
	selfHeal, err = b.changes(ctx, count, t, "self-heal", n, func(ctx context.Context, i int) (int64, error) {
		if err := b.c.Create(ctx, newService(ns, serviceName("lat", i))); err != nil {
			return 0, fmt.Errorf("creating Service %s/%s: %w", ns, serviceName("lat", i), err)
		}
		return 0, nil
	})
	if err != nil {
		return selfHeal, spec, err
	}
	spec, err = b.changes(ctx, count, t, "spec change", n, func(ctx context.Context, i int) (int64, error) {
		u := newRoute(b.kind, ns, routeName("lat", i), "")
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"prefix":"/v2"}}`))
		if err := b.c.Patch(ctx, u, patch); err != nil {
			return 0, fmt.Errorf("editing %s %s/%s: %w", b.kind.Kind(), ns, u.GetName(), err)
		}
		return u.GetGeneration(), nil
	})
	return selfHeal, spec, err
}

// changes makes count changes one after the other and times each to
// Programmed=True for the generation change returned (0: any).
func (b *bencher) changes(ctx context.Context, count int, t *tracker, what string, n int,
	change func(ctx context.Context, i int) (int64, error)) (Latency, error) {
	var l Latency
	missesInARow := 0
	for i := 0; i < count; i++ {
		b.progress.set("N=%d latency: %s %d/%d", n, what, i+1, count)
		start := time.Now()
		gen, err := change(ctx, i)
		if err != nil {
			return l, err
		}
		for {
			if at, ok := t.programmedAt(routeName("lat", i), gen); ok {
				l.Samples = append(l.Samples, round(at.Sub(start).Seconds()*1000, 2))
				missesInARow = 0
				break
			}
			if time.Since(start) > changeLimit {
				l.Missed++
				missesInARow++
				break
			}
			if err := sleep(ctx, poll); err != nil {
				return l, err
			}
		}
		if len(l.Samples) == 0 && missesInARow >= missesToGiveUp {
			l.Note = fmt.Sprintf("not measurable: none of the first %d routes was Programmed=True within %s of the %s", missesInARow, changeLimit, what)
			return l, nil
		}
	}
	l.Measured = len(l.Samples) > 0
	if l.Missed > 0 {
		l.Note = fmt.Sprintf("%d of %d changes were not Programmed within %s", l.Missed, count, changeLimit)
	}
	sorted := append([]float64(nil), l.Samples...)
	sort.Float64s(sorted)
	l.P50, l.P95, l.P99 = percentile(sorted, 50), percentile(sorted, 95), percentile(sorted, 99)
	if len(sorted) > 0 {
		l.Max = sorted[len(sorted)-1]
	}
	return l, nil
}

// settle waits until the controller has been idle for quietFor (at most
// settleLimit) and returns its last metrics.
func (b *bencher) settle(ctx context.Context) ctrlproc.Metrics {
	var last ctrlproc.Metrics
	since := time.Now()
	deadline := time.Now().Add(settleLimit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		m, err := b.s.Metrics(ctx)
		if err != nil {
			return last
		}
		if !m.Idle() || m.ReconcileTotal != last.ReconcileTotal {
			since = time.Now()
		}
		last = m
		if time.Since(since) >= quietFor {
			break
		}
		_ = sleep(ctx, 50*time.Millisecond)
	}
	return last
}

// pushesSince counts the PUTs the proxy answered for ns since t.
func (b *bencher) pushesSince(ns string, t time.Time) int {
	n := 0
	for _, e := range b.s.Proxy.EventsIn(ns) {
		if e.Method == http.MethodPut && !e.Received.Before(t) {
			n++
		}
	}
	return n
}

// percentile of sorted values, nearest rank.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.999999) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}

func round(v float64, digits int) float64 {
	scale := 1.0
	for range digits {
		scale *= 10
	}
	return float64(int64(v*scale+0.5)) / scale
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
