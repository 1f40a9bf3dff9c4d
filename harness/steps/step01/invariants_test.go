package step01

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/proxy"
)

// story builds a history of route r on Service s in namespace ns, second by
// second from t0.
type story struct {
	t0 time.Time
	h  checks.History
}

const storyNS = "ns"

func newStory() *story {
	return &story{t0: time.Date(2026, 12, 4, 7, 0, 0, 0, time.UTC), h: checks.History{Namespace: storyNS}}
}

func (s *story) at(sec float64) time.Time {
	return s.t0.Add(time.Duration(sec * float64(time.Second)))
}

func (s *story) action(sec float64, trig evidence.Trigger, object string) *story {
	s.h.Actions = append(s.h.Actions, evidence.Event{At: s.at(sec), Kind: evidence.Action, Trigger: trig, Object: object})
	return s
}

func (s *story) service(sec float64, exists bool) *story {
	trig := ServiceCreated
	if !exists {
		trig = ServiceDeleted
	}
	s.action(sec, trig, "Service ns/svc")
	s.h.Objects = append(s.h.Objects, checks.ObjectSeen{At: s.at(sec + 0.01), Kind: "Service", Name: "svc", Exists: exists})
	return s
}

func (s *story) route(sec float64) *story {
	s.action(sec, evidence.RouteCreated, "EdgeRoute ns/r")
	s.h.Specs = append(s.h.Specs, checks.SpecWritten{At: s.at(sec), Object: "EdgeRoute ns/r", Service: "svc"})
	s.h.Versions = append(s.h.Versions, checks.Version{At: s.at(sec + 0.01), Name: "r", Generation: 1, Spec: map[string]any{"service": "svc"}})
	return s
}

// edit is the check editing r's spec at sec to name service (generation
// gen), which its watch shows at seen.
func (s *story) edit(sec float64, service string, gen int64, seen float64) *story {
	s.action(sec, evidence.RouteEdited, "EdgeRoute ns/r")
	s.h.Specs = append(s.h.Specs, checks.SpecWritten{At: s.at(sec), Object: "EdgeRoute ns/r", Service: service})
	s.h.Versions = append(s.h.Versions, checks.Version{At: s.at(seen), Name: "r", Generation: gen, Spec: map[string]any{"service": service}})
	return s
}

// status is a status write seen at sec: Programmed with status for gen.
func (s *story) status(sec float64, prog string, gen int64) *story {
	s.h.Versions = append(s.h.Versions, checks.Version{At: s.at(sec), Name: "r", Generation: gen, Spec: map[string]any{"service": "svc"}, StatusWrite: true,
		Conditions: []checks.Condition{{Type: accepted, Status: "True", ObservedGeneration: gen}, {Type: programmed, Status: prog, ObservedGeneration: gen}}})
	return s
}

func (s *story) push(sec float64, gen int64, status int) *story {
	s.h.Proxy = append(s.h.Proxy, proxy.Event{Method: http.MethodPut, Key: proxy.Key{Namespace: storyNS, Name: "r"},
		Route: &proxy.Route{Generation: gen}, Received: s.at(sec), Answered: s.at(sec + 0.005), Status: status})
	return s
}

func (s *story) withdraw(sec float64, status int) *story {
	s.h.Proxy = append(s.h.Proxy, proxy.Event{Method: http.MethodDelete, Key: proxy.Key{Namespace: storyNS, Name: "r"},
		Received: s.at(sec), Answered: s.at(sec + 0.005), Status: status})
	return s
}

func TestProgrammedOnlyAfterAnACK(t *testing.T) {
	cases := []struct {
		name string
		s    *story
		want string // a violation containing this; "" for none
	}{
		{"after its ACK", newStory().service(0, true).route(1).push(1.1, 1, 200).status(1.2, "True", 1), ""},
		{"before the push", newStory().service(0, true).route(1).status(1.1, "True", 1).push(1.2, 1, 200), "ACKed no push of generation 1"},
		{"over NACKs only", newStory().service(0, true).route(1).push(1.1, 1, 409).status(1.2, "True", 1), "1 NACK"},
		{"an ACK of another generation", newStory().service(0, true).route(1).push(1.1, 1, 200).status(1.2, "True", 2), "generation 2"},
		{"long after a NACK that followed the ACK", newStory().service(0, true).route(1).push(1.1, 1, 200).push(2, 1, 409).status(9, "True", 1), "latest answer for it was a NACK"},
		{"a NACK the watch may have overtaken", newStory().service(0, true).route(1).push(1.1, 1, 200).push(2, 1, 409).status(2.5, "True", 1), ""},
		{"Programmed=False needs nothing", newStory().service(0, true).route(1).status(1.1, "False", 1), ""},
		{"an unanswered push is no ACK", newStory().service(0, true).route(1).push(1.1, 1, 0).status(1.2, "True", 1), "ACKed no push"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := programmedWithoutACK(c.s.h)
			checkViolations(t, got, c.want)
		})
	}
}

