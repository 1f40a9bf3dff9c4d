package checks

import (
	"context"
	"maps"
	"testing"
	"testing/synctest"
	"time"

	"github.com/10xdev/gw10/harness/ctrlproc"
)

// resultDelta reads the reconciles finished between two scrapes: the first
// scrape is the baseline (no activity), a counter that went down is a new
// process whose counts are all new.
func TestResultDeltaCountsWhatFinishedBetweenScrapes(t *testing.T) {
	m := func(counts map[string]float64) *ctrlproc.Metrics { return &ctrlproc.Metrics{ByResult: counts} }
	cases := []struct {
		name      string
		prev, cur *ctrlproc.Metrics
		want      map[string]int
	}{
		{"the baseline", nil, m(map[string]float64{"success": 4}), map[string]int{}},
		{"nothing finished", m(map[string]float64{"success": 4}), m(map[string]float64{"success": 4}), map[string]int{}},
		{"a conflict retried, then a success", m(map[string]float64{"success": 4}), m(map[string]float64{"success": 5, "error": 1}),
			map[string]int{"success": 1, "error": 1}},
		{"a restarted controller", m(map[string]float64{"success": 4, "requeue_after": 2}), m(map[string]float64{"success": 1}),
			map[string]int{"success": 1}},
	}
	for _, c := range cases {
		if got := resultDelta(c.prev, c.cur); !maps.Equal(got, c.want) {
			t.Errorf("%s: resultDelta = %v, want %v", c.name, got, c.want)
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
	// The scrapes 5 ms apart on synctest's fake clock: a stuck worker's
	// time is exactly the time between them.
	synctest.Test(t, func(t *testing.T) {
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
	})
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
