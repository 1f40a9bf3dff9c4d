// Package checks is the machinery of the acceptance checks: a check is a
// value with a stable ID, what it proves of the card, its points, its hints
// and a Run function that drives the cluster and the proxy through a *T. A
// check fails one way only, through its T (Fatalf, Errorf, or a failed wait),
// as a Go test does through its testing.T. The checks of each step live with
// the step's descriptor (package steps).
package checks

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Check is one acceptance check.
type Check struct {
	ID    string // stable: reports, docs and hints use it
	Title string
	// SeedRef is the line of the card (the seed: the course's text of the
	// step) that the check proves: a task, an acceptance line or a prompt.
	SeedRef string
	// Clauses are the IDs of the step's contract clauses (step.Step.Contract,
	// docs/contract.md) that the check proves: a controller that breaks one of
	// them must fail it.
	Clauses []string
	Points  int
	Hint    string // one line, printed on failure
	// Direction is make hint ID=<check> MORE=1: where to look (a part of
	// controller-runtime, a doc comment, a row of the contract, a question
	// to ask of one's own code), never the design.
	Direction string
	LongHint  string // make hint ID=<check> MORE=2: the design, in words, no code
	// Probe is the grader-owned test the check runs (T.Probe), when it
	// calls the step's code in one: such a check neither drives nor
	// watches the running controller (its log and state say nothing about
	// the failure, so none is shown beside it). The runner builds it in a
	// stage of its own, before any check runs.
	Probe *Probe
	Run   func(ctx context.Context, t *T)
}

// Budget is how much of its generated sequences a check drives.
type Budget string

const (
	// BudgetLearner is make check's and make watch's: one short sequence,
	// planned from a fresh seed to reach every situation the step's
	// contract lists, for a verdict in seconds.
	BudgetLearner Budget = "learner"
	// BudgetFull is the grade's (and make test's): the step's fixed seeds
	// at their full length, the same sequences every run.
	BudgetFull Budget = "full"
)

// ParseBudget reads a budget as --budget takes it.
func ParseBudget(s string) (Budget, error) {
	switch b := Budget(s); b {
	case BudgetLearner, BudgetFull:
		return b, nil
	}
	return "", fmt.Errorf("a sequence budget is %q (make check's short planned sequence) or %q (the grade's fixed seeds at full length), not %q",
		BudgetLearner, BudgetFull, s)
}

