package ctrlproc

import "time"

// Quiet reads successive scrapes of one controller's metrics by the
// harness's one rule of idleness: a scrape shows work when something is
// queued or being reconciled (Metrics.Idle is false) or a reconcile
// finished since the scrape before (the total moved; a new process's
// counters, which start again, move it too). The first scrape is the
// baseline, and a failed scrape shows nothing, so both count as work: the
// quiet is counted from them. The checks' waits (checks' activity) and the
// runner's waits around each check read it; it is not safe for concurrent
// use.
type Quiet struct {
	last    *Metrics
	known   bool      // the newest scrape succeeded
	changed time.Time // the last scrape that showed work
	scraped time.Time // the newest successful scrape
}

// Observe takes a scrape read at now (err: it failed).
func (q *Quiet) Observe(m Metrics, err error, now time.Time) {
	if err != nil {
		q.known, q.changed = false, now
		return
	}
	if q.last == nil || !m.Idle() || m.ReconcileTotal != q.last.ReconcileTotal {
		q.changed = now
	}
	q.last, q.known, q.scraped = &m, true, now
}

// Since is how long scrapes taken after start have seen no work: from the
// later of start and the last work to the newest scrape (a scrape that is
// late on a loaded machine proves nothing about the time since). Unknown
// (no scrape yet, the newest failed, or none after start) is 0.
func (q *Quiet) Since(start time.Time) time.Duration {
	if !q.known || q.scraped.Before(start) {
		return 0
	}
	from := q.changed
	if from.Before(start) {
		from = start
	}
	return q.scraped.Sub(from)
}

// Scraped is when the newest successful scrape was read, and whether the
// newest scrape succeeded.
func (q *Quiet) Scraped() (time.Time, bool) { return q.scraped, q.known }