func TestEveryWrittenConditionIsStamped(t *testing.T) {
	stamped := func(gen, acc, prog int64) *story {
		s := newStory().service(0, true).route(1)
		s.h.Versions = append(s.h.Versions, checks.Version{At: s.at(2), Name: "r", Generation: gen, StatusWrite: true,
			Conditions: []checks.Condition{{Type: accepted, Status: "True", ObservedGeneration: acc}, {Type: programmed, Status: "False", ObservedGeneration: prog}}})
		return s
	}
	cases := []struct {
		name string
		s    *story
		want string
	}{
		{"both of its generation", stamped(2, 2, 2), ""},
		{"one of an earlier generation", stamped(3, 3, 2), ""},
		{"one unstamped", stamped(2, 2, 0), "Programmed=False () with observedGeneration 0, of an EdgeRoute at generation 2"},
		{"one ahead of the object", stamped(2, 3, 2), "Accepted=True () with observedGeneration 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkViolations(t, unstampedConditions(c.s.h), c.want)
		})
	}
	// What the watch shows without a write (a spec edit) is no write.
	s := stamped(2, 2, 0)
	s.h.Versions[len(s.h.Versions)-1].StatusWrite = false
	checkViolations(t, unstampedConditions(s.h), "")
}

func TestATransitionTimeMovesOnlyWithItsStatus(t *testing.T) {
	write := func(s *story, sec float64, acc, accLTT, prog, progLTT string) *story {
		s.h.Versions = append(s.h.Versions, checks.Version{At: s.at(sec), Name: "r", Generation: 1, StatusWrite: acc != "",
			Conditions: conds(acc, accLTT, prog, progLTT)})
		return s
	}
	cases := []struct {
		name string
		s    *story
		want string
	}{
		{"kept while the status stays", write(write(newStory().route(1), 2, "True", "t1", "False", "t1"), 3, "True", "t1", "True", "t3"), ""},
		{"moved while the status stays", write(write(newStory().route(1), 2, "True", "t1", "False", "t1"), 3, "True", "t3", "True", "t3"),
			"moved Accepted's lastTransitionTime from t1 to t3, and its status stayed True"},
		{"after a wipe", write(write(write(newStory().route(1), 2, "True", "t1", "True", "t1"), 3, "", "", "", ""), 4, "True", "t4", "True", "t4"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkViolations(t, transitionsWithoutChange(c.s.h), c.want)
		})
	}
}

// conds are Accepted and Programmed with their lastTransitionTimes; none
// when acc is "" (a status wiped).
func conds(acc, accLTT, prog, progLTT string) []checks.Condition {
	if acc == "" {
		return nil
	}
	return []checks.Condition{{Type: accepted, Status: acc, ObservedGeneration: 1, LastTransitionTime: accLTT},
		{Type: programmed, Status: prog, ObservedGeneration: 1, LastTransitionTime: progLTT}}
}

func TestNoWithdrawOfARouteThatStays(t *testing.T) {
	cases := []struct {
		name        string
		s           *story
		nack, flaps string
	}{
		{"after a NACK", newStory().service(0, true).route(1).push(1.1, 1, 200).push(10, 1, 409).withdraw(10.01, 204), "refused its push", ""},
		{"out of the blue", newStory().service(0, true).route(1).push(1.1, 1, 200).withdraw(10, 204), "", "withdrawn (204)"},
		{"its Service deleted", newStory().service(0, true).route(1).push(1.1, 1, 200).service(10, false).withdraw(10.1, 204), "", ""},
		{"its Service just created (a cache a moment old)", newStory().route(0).service(10, true).withdraw(10.02, 404), "", ""},
		{"the EdgeRoute deleted", newStory().service(0, true).route(1).push(1.1, 1, 200).action(10, evidence.RouteDeleted, "EdgeRoute ns/r").withdraw(10.1, 204), "", ""},
		{"during an outage (no answer)", newStory().service(0, true).route(1).push(1.1, 1, 200).withdraw(10, 0), "", ""},
		{"after a NACK of an edit the watch shows later", newStory().service(0, true).route(1).push(1.1, 1, 200).
			edit(10, "svc", 2, 10.5).push(10.01, 2, 409).withdraw(10.02, 204), "refused its push", ""},
		{"after a NACK, before the watch showed the route", newStory().service(0, true).route(1).push(1.001, 1, 409).withdraw(1.002, 204),
			"refused its push", ""},
		{"after an edit to a missing Service", newStory().service(0, true).route(1).push(1.1, 1, 200).
			edit(10, "nowhere", 2, 10.5).push(10.01, 1, 409).withdraw(10.02, 204), "", ""},
		{"out of the blue, after an edit to a missing Service had been undone", newStory().service(0, true).route(1).push(1.1, 1, 200).
			edit(10, "nowhere", 2, 10.1).edit(11, "svc", 3, 11.1).withdraw(20, 204), "", "withdrawn (204)"},
		{"a NACK during an outage is none", newStory().service(0, true).route(1).push(1.1, 1, 200).push(10, 1, 0).withdraw(10.01, 204), "", "withdrawn (204)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nacked, flaps := needlessWithdraws(c.s.h)
			checkViolations(t, nacked, c.nack)
			checkViolations(t, flaps, c.flaps)
		})
	}
}

