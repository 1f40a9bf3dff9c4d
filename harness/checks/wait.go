package checks

import (
	"context"
	"fmt"
	"time"

	"github.com/onsi/gomega"

	"github.com/10xdev/gw10/harness/ctrlproc"
)

// problem is a check's finding: gomega prints its text as is, where it
// would otherwise dump the error's Go structure.
type problem struct{ msg string }

func (p problem) Error() string                { return p.msg }
func (p problem) FormattedGomegaError() string { return p.msg }

func problemf(format string, args ...any) error { return problem{fmt.Sprintf(format, args...)} }

// asProblem keeps an error's text and drops its structure.
func asProblem(err error) error {
	if err == nil {
		return nil
	}
	return problem{err.Error()}
}

// ok fails the check when err is not nil, saying what was being done.
func (env *Env) ok(err error, what string, args ...any) {
	env.G.Expect(asProblem(err)).To(gomega.Succeed(), append([]any{what}, args...)...)
}

// fail ends the check with msg, printed as is.
func (env *Env) fail(msg string) {
	env.G.Expect(problem{msg}).To(gomega.Succeed())
}

// waitFor polls cond until it returns nil, like gomega's Eventually, and
// fails with cond's last error after within. It gives up earlier once the
// controller has been idle for Timeouts.Settle (nothing queued or running, no
// reconcile): such a controller has reacted to everything it will react to,
// so a learner's failing check answers in seconds, not after every timeout.
func (env *Env) waitFor(ctx context.Context, within time.Duration, what string, cond func() error) {
	idle := idleTracker{env: env}
	start := time.Now()
	for {
		err := cond()
		if err == nil {
			return
		}
		var why string
		switch d := idle.idleFor(ctx); {
		case ctx.Err() != nil:
			why = "the check was stopped"
		case time.Since(start) > within:
			why = fmt.Sprintf("not reached within %s", within)
		case env.Timeouts.Settle > 0 && d >= env.Timeouts.Settle:
			why = fmt.Sprintf("the controller went idle for %s without getting there", d.Round(100*time.Millisecond))
		}
		if why != "" {
			env.fail(fmt.Sprintf("waiting for %s: %s\n%s", what, why, err))
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(env.Timeouts.Poll):
		}
	}
}

// stays polls cond for d and fails the first time it returns an error.
func (env *Env) stays(ctx context.Context, d time.Duration, what string, cond func() error) {
	env.G.Consistently(func() error { return asProblem(cond()) }).
		WithContext(ctx).WithTimeout(d).WithPolling(env.Timeouts.Poll).
		Should(gomega.Succeed(), "for %s, %s", d, what)
}

// idleTracker measures how long the controller's metrics have shown no work.
type idleTracker struct {
	env   *Env
	last  ctrlproc.Metrics
	since time.Time
}

func (t *idleTracker) idleFor(ctx context.Context) time.Duration {
	m, err := t.env.Controller.Metrics(ctx)
	now := time.Now()
	switch {
	case err != nil || !m.Idle():
		t.since = time.Time{} // busy, or unknown: keep waiting
	case t.since.IsZero() || m.ReconcileTotal != t.last.ReconcileTotal:
		t.since = now
	}
	t.last = m
	if t.since.IsZero() {
		return 0
	}
	return now.Sub(t.since)
}
