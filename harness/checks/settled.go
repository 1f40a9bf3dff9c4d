package checks

import (
	"fmt"
	"strings"
	"time"

	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/proxy"
)

// A wait on one route also ends when the controller has settled on a refused
// push: the argument of doom.go (the world still since the check's last
// action, so a controller that keeps doing the same thing will keep doing
// it), read from that route's own evidence. Since the later of the check's
// last action and the route's last change (its spec, its status), the
// controller has pushed the route settledPushes times or more, the proxy
// refused every one of those pushes with the same answer to the same route,
// and the status has not changed for Timeouts.Settle: each retry saw what
// the one before saw and wrote nothing new, and the proxy answers the next
// the same way until the check changes it. A retry timer keeps such a
// controller from ever being idle (a Requeue: true retried with the queue's
// backoff), so without this proof the wait ran to its timeout.
//
// A correct controller writes the status a refusal calls for in the pass
// that got it, so a wait for that status ends before the proof can hold;
// and a status write that lost to a conflict (the controller's cache behind
// the API server) is retried with the push, so a conflict logged since the
// route's last change withholds the proof.

// settledPushes: the first refusal, and two retries that changed nothing.
const settledPushes = 3

// conflictText is the API server's answer to a write of an out-of-date
// object, as the controller's log quotes it.
const conflictText = "the object has been modified"

// settledEvidence is what the proof reads about one route.
type settledEvidence struct {
	route  string    // "EdgeRoute ns/name" (Primary.Object)
	since  time.Time // the check's last action (or its start)
	now    time.Time
	settle time.Duration
	// events are the record's events since the last action: the route's
	// changes as the watch saw them.
	events []evidence.Event
	// pushes are the proxy's answers for the route since the last action.
	pushes []proxy.Event
	// lines are the controller's log lines about the check's namespace since
	// the last action.
	lines []ctrlproc.Line
}

// settledOnRefusal is the route's own proof that a wait on it cannot succeed.
func (t *T) settledOnRefusal(key proxy.Key, now time.Time) (doom, bool) {
	if t.Proxy == nil || t.Timeouts.Settle <= 0 {
		return doom{}, false
	}
	since := t.start
	if a, ok := t.Record.LastAction(now); ok {
		since = a.At
	}
	ev := settledEvidence{route: t.Primary.Object(key.Namespace, key.Name), since: since, now: now, settle: t.Timeouts.Settle,
		events: t.Record.Since(since)}
	for _, pe := range t.Proxy.Events(key) {
		if !pe.Received.Before(since) {
			ev.pushes = append(ev.pushes, pe)
		}
	}
	if t.Controller != nil {
		for _, l := range t.Controller.LogSince(since) {
			if strings.Contains(l.Text, key.Namespace) {
				ev.lines = append(ev.lines, l)
			}
		}
	}
	return judgeSettled(ev)
}

// judgeSettled is settledOnRefusal's reading of the evidence.
func judgeSettled(ev settledEvidence) (doom, bool) {
	changed := ev.since
	for _, e := range ev.events {
		if e.Source != evidence.APIServer || e.Object != ev.route || e.At.Before(changed) {
			continue
		}
		// A rewrite that changed nothing (Bad) leaves the status as it was.
		if e.Kind == evidence.Object || (e.Kind == evidence.Status && !e.Bad) {
			changed = e.At
		}
	}
	if ev.now.Sub(changed) < ev.settle {
		return doom{}, false
	}
	var refused []proxy.Event
	for _, pe := range ev.pushes {
		if pe.Method != "PUT" || pe.Received.Before(changed) {
			continue
		}
		if pe.ACKed() || (len(refused) > 0 && !sameRefusal(refused[0], pe)) {
			return doom{}, false
		}
		refused = append(refused, pe)
	}
	if len(refused) < settledPushes {
		return doom{}, false
	}
	for _, l := range ev.lines {
		if !l.At.Before(changed) && strings.Contains(l.Text, conflictText) {
			return doom{}, false
		}
	}
	name := ev.route[strings.LastIndex(ev.route, "/")+1:]
	return doom{Proof: fmt.Sprintf("the controller pushed %s %s since its status last changed %s ago, the proxy refused every push the same way (%s), "+
		"and the status stayed as it was: each retry changed nothing, and the next will be refused the same way",
		name, Times(len(refused)), ev.now.Sub(changed).Round(100*time.Millisecond), refused[0].Answer())}, true
}

// sameRefusal: two pushes of the same route body answered the same way.
func sameRefusal(a, b proxy.Event) bool {
	if a.Status != b.Status || a.Reason != b.Reason || (a.Route == nil) != (b.Route == nil) {
		return false
	}
	return a.Route == nil || *a.Route == *b.Route
}
