package checks

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/10xdev/gw10/harness/evidence"
)

// WaitFor polls cond until it returns nil, and fails the check with cond's
// last error after within. It gives up earlier once the controller has been
// idle for Timeouts.Settle (nothing queued or running, no reconcile, no retry
// pending): such a controller has reacted to everything it will react to, so
// a learner's failing check answers in seconds, not after every timeout. A
// controller with a reconcile that asked for a retry (an error, Requeue,
// RequeueAfter) less than Timeouts.TimerSettle ago may be waiting on a timer
// (a RequeueAfter up to the contract's fair 10 s, Q-BACKOFF), not idle, even
// if reconciles of other routes succeeded since: the wait then gives up only
// once that retry's time has passed too.
//
// It ends at once when the evidence proves the wait cannot succeed (see
// doom.go): a refused write of the status, a panic loop, a hot loop; a wait
// on one route (Route.Eventually) also when the controller has settled on a
// refused push of it (settled.go).
//
// A failed wait adds the cause the evidence shows: whether the controller
// reconciled after the last thing the check did, and what it wrote.
func (t *T) WaitFor(ctx context.Context, within time.Duration, what string, cond func() error) {
	if err := t.Converges(ctx, within, what, cond); err != nil {
		t.Fatalf("%s", err)
	}
}

// Converges is WaitFor that returns the failure instead of ending the check,
// for a check that adds its own context to it (the sequence so far, say).
// The cause from the evidence is added either way.
func (t *T) Converges(ctx context.Context, within time.Duration, what string, cond func() error) error {
	return t.converges(ctx, within, what, cond, nil, false)
}

// WaitPatiently is WaitFor for work a controller may do off its queue, on a
// timer of its own (a start-up sweep retrying a listing the proxy refused):
// the controller's idleness proves nothing then, so only within and the
// evidence's proofs end the wait.
func (t *T) WaitPatiently(ctx context.Context, within time.Duration, what string, cond func() error) {
	if err := t.converges(ctx, within, what, cond, nil, true); err != nil {
		t.Fatalf("%s", err)
	}
}

// ConvergesPatiently is Converges for work a controller may do off its
// queue (a look at the data plane every drift period, S-DRIFT): like
// WaitPatiently, its idleness ends nothing; it returns the error.
func (t *T) ConvergesPatiently(ctx context.Context, within time.Duration, what string, cond func() error) error {
	return t.converges(ctx, within, what, cond, nil, true)
}

// converges is Converges with a proof of its own (settledOnRefusal for a
// wait on one route), read when doomed's hold none; a patient wait is not
// ended by the controller's idleness.
func (t *T) converges(ctx context.Context, within time.Duration, what string, cond func() error, proof func(now time.Time) (doom, bool), patient bool) error {
	start := time.Now()
	for {
		err := cond()
		if err == nil {
			return nil
		}
		var why string
		quiet := t.activity.quietSince(start)
		now := time.Now()
		sinceRetry, retried := t.activity.sinceRetry(now)
		timer := retried && sinceRetry < t.Timeouts.TimerSettle
		d, doomed := t.doomed(ctx, now)
		if !doomed && proof != nil {
			d, doomed = proof(now)
		}
		switch {
		case ctx.Err() != nil:
			why = "the check was stopped"
			if c := context.Cause(ctx); c != nil && c != ctx.Err() {
				why += ": " + c.Error()
			}
		case time.Since(start) > within:
			why = fmt.Sprintf("not reached within %s", within)
		case doomed && d.Prerequisite:
			why = "not run properly: " + d.Proof
			t.setHint(d.Hint)
		case doomed:
			why = "it cannot succeed: " + d.Proof
			t.Cause("%s", d.Proof)
			t.setHint(d.Hint)
			if d.Blocker != nil {
				t.setBlocker(*d.Blocker)
			}
		case patient && !timer && t.Timeouts.PatientSettle > 0 && quiet >= t.Timeouts.PatientSettle && t.proxyQuietSince(start, now) >= t.Timeouts.PatientSettle:
			why = fmt.Sprintf("for %s the controller ran no reconcile, had no retry pending and sent the proxy no request (no listing of its routes, no push, no withdraw): nothing it runs is at work on it",
				t.Timeouts.PatientSettle)
		case patient:
		case !timer && t.Timeouts.Settle > 0 && quiet >= t.Timeouts.Settle:
			why = idleWhy(quiet, retried, t.Timeouts.TimerSettle)
		}
		if why != "" {
			t.explainWait(doomed)
			return fmt.Errorf("waiting for %s: %s\n%w", what, why, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(t.Timeouts.Poll):
		}
	}
}

// idleWhy says why a wait ended on an idle controller: idle for quiet, and,
// if a reconcile had asked for a retry (retried), more than timerSettle ago.
func idleWhy(quiet time.Duration, retried bool, timerSettle time.Duration) string {
	why := fmt.Sprintf("the controller went idle for %s without getting there", quiet.Round(100*time.Millisecond))
	if retried {
		why += fmt.Sprintf(" (the last reconcile that asked for a retry finished over %s ago: a retry must come within %s)", timerSettle, timerSettle)
	}
	return why
}

// proxyQuietSince is how long, by now, the proxy has had no request (of
// any kind, about any route) since start, with none in flight; 0 without a
// proxy (nothing proves it quiet).
func (t *T) proxyQuietSince(start, now time.Time) time.Duration {
	if t.Proxy == nil {
		return 0
	}
	last, inFlight := t.Proxy.Activity()
	if inFlight > 0 {
		return 0 // the controller waits on an answer
	}
	if last.Before(start) {
		last = start
	}
	return now.Sub(last)
}

// Stays polls cond for d and fails the check the first time it returns an error.
func (t *T) Stays(ctx context.Context, d time.Duration, what string, cond func() error) {
	end := time.Now().Add(d)
	for {
		if err := cond(); err != nil {
			t.Fatalf("for %s, %s:\n%s", d, what, err)
		}
		if time.Now().After(end) || ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(t.Timeouts.Poll):
		}
	}
}

