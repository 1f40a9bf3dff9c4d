package checks

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/ctrlproc"
)

// phasedController's reconcile counters follow a script over time since
// its first scrape: each phase's counts hold from its offset on.
type phasedController struct {
	Controller
	phases []phase

	mu    sync.Mutex
	start time.Time
}

type phase struct {
	at     time.Duration
	counts map[string]float64
}

func (c *phasedController) Metrics(context.Context) (ctrlproc.Metrics, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.start.IsZero() {
		c.start = time.Now()
	}
	counts := c.phases[0].counts
	for _, p := range c.phases {
		if time.Since(c.start) >= p.at {
			counts = p.counts
		}
	}
	total := 0.0
	for _, n := range counts {
		total += n
	}
	return ctrlproc.Metrics{ReconcileTotal: total, ByResult: counts, MaxWorkers: 1}, nil
}

func (*phasedController) LogSince(time.Time) []ctrlproc.Line              { return nil }
func (*phasedController) StartIn(context.Context, []string) (bool, error) { return false, nil }
func (*phasedController) Work() (ctrlproc.Work, error)                    { return ctrlproc.Work{}, nil }

// TestAPendingRequeueIsNotIdleness: a route whose push was refused waits
// for its RequeueAfter (up to the contract's fair 10 s) while reconciles of
// other routes succeed after it: the wait goes on until the retry's time has
// passed (TimerSettle after the reconcile that asked for it), not Settle
// after the last success. A controller that asked for no retry is idle after
// Settle.
func TestAPendingRequeueIsNotIdleness(t *testing.T) {
	never := func() error { return errors.New("rb is not programmed") }
	to := DefaultTimeouts()
	to.Scrape, to.Poll = 20*time.Millisecond, 20*time.Millisecond
	to.Settle, to.TimerSettle = 300*time.Millisecond, 1500*time.Millisecond
	baseline := map[string]float64{"success": 3}

	t.Run("a requeue asked, then other routes succeed", func(t *testing.T) {
		c := &phasedController{phases: []phase{
			{0, baseline},
			{200 * time.Millisecond, map[string]float64{"success": 3, "requeue_after": 1}},
			{400 * time.Millisecond, map[string]float64{"success": 5, "requeue_after": 1}},
		}}
		ct, _ := scrapedT(t, "requeue", c, to)
		start := time.Now()
		err := ct.Converges(context.Background(), 10*time.Second, "the world after the proxy is back", never)
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), "went idle") || !strings.Contains(err.Error(), "a retry must come within 1.5s") {
			t.Fatalf("the wait ended with %v, want it to end idle, naming the retry's bound", err)
		}
		if took < 200*time.Millisecond+to.TimerSettle {
			t.Errorf("the wait ended after %s, before the requeue's time had passed (asked at 200ms, bound %s)", took, to.TimerSettle)
		}
	})

	t.Run("no retry asked", func(t *testing.T) {
		c := &phasedController{phases: []phase{
			{0, baseline},
			{200 * time.Millisecond, map[string]float64{"success": 5}},
		}}
		ct, _ := scrapedT(t, "idle", c, to)
		start := time.Now()
		err := ct.Converges(context.Background(), 10*time.Second, "the world after the proxy is back", never)
		if err == nil || !strings.Contains(err.Error(), "went idle") || strings.Contains(err.Error(), "retry") {
			t.Fatalf("the wait ended with %v, want it to end idle, no retry named", err)
		}
		if took := time.Since(start); took >= to.TimerSettle {
			t.Errorf("the wait took %s: an idle controller with no retry pending was waited for as if on a timer", took)
		}
	})
}
