package step01

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/proxy"
	"github.com/10xdev/gw10/harness/words"
)

// The contract's clauses that hold at every event, checked over the whole
// history of every check (and after every step of a sequence), not only at
// a check's checkpoints: a defect nobody wrote a check for still breaks one.

// staleGrace is how long the harness allows the controller's view to lag
// behind the world: a write or withdraw that the world changed under (a
// Service just created, a spec just edited) within it proves nothing. The
// watch that shows the harness a status write can lag behind the write as
// much, so an answer of the proxy within it may have come after the write.
const staleGrace = 3 * time.Second

func invariants() []checks.Invariant {
	return []checks.Invariant{
		{
			Clause: ClauseAfterAck,
			Rule:   "Programmed=True is written only when the proxy's latest answer for the route's current generation is an ACK",
			Fix:    "push first, then set Programmed from the proxy's answer to that push: True only after its ACK, False/PushFailed after a NACK",
			Eval:   programmedWithoutACK,
		},
		{
			Clause: ClauseNacked,
			Rule:   "a refused push leaves the data plane as the proxy left it: no withdraw of a route whose EdgeRoute and Service exist",
			Fix:    "after a NACK the proxy keeps serving the last route it ACKed: the route stays, and only the status says Programmed=False/PushFailed",
			Eval:   func(h checks.History) []string { nacked, _ := needlessWithdraws(h); return nacked },
		},
		{
			Clause: ClauseNoFlap,
			Rule:   "a route whose EdgeRoute and Service exist is never withdrawn, not even for a moment (outside a proxy outage)",
			Fix:    "withdraw only a route whose EdgeRoute is gone or whose Service is missing; a withdraw followed by a push is an outage on a real proxy",
			Eval:   func(h checks.History) []string { _, flaps := needlessWithdraws(h); return flaps },
		},
		{
			Clause: ClauseObsGen,
			Rule:   "every condition a status write carries has the observedGeneration of a generation the EdgeRoute has had: never 0, never above its generation",
			Fix:    "stamp every condition you write with the generation of the EdgeRoute you read (what setCondition is for), on every path: a deletion's too",
			Eval:   unstampedConditions,
		},
		{
			Clause: ClauseOneAtATime,
			Rule:   "a push or withdraw of a route is sent only once the last one sent for that route is answered, or given up (its connection closed)",
			Fix:    "send the proxy requests from Reconcile only, and wait there for each answer (the work queue never runs two passes of one route at once): a request left running when its pass ends is still in flight when the next pass sends another",
			Eval:   requestsAtOnce,
		},
		{
			Clause: ClauseNoChurn,
			Rule:   "a condition's lastTransitionTime moves only when its status changes",
			Fix:    "keep a condition's lastTransitionTime while its status stays, and move it only with the status",
			Eval:   transitionsWithoutChange,
		},
	}
}

// requestsAtOnce: no push or withdraw of a route reached the proxy while
// an earlier request of that route was still unanswered. A request the
// controller gave up on (it closed the connection) is not in the proxy's
// record, so it holds nothing in flight; a real proxy may still apply it,
// but the controller can no longer tell, and the next pass decides again.
// The harness's own pushes are no request of the controller's.
func requestsAtOnce(h checks.History) []string {
	events := slices.DeleteFunc(slices.Clone(h.Proxy), func(e proxy.Event) bool { return e.ByHarness })
	slices.SortStableFunc(events, func(a, b proxy.Event) int { return a.Received.Compare(b.Received) })
	var out []string
	open := map[proxy.Key]proxy.Event{} // per route, the request answered last so far
	reported := map[proxy.Key]bool{}
	for _, e := range events {
		if prev, ok := open[e.Key]; ok && e.Received.Before(prev.Answered) && !reported[e.Key] {
			reported[e.Key] = true
			out = append(out, fmt.Sprintf("%s %s: a %s reached the proxy while the %s sent at %s was still unanswered (answered %s): two requests of one route in flight at once, which a proxy may apply in either order",
				clock(e.Received), routeObject(h, e.Key.Name), requestWord(e), requestWord(prev), clock(prev.Received), clock(prev.Answered)))
		}
		if prev, ok := open[e.Key]; !ok || e.Answered.After(prev.Answered) {
			open[e.Key] = e
		}
	}
	return out
}

// requestWord names a request of the proxy's record.
func requestWord(e proxy.Event) string {
	if e.Method == http.MethodDelete {
		return "withdraw"
	}
	return "push"
}

