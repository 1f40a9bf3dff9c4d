package checks

import (
	"context"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/ctrlproc"
)

func TestRetryPendingReadsOneScrape(t *testing.T) {
	cases := []struct {
		name  string
		delta map[string]int
		want  bool
	}{
		{"a plain success", map[string]int{"success": 2}, false},
		{"polling with RequeueAfter", map[string]int{"requeue_after": 1}, true},
		{"polling with Requeue", map[string]int{"requeue": 3}, true},
		{"an error waiting for its backoff", map[string]int{"error": 1}, true},
		{"a conflict retried and then successful", map[string]int{"error": 1, "success": 1}, false},
		{"nothing finished", map[string]int{}, false},
	}
	for _, c := range cases {
		if got := retryPending(c.delta); got != c.want {
			t.Errorf("%s: retryPending(%v) = %v, want %v", c.name, c.delta, got, c.want)
		}
	}
}

// The finalizer variant's first pass: a conflict, its retry 5 ms later and
// the echo of the status write may fall into one scrape or into several; a
// retry that was followed by a success is over either way.
func TestAPastRetryIsNotPendingAcrossScrapes(t *testing.T) {
	scrapes := [][]map[string]float64{
		{{"error": 1, "success": 2}},
		{{"error": 1}, {"error": 1, "success": 1}, {"error": 1, "success": 2}},
	}
	for i, seq := range scrapes {
		var prev *ctrlproc.Metrics
		pending := false
		for _, counts := range append([]map[string]float64{{}}, seq...) {
			cur := &ctrlproc.Metrics{ByResult: counts}
			if d := resultDelta(prev, cur); len(d) > 0 {
				pending = retryPending(d)
			}
			prev = cur
		}
		if pending {
			t.Errorf("sequence %d: a retry followed by a success still reads as pending", i)
		}
	}
}

// scripted is a controller whose scrapes read from a script.
type scripted struct {
	Controller
	scrapes []ctrlproc.Metrics
}

func (s *scripted) Metrics(context.Context) (ctrlproc.Metrics, error) {
	m := s.scrapes[0]
	if len(s.scrapes) > 1 {
		s.scrapes = s.scrapes[1:]
	}
	return m, nil
}

// A worker is stuck while every scrape sees it busy and no reconcile
// finishing; a finished reconcile or an idle scrape ends it.
func TestAWorkerIsStuckWhileNoReconcileFinishes(t *testing.T) {
	busy := func(total float64, active float64) ctrlproc.Metrics {
		return ctrlproc.Metrics{ReconcileTotal: total, ByResult: map[string]float64{"success": total}, ActiveWorkers: active, MaxWorkers: 1}
	}
	ctrl := &scripted{scrapes: []ctrlproc.Metrics{busy(3, 1), busy(3, 1), busy(3, 1), busy(4, 1), busy(4, 0)}}
	a := &activity{t: NewT("stuck", Env{Controller: ctrl})}
	wants := []struct {
		stuck, all bool
	}{{false, true}, {true, true}, {true, true}, {false, false}, {false, false}}
	for i, w := range wants {
		a.scrape(context.Background())
		d, all := a.stuck()
		if (d > 0) != w.stuck || (d > 0 && all != w.all) {
			t.Errorf("scrape %d: stuck for %s (every worker: %v), want stuck %v", i, d, all, w.stuck)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// scrapes is a Controller whose Metrics answers from a script: a nil entry
// is a failed scrape; past the end, the last entry again.
type scrapes struct {
	Controller
	script []*ctrlproc.Metrics
	n      int
}

func (s *scrapes) Metrics(context.Context) (ctrlproc.Metrics, error) {
	i := min(s.n, len(s.script)-1)
	s.n++
	if s.script[i] == nil {
		return ctrlproc.Metrics{}, context.DeadlineExceeded
	}
	return *s.script[i], nil
}

// TestAFailedScrapeIsUnmeasuredNotQuiet: after a good scrape, a failed one
// leaves no metrics to read (an older scrape in its place would let a
// check of polling pass having measured nothing), and MeasuredMetrics says
// nothing was measured.
func TestAFailedScrapeIsUnmeasuredNotQuiet(t *testing.T) {
	good := &ctrlproc.Metrics{ReconcileTotal: 3}
	ct := NewT("x", Env{Controller: &scrapes{script: []*ctrlproc.Metrics{good, nil}}})
	ct.activity.scrape(context.Background())
	if m, ok := ct.LastMetrics(); !ok || m.ReconcileTotal != 3 {
		t.Fatalf("after a good scrape: %v, %v", m, ok)
	}
	ct.activity.scrape(context.Background())
	if m, ok := ct.LastMetrics(); ok {
		t.Errorf("after a failed scrape LastMetrics still answers %v", m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := ct.MeasuredMetrics(ctx); err == nil {
		t.Error("MeasuredMetrics measured something from a controller whose scrapes fail")
	}
}
