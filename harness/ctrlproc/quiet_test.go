package ctrlproc

import (
	"errors"
	"testing"
	"time"
)

func TestQuietCountsFromTheLastWork(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 17, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	idle := func(total float64) Metrics { return Metrics{ReconcileTotal: total} }
	var q Quiet
	if q.Since(time.Time{}) != 0 {
		t.Fatal("no scrape yet is quiet")
	}
	q.Observe(idle(3), nil, at(0)) // the baseline
	q.Observe(idle(3), nil, at(100))
	if got := q.Since(time.Time{}); got != 100*time.Millisecond {
		t.Errorf("quiet since the baseline: %v", got)
	}
	q.Observe(Metrics{ReconcileTotal: 3, QueueDepth: 1}, nil, at(200)) // queued
	q.Observe(idle(4), nil, at(300))                                   // finished one
	q.Observe(idle(4), nil, at(500))
	if got := q.Since(time.Time{}); got != 200*time.Millisecond {
		t.Errorf("quiet after a reconcile finished: %v", got)
	}
	if got := q.Since(at(450)); got != 50*time.Millisecond {
		t.Errorf("quiet after a start: %v", got)
	}
	if got := q.Since(at(600)); got != 0 {
		t.Errorf("no scrape after the start, yet quiet for %v", got)
	}
	q.Observe(Metrics{}, errors.New("connection refused"), at(600))
	if got := q.Since(time.Time{}); got != 0 {
		t.Errorf("a failed scrape is unknown, yet quiet for %v", got)
	}
	q.Observe(idle(0), nil, at(700)) // a new process: its counters start again
	q.Observe(idle(0), nil, at(800))
	if got := q.Since(time.Time{}); got != 100*time.Millisecond {
		t.Errorf("quiet since the new process's first scrape (its total moved, down): %v", got)
	}
}
