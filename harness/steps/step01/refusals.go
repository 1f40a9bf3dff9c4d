package step01

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/words"
)

// push-failure's routes whose refusals differ every attempt, as a real
// proxy's do: one NACKed (after an ACK) with a new request id in every answer, one whose
// connections are reset (the controller's error then names its local port,
// new every attempt). A condition message made of the error's text changes
// every attempt: each new message is a status write, and the write's own
// event runs the next pass at once, past the backoff (ST-MESSAGE).
const (
	varyingNACKRoute = "nacked-ids"
	resetRoute       = "reset"
	// refusedBefore is how long both routes are refused before the window
	// opens: a correct controller's first write and first retries are over.
	refusedBefore = 2 * time.Second
	// maxSettledWrites bounds the status writes of one route in the window:
	// a correct controller writes none once its message says the refusal;
	// a message made of the error's text writes at every attempt.
	maxSettledWrites = 2
)

// varyingRefusals are push-failure's routes whose refusals differ every
// attempt.
type varyingRefusals struct {
	nacked, reset *checks.Route
}

// refuseVaryingly creates the two routes on service: the connections of
// one are reset from the start; the other is programmed first, then the
// proxy NACKs it with a new request id in every answer and its spec is
// edited, so that its next push is refused: a NACK after an ACK, whose
// route the proxy keeps serving (S-NACKED: no withdraw). The edit, not a
// touch of the Service, wakes it: a Service update that changes nothing a
// route reads need wake no route.
func refuseVaryingly(ctx context.Context, t *checks.T, service string) varyingRefusals {
	resetKey := checks.RouteKey(t, resetRoute)
	t.Did(evidence.ProxyChanged, "EdgeRoute "+resetKey.String(), "telling the proxy to reset the connections of %s", resetRoute)
	t.Proxy.SetReset(resetKey, true)
	v := varyingRefusals{
		nacked: t.NewRoute(ctx, varyingNACKRoute, service, 8080),
		reset:  t.NewRoute(ctx, resetRoute, service, 8080),
	}
	v.nacked.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)
	t.Did(evidence.ProxyChanged, v.nacked.Object(), "telling the proxy to refuse %s with a new request id in every answer", varyingNACKRoute)
	t.Proxy.SetNACKWithRequestIDs(v.nacked.Key(), nackReason)
	v.nacked.Edit(ctx, "spec.port 8080 -> 8081, so that it is pushed again (and refused)",
		func(spec map[string]any) { spec["port"] = int64(8081) })
	// Waited for here, while the edit is the check's last action: a wait
	// that fails is explained from what followed that action.
	v.nacked.Eventually(ctx, t.Timeouts.Converge, acceptedTrue,
		checks.Want{Type: programmed, Status: "False", Reason: "PushFailed", Message: nackReason})
	return v
}

// settle fails the check when the status writes of the routes whose
// refusals differ every attempt do not stop (ST-MESSAGE), or their pushes
// are not paced by a backoff: it watches a window of Timeouts.Quiet once
// both have been refused for refusedBefore, and reads the API server's
// writes and the proxy's pushes.
func (v varyingRefusals) settle(ctx context.Context, t *checks.T) {
	var first time.Time
	t.WaitFor(ctx, t.Timeouts.Converge, "a push of "+v.reset.String()+" to reach the proxy", func() error {
		for _, r := range []*checks.Route{v.nacked, v.reset} {
			at, ok := firstRefusal(t, r)
			if !ok {
				return fmt.Errorf("the proxy\n  expected: a push of %s\n  observed: none", r)
			}
			if at.After(first) {
				first = at
			}
		}
		return nil
	})
	t.Sleep(ctx, time.Until(first.Add(refusedBefore)))
	from := time.Now()
	t.Sleep(ctx, t.Timeouts.Quiet)
	to := time.Now()

	var problems []string
	for _, r := range []*checks.Route{v.nacked, v.reset} {
		how := "NACKed every push with the same reason and a new request id"
		if r == v.reset {
			how = "reset the connection of every push"
		}
		writes := statusWritesOf(t, r, from, to)
		pushes := pushesIn(t, r, from, to)
		window := to.Sub(from).Round(10 * time.Millisecond)
		t.Logf("%s, refused for %s before the window (the proxy %s): %s and %s in the %s window",
			r, from.Sub(first).Round(100*time.Millisecond), how, words.Count(len(writes), "status write", "status writes"),
			words.Count(pushes, "push", "pushes"), window)
		if len(writes) > maxSettledWrites {
			t.Cause("%s's status was written %s in %s while the proxy %s: its message changes every attempt (%s), "+
				"and each write's own event runs the next pass at once, past the backoff",
				r, checks.Times(len(writes)), window, how, messagesOf(writes))
			problems = append(problems, fmt.Sprintf("%s: %s and %s in %s (at most %d writes, and none once the message says the refusal)",
				r, words.Count(len(writes), "status write", "status writes"), words.Count(pushes, "push", "pushes"), window, maxSettledWrites))
			continue
		}
		if rate := float64(pushes) / to.Sub(from).Seconds(); rate > maxRetryRate {
			t.Cause("%s was pushed %s in %s while the proxy %s: a tight loop, not a backoff", r, checks.Times(pushes), window, how)
			problems = append(problems, fmt.Sprintf("%s: %.1f pushes per second, at most %.0f (%s)", r, rate, maxRetryRate, ClauseBackoff))
		}
	}
	if len(problems) > 0 {
		t.Fatalf("a refused route's status must settle: its condition message a function of what was observed (the NACK's reason, "+
			"never the whole answer; a fixed text such as \"data plane unreachable\" when no answer came), so a refusal repeated "+
			"writes nothing (%s):\n  - %s", ClauseMessage, strings.Join(problems, "\n  - "))
	}
}