// WaitIdle waits until scrapes taken after the call have seen the
// controller do nothing for Timeouts.Idle (a status write's own echo, the second
// reconcile, has come and gone). Work it finished just before the call, whose
// counters a scrape has not seen yet, counts as new work.
func (t *T) WaitIdle(ctx context.Context) {
	start := time.Now()
	t.WaitFor(ctx, t.Timeouts.Converge, "the controller to finish its work", func() error {
		if t.activity.quietSince(start) < t.Timeouts.Idle {
			return fmt.Errorf("the controller is still working (or its metrics cannot be read)")
		}
		return nil
	})
}

// explainWait adds the cause of a failed wait from the evidence: what the
// check last did, and what the controller did after it. A wait ended by a
// proof from the controller's log (doomed) knows the controller reconciled,
// though the scrapes may not have seen it yet.
func (t *T) explainWait(doomed bool) {
	action, ok := t.Record.LastAction(time.Now())
	if !ok {
		return
	}
	events := t.Evidence()
	tl := evidence.TallyAfter(events, action.At, "")
	if tl.Reconciles == 0 {
		if !doomed {
			t.Cause("%s", noReconcileCause(t.Primary, action))
		}
		return
	}
	t.Cause("%s", didReconcileCause(t.Primary, action, tl))
}

// noReconcileCause is the learner's conclusion when nothing followed an
// action: the step's own (Primary.Causes) first.
func noReconcileCause(p Primary, action evidence.Event) string {
	after := "no reconcile followed " + action.Text
	if p.Causes.NoReconcile != nil {
		if why := p.Causes.NoReconcile(action.Trigger); why != "" {
			return after + ": " + why
		}
	}
	switch action.Trigger {
	case evidence.RouteCreated, evidence.RouteEdited, evidence.RouteDeleted:
		return after + ": the " + p.Kind() + " event woke no reconcile"
	case evidence.Restarted:
		return after + ": the new process reconciled nothing"
	case evidence.ProxyChanged:
		return after + ": the proxy's new answer sends the controller no event, and no retry of the refused push was pending"
	default:
		return after
	}
}

func didReconcileCause(p Primary, action evidence.Event, tl evidence.Tally) string {
	s := fmt.Sprintf("after %s the controller reconciled %s (%s), pushed %s (%d refused), withdrew %s",
		action.Text, Times(tl.Reconciles), resultList(tl.ByResult), Times(tl.Pushes), tl.NACKs, Times(tl.Withdraws))
	if tl.LastStatus == nil {
		s += " and wrote no status"
	} else {
		s += fmt.Sprintf(" and wrote status %s; the last write: %s", Times(tl.StatusWrites), tl.LastStatus.Text)
	}
	return s + didNothing(p, action, tl)
}

// didNothing reads a pass that ran, succeeded and changed nothing after an
// event that should have changed something: Reconcile saw the event and
// returned early. Which events should have changed what is the step's
// design (Primary.Causes.DidNothing).
func didNothing(p Primary, action evidence.Event, tl evidence.Tally) string {
	if tl.Reconciles == 0 || tl.ByResult["success"] != tl.Reconciles || p.Causes.DidNothing == nil {
		return ""
	}
	return p.Causes.DidNothing(action.Trigger, tl)
}

// Did records an action of the check on the world: the trigger the causes
// start from. A trigger is one of every step's (evidence.Generic) or one
// the step declares (Env.Triggers); any other is the harness's mistake and
// fails the check, for no cause would ever read it.
func (t *T) Did(trigger evidence.Trigger, object, format string, args ...any) {
	if !evidence.Generic(trigger) && !slices.Contains(t.Triggers, trigger) {
		t.Errorf("harness: the check records an action with trigger %q, which neither package evidence nor the step's descriptor (Triggers) declares", trigger)
	}
	t.Record.Add(evidence.Event{Source: evidence.Harness, Kind: evidence.Action, Trigger: trigger, Object: object,
		Text: fmt.Sprintf(format, args...)})
}
