package checks

import (
	"strings"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/proxy"
)

// settledCase is the card sketch's push-failure as the evidence shows it:
// the route created (the action), its status written once (Programmed=False,
// no Accepted) 200 ms later, then the sketch's Requeue: true retrying the
// refused push with the queue's backoff (5 ms, 10 ms, 20 ms, ...) and
// writing nothing new.
func settledCase(now time.Duration) settledEvidence {
	action := time.Date(2026, 12, 4, 13, 0, 0, 0, time.UTC)
	route := "EdgeRoute " + ns + "/nacked"
	body := &proxy.Route{Hostname: "nacked.example.com", Prefix: "/", Service: "nacked-svc", Port: 8080, Generation: 1}
	push := func(at time.Duration) proxy.Event {
		return proxy.Event{Method: "PUT", Key: proxy.Key{Namespace: ns, Name: "nacked"}, Route: body,
			Received: action.Add(at), Answered: action.Add(at), Status: 422, Reason: "listener port conflicts with the admin port (gw10 check)"}
	}
	ev := settledEvidence{route: route, since: action, now: action.Add(now), settle: 2500 * time.Millisecond,
		events: []evidence.Event{
			{At: action.Add(50 * time.Millisecond), Source: evidence.APIServer, Kind: evidence.Object, Object: route, Text: "EdgeRoute nacked exists (generation 1)"},
			{At: action.Add(200 * time.Millisecond), Source: evidence.APIServer, Kind: evidence.Status, Object: route, Text: "status of nacked: Programmed=False/PushFailed"},
		}}
	for _, at := range []time.Duration{100, 210, 220, 240, 280, 360, 520, 840, 1480, 2760} {
		ev.pushes = append(ev.pushes, push(at*time.Millisecond))
	}
	return ev
}

func TestARefusedPushRetriedWithNothingWrittenIsSettled(t *testing.T) {
	d, ok := judgeSettled(settledCase(3 * time.Second))
	if !ok {
		t.Fatal("the sketch's retries of a refused push, status unchanged for 2.8 s: not judged settled")
	}
	for _, want := range []string{"pushed nacked 9 times", "since its status last changed 2.8s ago", "422 listener port conflicts", "each retry changed nothing"} {
		if !strings.Contains(d.Proof, want) {
			t.Errorf("proof %q does not say %q", d.Proof, want)
		}
	}
	if d.Blocker != nil || d.Prerequisite {
		t.Errorf("a settled route is this wait's proof, not the run's: %+v", d)
	}
}

func TestWhatKeepsARefusedRouteFromBeingSettled(t *testing.T) {
	for name, c := range map[string]func(*settledEvidence){
		// A correct controller's status is written in the pass that got the
		// refusal; the proof waits Settle after it.
		"status changed within Settle": func(ev *settledEvidence) {
			ev.events = append(ev.events, evidence.Event{At: ev.now.Add(-time.Second), Source: evidence.APIServer, Kind: evidence.Status,
				Object: ev.route, Text: "status of nacked: Accepted=True/Valid, Programmed=False/PushFailed"})
		},
		"spec edited within Settle": func(ev *settledEvidence) {
			ev.events = append(ev.events, evidence.Event{At: ev.now.Add(-time.Second), Source: evidence.APIServer, Kind: evidence.Object,
				Object: ev.route, Text: "EdgeRoute nacked spec changed: generation 2"})
		},
		"a push ACKed": func(ev *settledEvidence) {
			ev.pushes[len(ev.pushes)-1].Status, ev.pushes[len(ev.pushes)-1].Reason = 200, ""
		},
		"a different refusal": func(ev *settledEvidence) {
			ev.pushes[len(ev.pushes)-1].Reason = "another reason"
		},
		"a different route pushed": func(ev *settledEvidence) {
			r := *ev.pushes[len(ev.pushes)-1].Route
			r.Generation = 2
			ev.pushes[len(ev.pushes)-1].Route = &r
		},
		"two pushes only": func(ev *settledEvidence) {
			ev.pushes = ev.pushes[:3] // the first is before the status change
		},
		"a status write lost to a conflict": func(ev *settledEvidence) {
			ev.lines = []ctrlproc.Line{{At: ev.now.Add(-2 * time.Second), Text: conflict}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			ev := settledCase(3 * time.Second)
			c(&ev)
			if d, ok := judgeSettled(ev); ok {
				t.Errorf("judged settled: %s", d.Proof)
			}
		})
	}
}

// A rewrite that changed nothing (churn, a defect of its own) leaves the
// status as it was: it does not restart the count.
func TestARewriteWithNothingChangedKeepsTheRouteSettled(t *testing.T) {
	ev := settledCase(3 * time.Second)
	ev.events = append(ev.events, evidence.Event{At: ev.now.Add(-time.Second), Source: evidence.APIServer, Kind: evidence.Status,
		Object: ev.route, Bad: true, Text: "EdgeRoute nacked rewritten with nothing changed (resourceVersion 812)"})
	if _, ok := judgeSettled(ev); !ok {
		t.Error("a rewrite with nothing changed restarted the count")
	}
	// Another route's change is not this route's.
	ev = settledCase(3 * time.Second)
	ev.events = append(ev.events, evidence.Event{At: ev.now.Add(-time.Second), Source: evidence.APIServer, Kind: evidence.Status,
		Object: "EdgeRoute " + ns + "/other", Text: "status of other: Accepted=True/Valid"})
	if _, ok := judgeSettled(ev); !ok {
		t.Error("another route's status change restarted this route's count")
	}
}