// transitionsWithoutChange: a status write keeps the lastTransitionTime of
// every condition whose status it leaves as the EdgeRoute's last version
// had it (a status someone else wiped has no condition to keep).
func transitionsWithoutChange(h checks.History) []string {
	var out []string
	last := map[string]checks.Version{}
	for _, v := range h.Versions {
		if v.Gone {
			delete(last, v.Name)
			continue
		}
		if p, ok := last[v.Name]; ok && v.StatusWrite {
			for _, c := range v.Conditions {
				was, found := p.Find(c.Type)
				if found && was.Status == c.Status && was.LastTransitionTime != "" && c.LastTransitionTime != "" && was.LastTransitionTime != c.LastTransitionTime {
					out = append(out, fmt.Sprintf("%s %s: a status write moved %s's lastTransitionTime from %s to %s, and its status stayed %s",
						clock(v.At), routeObject(h, v.Name), c.Type, was.LastTransitionTime, c.LastTransitionTime, c.Status))
				}
			}
		}
		last[v.Name] = v
	}
	return out
}

// unstampedConditions: every condition of every status write carries an
// observedGeneration between 1 and the EdgeRoute's generation at the write.
// An older generation than the object's may be a pass that read it before
// an edit, and is judged by the checks' checkpoints, not here.
func unstampedConditions(h checks.History) []string {
	var out []string
	for _, v := range h.Versions {
		if !v.StatusWrite {
			continue
		}
		for _, c := range v.Conditions {
			if c.ObservedGeneration < 1 || c.ObservedGeneration > v.Generation {
				out = append(out, fmt.Sprintf("%s %s: a status write carried %s=%s (%s) with observedGeneration %d, of an EdgeRoute at generation %d",
					clock(v.At), routeObject(h, v.Name), c.Type, c.Status, c.Reason, c.ObservedGeneration, v.Generation))
			}
		}
	}
	return out
}

// programmedWithoutACK: every status write that says Programmed=True for
// generation g follows an ACK of a push of generation g of that route (of
// this incarnation of it), and the proxy's latest answer for g before the
// write is not a NACK that came well before it.
func programmedWithoutACK(h checks.History) []string {
	var out []string
	for _, v := range h.Versions {
		c, ok := v.Find(programmed)
		if !v.StatusWrite || !ok || c.Status != "True" {
			continue
		}
		object := routeObject(h, v.Name)
		born := lastAction(h, object, v.At, evidence.RouteCreated)
		var last *proxy.Event
		acked := false
		for i := range h.Proxy {
			e := &h.Proxy[i]
			if e.Key.Name != v.Name || e.Method != http.MethodPut || e.Status == 0 || e.Route == nil ||
				e.Route.Generation != c.ObservedGeneration || e.Answered.Before(born) || !e.Answered.Before(v.At) {
				continue
			}
			last = e
			acked = acked || e.ACKed()
		}
		switch {
		case !acked:
			out = append(out, fmt.Sprintf("%s %s: a status write said Programmed=True for generation %d, and the proxy had ACKed no push of generation %d of it before (%s)",
				clock(v.At), object, c.ObservedGeneration, c.ObservedGeneration, answers(h, v.Name, c.ObservedGeneration, born, v.At)))
		case !last.ACKed() && last.Answered.Before(v.At.Add(-staleGrace)):
			out = append(out, fmt.Sprintf("%s %s: a status write said Programmed=True for generation %d, and the proxy's latest answer for it was a NACK at %s (%s)",
				clock(v.At), object, c.ObservedGeneration, clock(last.Answered), last.Answer()))
		}
	}
	return out
}

// needlessWithdraws lists the withdraws the proxy answered for routes whose
// EdgeRoute and Service both existed: right after a refused push of the
// route (S-NACKED), or any other (Q-NO-FLAP) unless the route or its
// Service had just changed. An unanswered withdraw (the proxy down) is an
// outage's, and not counted. Which Service a route named is what the check
// wrote into its spec, not what the watch had shown by then: a controller
// acts on an edit at once, and the harness's watch may show it later.
func needlessWithdraws(h checks.History) (nacked, flaps []string) {
	for i, e := range h.Proxy {
		if e.Method != http.MethodDelete || e.Status == 0 {
			continue
		}
		object := routeObject(h, e.Key.Name)
		services := servicesNamed(h, object, e.Received)
		if !routeExists(h, e.Key.Name, e.Received) || len(services) == 0 {
			continue
		}
		if slices.ContainsFunc(services, func(s string) bool { return !serviceAt(h, s, e.Received) }) {
			continue // a Service it named, a moment ago or now, is missing
		}
		named := strings.Join(services, " and ")
		prev := previousRequest(h.Proxy[:i], e.Key)
		if prev != nil && prev.Method == http.MethodPut && prev.Status != 0 && !prev.ACKed() {
			nacked = append(nacked, fmt.Sprintf("%s %s withdrawn (%s) right after the proxy refused its push at %s (%s), while the EdgeRoute and its Service %s exist",
				clock(e.Received), object, e.Answer(), clock(prev.Answered), prev.Answer(), named))
			continue
		}
		since := e.Received.Add(-staleGrace)
		changed := lastAction(h, object, e.Received).After(since)
		for _, s := range services {
			changed = changed || lastAction(h, "Service "+h.Namespace+"/"+s, e.Received).After(since)
		}
		if changed {
			continue // the controller may have acted on a view a moment old
		}
		flaps = append(flaps, fmt.Sprintf("%s %s withdrawn (%s) while the EdgeRoute and its Service %s exist, and neither had changed for %s",
			clock(e.Received), object, e.Answer(), named, staleGrace))
	}
	return nacked, flaps
}