// Timeouts are every wait of every check, and of the runner around each
// check, in one place: a duration a wait uses is a field here, never a
// literal beside the wait.
type Timeouts struct {
	// Converge bounds waiting for the controller to react to a change.
	Converge time.Duration
	// SelfHeal is the card's bound for status to flip after the Service appears.
	SelfHeal time.Duration
	// Quiet is how long a converged controller must do nothing.
	Quiet time.Duration
	// Absent is how long something must stay absent (a route, a True status).
	Absent time.Duration
	// Retry bounds waiting for a NACKed push to be retried after the proxy ACKs again;
	// it covers the rate limiter's exponential backoff.
	Retry time.Duration
	// Check bounds a whole check.
	Check time.Duration
	// Poll is the interval of every wait.
	Poll time.Duration
	// Settle ends a wait early: once the controller has been idle this long
	// (nothing queued, nothing running, no reconcile, no retry pending)
	// without reaching the expected state, waiting longer will not get it there.
	Settle time.Duration
	// PatientSettle ends a patient wait (T.WaitPatiently: work a controller
	// may do off its queue, on a timer of its own, such as a start-up sweep
	// retrying a listing the proxy refused) once the controller has run no
	// reconcile, had no retry pending and sent the proxy no request at all
	// (no listing, push or withdraw; none in flight) for this long: nothing
	// it runs is at work, on the queue or off it.
	PatientSettle time.Duration
	// TimerSettle replaces Settle while a retry may be pending (the last
	// reconcile returned an error, Requeue or RequeueAfter): a controller
	// waiting on a timer is not idle. A retry must come within this bound.
	TimerSettle time.Duration
	// Idle is how long the controller must be seen doing nothing to count
	// as idle (T.WaitIdle, and the runner after deleting a check's
	// namespace): longer than a status write takes to come back as an event.
	Idle time.Duration
	// EndQuiet and EndQuietLimit bound the runner's wait at the end of a
	// passing check for the controller to finish what the check caused (a
	// correct controller is idle at once); EndAlive is how long it then
	// watches for the process exiting.
	EndQuiet, EndQuietLimit, EndAlive time.Duration
	// Cleanup bounds deleting a check's objects and namespace; CleanupIdle
	// bounds waiting for the controller to be Idle after it.
	Cleanup, CleanupIdle time.Duration
	// NACKHold is how long push-failure's proxy refuses the route: long
	// enough to see the retries settle into their backoff.
	NACKHold time.Duration
	// SequenceQuiet is how long a converged, healthy world must stay quiet
	// after a step of the generated sequences: no reconcile, no status write.
	SequenceQuiet time.Duration
	// Scrape is how often the controller's metrics are read during a
	// check: often enough to place each reconcile on the timeline.
	// Measure bounds T.MeasuredMetrics' wait for a scrape that succeeds (a
	// loaded machine can make one scrape time out, not five seconds of them).
	Scrape, Measure time.Duration
	// StuckFor is how long a worker must be seen busy with no reconcile
	// finishing to be stuck (a pass of a correct controller takes
	// milliseconds; a loaded machine makes that a second, not five);
	// StuckConfirm is how long a later check confirms an earlier check's
	// proof that every worker is stuck.
	StuckFor, StuckConfirm time.Duration
	// HotLoopWait lets the first burst after an action settle before a
	// hundred reconciles since it are called a hot loop.
	HotLoopWait time.Duration
	// Workers bounds the runner's wait for the controller's "Starting
	// workers" log line (controller-runtime prints it once its caches have
	// synced; on envtest that takes well under a second).
	Workers time.Duration
}

// DefaultTimeouts are generous for slow CI machines, except SelfHeal, which
// the card sets: a watch reacts in milliseconds, a poller does not.
func DefaultTimeouts() Timeouts {
	return Timeouts{
		Converge:    30 * time.Second,
		SelfHeal:    5 * time.Second,
		Quiet:       3 * time.Second,
		Absent:      time.Second,
		Retry:       45 * time.Second,
		Check:       3 * time.Minute,
		Poll:        100 * time.Millisecond,
		Settle:      2500 * time.Millisecond,
		TimerSettle: 15 * time.Second,
		// A sweep's listing comes once the cache has synced (well under a
		// second on envtest) and every retry within its backoff's seconds.
		PatientSettle: 10 * time.Second,

		Idle:          500 * time.Millisecond,
		EndQuiet:      100 * time.Millisecond,
		EndQuietLimit: 2 * time.Second,
		EndAlive:      time.Second,
		Cleanup:       30 * time.Second,
		CleanupIdle:   10 * time.Second,
		NACKHold:      2 * time.Second,
		SequenceQuiet: 800 * time.Millisecond,
		Scrape:        100 * time.Millisecond,
		Measure:       5 * time.Second,
		StuckFor:      5 * time.Second,
		StuckConfirm:  time.Second,
		HotLoopWait:   2 * time.Second,
		Workers:       20 * time.Second,
	}
}

// Select returns the checks with the given IDs (all when ids is empty), or an
// error naming an unknown ID.
func Select(all []Check, ids []string) ([]Check, error) {
	if len(ids) == 0 {
		return all, nil
	}
	var out []Check
	for _, id := range ids {
		c, ok := Find(all, id)
		if !ok {
			return nil, fmt.Errorf("unknown check %q (known: %s)", id, IDs(all))
		}
		out = append(out, c)
	}
	return out, nil
}

// Find returns the check with this ID.
func Find(all []Check, id string) (Check, bool) {
	for _, c := range all {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}

// IDs lists the checks' IDs, comma-separated.
func IDs(all []Check) string {
	ids := make([]string, len(all))
	for i, c := range all {
		ids[i] = c.ID
	}
	return strings.Join(ids, ", ")
}
