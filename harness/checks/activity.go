package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/evidence"
)

// activity follows the controller's work through its metrics: it records
// every change of the reconcile counters, and tells the waits whether the
// controller is idle, busy, or waiting on a timer.
type activity struct {
	t *T

	// scraping serializes scrapes: the periodic one and resume's.
	scraping sync.Mutex

	mu   sync.Mutex
	last *ctrlproc.Metrics
	// quiet reads the scrapes by the harness's one rule of idleness.
	quiet ctrlproc.Quiet
	// retryAt is when the newest scrape that saw a reconcile ask for a
	// retry (an error, Requeue, RequeueAfter) was read: a retry may wait in
	// the queue until a fair retry's bound after it (delayed items are not
	// in workqueue_depth), whatever other reconciles finished since
	// (sinceRetry).
	retryAt time.Time
	// busySince is the first of the scrapes, up to the newest, that all saw
	// a worker busy and no reconcile finished (zero when the newest did not).
	busySince time.Time
	// paused stops the periodic scrapes (T.QuietWindow): a scrape is a
	// request the controller serves, work the kernel counts.
	paused bool
}

// run scrapes until the returned stop is called or ctx ends.
func (a *activity) run(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(a.t.Timeouts.Scrape)
		defer tick.Stop()
		for {
			if !a.isPaused() {
				a.scrape(ctx)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (a *activity) isPaused() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.paused
}

// pause stops the periodic scrapes until resume.
func (a *activity) pause() {
	a.mu.Lock()
	a.paused = true
	a.mu.Unlock()
}

// resume starts the periodic scrapes again, with one at once.
func (a *activity) resume(ctx context.Context) {
	a.mu.Lock()
	a.paused = false
	a.mu.Unlock()
	a.scrape(ctx)
}

func (a *activity) scrape(ctx context.Context) {
	if a.t.Controller == nil {
		return
	}
	a.scraping.Lock()
	defer a.scraping.Unlock()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	m, err := a.t.Controller.Metrics(sctx)
	cancel()
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.quiet.Observe(m, err, now) // unknown counts as busy: keep waiting
	if err != nil {
		return
	}
	delta := resultDelta(a.last, &m)
	switch {
	case len(delta) > 0 || m.ActiveWorkers == 0:
		a.busySince = time.Time{}
	case a.busySince.IsZero():
		a.busySince = now
	}
	a.last = &m
	if Retries(delta) > 0 {
		a.retryAt = now
	}
	if len(delta) > 0 {
		ev := evidence.Event{At: now, Source: evidence.Controller, Kind: evidence.Reconcile, Count: delta, Text: describeDelta(delta)}
		ev.Bad = delta["error"] > 0
		a.t.Record.Add(ev)
	}
}

// resultDelta is the reconciles finished between two scrapes, by result. A
// counter that went down means a new process: its counts are all new.
func resultDelta(prev, cur *ctrlproc.Metrics) map[string]int {
	out := map[string]int{}
	restarted := prev == nil
	if prev != nil {
		for k, v := range cur.ByResult {
			if v < prev.ByResult[k] {
				restarted = true
			}
		}
	}
	for k, v := range cur.ByResult {
		d := v
		if !restarted {
			d -= prev.ByResult[k]
		}
		if prev == nil {
			d = 0 // the first scrape is the baseline, not activity
		}
		if d > 0 {
			out[k] = int(d)
		}
	}
	return out
}

func describeDelta(d map[string]int) string {
	total := 0
	for _, n := range d {
		total += n
	}
	noun := "reconciles"
	if total == 1 {
		noun = "reconcile"
	}
	return fmt.Sprintf("%d %s (%s)", total, noun, resultList(d))
}

// resultList reads "3 success, 1 error".
func resultList(d map[string]int) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", d[k], k)
	}
	return strings.Join(parts, ", ")
}

// sinceRetry is how long before now the scrapes last saw a reconcile ask
// for a retry, and whether they ever did. A retry of one route waits in the
// queue however many reconciles of other routes succeed meanwhile: the
// newest result alone does not tell that nothing is pending.
func (a *activity) sinceRetry(now time.Time) (time.Duration, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.retryAt.IsZero() {
		return 0, false
	}
	return now.Sub(a.retryAt), true
}

// Retries counts the reconciles of d (by result, as controller-runtime's
// metrics label them) that asked to run again: an error, a requeue or a
// RequeueAfter.
func Retries(d map[string]int) int { return d["error"] + d["requeue"] + d["requeue_after"] }

// quietSince is how long scrapes taken after start have seen no work
// (ctrlproc.Quiet).
func (a *activity) quietSince(start time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.quiet.Since(start)
}

// stuck is how long the scrapes have seen a worker busy with no reconcile
// finishing, and whether every worker is (none is left to reconcile anything).
func (a *activity) stuck() (time.Duration, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	scraped, known := a.quiet.Scraped()
	if !known || a.last == nil || a.busySince.IsZero() {
		return 0, false
	}
	return scraped.Sub(a.busySince), a.last.MaxWorkers > 0 && a.last.ActiveWorkers >= a.last.MaxWorkers
}

// metrics returns the newest scrape, if any.
func (a *activity) metrics() (ctrlproc.Metrics, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, known := a.quiet.Scraped(); a.last == nil || !known {
		// None yet, or the newest scrape failed: what came before it is
		// not what the controller shows now.
		return ctrlproc.Metrics{}, false
	}
	return *a.last, true
}