// servicesNamed are the Services object's spec named, as the check wrote
// it, at some moment of [at-staleGrace, at]: the controller may have acted
// on any of them. None when the check wrote no spec of it.
func servicesNamed(h checks.History, object string, at time.Time) []string {
	var out []string
	for _, s := range h.Specs {
		if s.Object != object || s.At.After(at) {
			continue
		}
		if s.At.Before(at.Add(-staleGrace)) {
			out = out[:0]
		}
		if !slices.Contains(out, s.Service) {
			out = append(out, s.Service)
		}
	}
	return out
}

// routeExists: route name surely existed at at: the check had created it
// and not deleted it since, and the watch shows this incarnation neither
// gone nor being deleted (as another controller's finalizer holds it).
func routeExists(h checks.History, name string, at time.Time) bool {
	object := routeObject(h, name)
	born := lastAction(h, object, at, evidence.RouteCreated)
	if born.IsZero() || lastAction(h, object, at, evidence.RouteDeleted).After(born) {
		return false
	}
	var v *checks.Version
	for i := range h.Versions {
		if x := &h.Versions[i]; x.Name == name && !x.At.After(at) {
			v = x
		}
	}
	return v == nil || v.At.Before(born) || (!v.Gone && !v.Deleting)
}

// serviceAt: Service name surely existed at at: the watch had seen it
// appear, and the check had not deleted it since.
func serviceAt(h checks.History, name string, at time.Time) bool {
	var seen *checks.ObjectSeen
	for i := range h.Objects {
		if s := &h.Objects[i]; s.Kind == "Service" && s.Name == name && !s.At.After(at) {
			seen = s
		}
	}
	if seen == nil || !seen.Exists {
		return false
	}
	deleted := lastAction(h, "Service "+h.Namespace+"/"+name, at, ServiceDeleted)
	return !deleted.After(lastAction(h, "Service "+h.Namespace+"/"+name, at, ServiceCreated))
}

// lastAction is when the check last acted on object at or before at (of one
// of triggers, or any), zero if never.
func lastAction(h checks.History, object string, at time.Time, triggers ...evidence.Trigger) time.Time {
	var last time.Time
	for _, a := range h.Actions {
		if a.Object != object || a.At.After(at) {
			continue
		}
		if len(triggers) > 0 && !containsTrigger(triggers, a.Trigger) {
			continue
		}
		last = a.At
	}
	return last
}

func containsTrigger(ts []evidence.Trigger, t evidence.Trigger) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// previousRequest is the newest request for key among events.
func previousRequest(events []proxy.Event, key proxy.Key) *proxy.Event {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Key == key {
			return &events[i]
		}
	}
	return nil
}

// answers summarises the proxy's answers to pushes of generation gen of
// route name between from and to.
func answers(h checks.History, name string, gen int64, from, to time.Time) string {
	acks, nacks, pushes := 0, 0, 0
	for _, e := range h.Proxy {
		if e.Key.Name != name || e.Method != http.MethodPut || e.Received.Before(from) || !e.Received.Before(to) {
			continue
		}
		pushes++
		if e.Route == nil || e.Route.Generation != gen || e.Status == 0 {
			continue
		}
		if e.ACKed() {
			acks++
		} else {
			nacks++
		}
	}
	if pushes == 0 {
		return "nothing was pushed"
	}
	return fmt.Sprintf("%s in all; of generation %d: %s, %s", words.Count(pushes, "push", "pushes"), gen,
		words.Count(acks, "ACK", "ACKs"), words.Count(nacks, "NACK", "NACKs"))
}

func routeObject(h checks.History, name string) string {
	return "EdgeRoute " + h.Namespace + "/" + name
}

func clock(t time.Time) string { return t.Format("15:04:05.000") }