// answer lifts the refusals.
func (v varyingRefusals) answer(t *checks.T) {
	t.Did(evidence.ProxyChanged, v.nacked.Object(), "telling the proxy to accept %s and %s again", varyingNACKRoute, resetRoute)
	t.Proxy.SetNACKWithRequestIDs(v.nacked.Key(), "")
	t.Proxy.SetReset(v.reset.Key(), false)
}

// programmed waits for both routes to be programmed once answered. The
// queue's backoff of a route refused for seconds can be seconds long, and
// the controller's other routes may be done meanwhile: its idleness proves
// nothing, so the wait is patient.
func (v varyingRefusals) programmed(ctx context.Context, t *checks.T) {
	for _, r := range []*checks.Route{v.nacked, v.reset} {
		t.WaitPatiently(ctx, t.Timeouts.Retry, r.String()+" to be programmed once the proxy answers", func() error {
			return r.HasConditions(ctx, acceptedTrue, programmedTrue)
		})
	}
}

// firstRefusal is when the proxy first refused (or reset) a push of r.
func firstRefusal(t *checks.T, r *checks.Route) (time.Time, bool) {
	for _, ev := range t.Proxy.Events(r.Key()) {
		if ev.Method == http.MethodPut && !ev.ACKed() {
			return ev.Received, true
		}
	}
	return time.Time{}, false
}

// pushesIn counts the pushes of r the proxy received in [from, to).
func pushesIn(t *checks.T, r *checks.Route, from, to time.Time) int {
	n := 0
	for _, ev := range t.Proxy.Events(r.Key()) {
		if ev.Method == http.MethodPut && !ev.Received.Before(from) && ev.Received.Before(to) {
			n++
		}
	}
	return n
}

// statusWritesOf are the writes of r's status the watch delivered in [from, to).
func statusWritesOf(t *checks.T, r *checks.Route, from, to time.Time) []evidence.Event {
	var out []evidence.Event
	for _, ev := range t.Record.Events() {
		if ev.Source == evidence.APIServer && ev.Kind == evidence.Status && ev.Object == r.Object() &&
			!ev.At.Before(from) && ev.At.Before(to) {
			out = append(out, ev)
		}
	}
	return out
}

// messagesOf quotes the first two distinct Programmed messages the writes
// carried.
func messagesOf(writes []evidence.Event) string {
	var msgs []string
	for _, w := range writes {
		c, _ := programmedOf(w.Detail)
		m := c.Message
		if m != "" && !slices.Contains(msgs, m) {
			msgs = append(msgs, m)
		}
		if len(msgs) == 2 {
			break
		}
	}
	if len(msgs) == 0 {
		return "no Programmed message could be read"
	}
	quoted := make([]string, len(msgs))
	for i, m := range msgs {
		quoted[i] = fmt.Sprintf("%q", m)
	}
	return "messages written: " + strings.Join(quoted, ", then ")
}

// writtenCondition is a condition as a status write carried it.
type writtenCondition struct {
	Type, Status, Message string
	ObservedGeneration    int64
}

// programmedOf reads the Programmed condition from a status event's detail
// ("generation g, resourceVersion v" then the status as JSON); false when
// the write carried none.
func programmedOf(detail string) (writtenCondition, bool) {
	_, raw, ok := strings.Cut(detail, "\n")
	if !ok {
		return writtenCondition{}, false
	}
	var status struct{ Conditions []writtenCondition }
	if json.Unmarshal([]byte(raw), &status) != nil {
		return writtenCondition{}, false
	}
	for _, c := range status.Conditions {
		if c.Type == programmed {
			return c, true
		}
	}
	return writtenCondition{}, false
}