func checkViolations(t *testing.T, got []string, want string) {
	t.Helper()
	switch {
	case want == "" && len(got) > 0:
		t.Errorf("want no violation, got %q", got)
	case want != "" && len(got) == 0:
		t.Errorf("want a violation saying %q, got none", want)
	case want != "" && !strings.Contains(strings.Join(got, "\n"), want):
		t.Errorf("want a violation saying %q, got %q", want, got)
	}
}

// TestEveryInvariantNamesAClauseOfTheContract: the descriptor validates, and
// each invariant is one of the contract's clauses.
func TestEveryInvariantNamesAClauseOfTheContract(t *testing.T) {
	if err := Step().Validate(); err != nil {
		t.Fatal(err)
	}
	if len(Step().Invariants) == 0 {
		t.Fatal("the step has no invariants")
	}
}

// TestTheStepWatchesTheKindsItsInvariantsRead: S-NACKED and Q-NO-FLAP ask
// whether a route's Service existed (serviceAt reads History.Objects), and
// the recorder follows only the kinds the descriptor names: without Service
// among them every such invariant would hold vacuously.
func TestTheStepWatchesTheKindsItsInvariantsRead(t *testing.T) {
	for _, gvk := range Step().Watched {
		if gvk.Group == "" && gvk.Kind == "Service" {
			return
		}
	}
	t.Fatalf("the descriptor watches %v: no Service, so the invariants that ask whether a Service existed cannot fail", Step().Watched)
}

func TestOneRequestOfARouteAtATime(t *testing.T) {
	// byHarness marks the story's last request as the harness's own push
	// (proxy.Server.PushAsHarness), no request of the controller's.
	byHarness := func(s *story) *story {
		s.h.Proxy[len(s.h.Proxy)-1].ByHarness = true
		return s
	}
	// answered sets the answer time of the story's last request.
	answered := func(s *story, sec float64) *story {
		s.h.Proxy[len(s.h.Proxy)-1].Answered = s.at(sec)
		return s
	}
	other := func(s *story, sec float64) *story {
		s.h.Proxy = append(s.h.Proxy, proxy.Event{Method: http.MethodPut, Key: proxy.Key{Namespace: storyNS, Name: "other"},
			Received: s.at(sec), Answered: s.at(sec + 0.005), Status: 204})
		return s
	}
	cases := []struct {
		name string
		s    *story
		want string
	}{
		{"one after another", newStory().route(0).push(1, 1, 204).withdraw(2, 204).push(3, 1, 204), ""},
		{"a slow answer waited for", answered(newStory().route(0).push(1, 1, 204), 4).push(4.1, 1, 204), ""},
		{"a push beside an unanswered push", answered(newStory().route(0).push(1, 1, 204), 4).push(2, 1, 204),
			"a push reached the proxy while the push sent at 07:00:01.000 was still unanswered (answered 07:00:04.000)"},
		{"a push beside an unanswered withdraw", answered(newStory().route(0).withdraw(1, 204), 3).push(2, 1, 204),
			"a push reached the proxy while the withdraw sent at 07:00:01.000"},
		// The record lists requests as they are answered: the later one first.
		{"recorded out of order", answered(newStory().route(0).push(2, 1, 204), 2.1).push(1, 1, 204),
			""},
		{"another route's request meanwhile", other(answered(newStory().route(0).push(1, 1, 204), 4), 2), ""},
		{"the harness's own push meanwhile", byHarness(answered(newStory().route(0).push(1, 1, 204), 4).push(2, 1, 204)), ""},
		{"a push beside one the harness pushed before", answered(byHarness(answered(newStory().route(0).push(1, 1, 204), 4)).push(2, 1, 204), 3).push(2.5, 1, 204),
			"a push reached the proxy while the push sent at 07:00:02.000 was still unanswered (answered 07:00:03.000)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkViolations(t, requestsAtOnce(c.s.h), c.want)
		})
	}
}
