package checks

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/evidence"
)

// The log lines below are the controller's own, as controller-runtime's zap
// logger writes them (taken from runs of the mutants and the solution).
const ns = "gw10-missing-service-mb8tp"

func reconcilerError(err string) string {
	return `2026-12-04T06:49:29Z	ERROR	Reconciler error	{"controller": "edgeroute", "controllerGroup": "net.10xdev.io", "controllerKind": "EdgeRoute", ` +
		`"EdgeRoute": {"name":"orphan","namespace":"` + ns + `"}, "namespace": "` + ns + `", "name": "orphan", ` +
		`"reconcileID": "018f4bec-fd14-42b0-b25f-f34d93bb339d", "error": "` + err + `"}`
}

var (
	forbiddenUpdate = reconcilerError(`updating status of ` + ns + `/orphan: edgeroutes.net.10xdev.io \"orphan\" is forbidden: ` +
		`User \"gw10-controller\" cannot update resource \"edgeroutes\" in API group \"net.10xdev.io\" in the namespace \"` + ns + `\"`)
	// A status write without the status subresource, or of an object
	// deleted meanwhile: the same words.
	statusNotFound = reconcilerError(`updating status of ` + ns + `/orphan: edgeroutes.net.10xdev.io \"orphan\" not found`)
	invalidStatus  = reconcilerError(`updating status of ` + ns + `/orphan: EdgeRoute.net.10xdev.io \"orphan\" is invalid: ` +
		`status.conditions[0].reason: Invalid value: \"not a reason!\": status.conditions[0].reason in body should match '^[A-Za-z]'`)
	panicked = `2026-12-04T07:06:04Z	ERROR	Observed a panic	{"controller": "edgeroute", "controllerGroup": "net.10xdev.io", ` +
		`"controllerKind": "EdgeRoute", "EdgeRoute": {"name":"orphan","namespace":"` + ns + `"}, "namespace": "` + ns + `", "name": "orphan", ` +
		`"reconcileID": "46277b21-f458-4b61-91dc-9b491fe7e326", "panic": "assignment to entry in nil map", ` +
		`"panicGoValue": "\"assignment to entry in nil map\"", "stacktrace": "goroutine 130 [running]:\nk8s.io/apimachinery/pkg/util/runtime.logPanic()"}`
	// Older controller-runtime versions logged a recovered panic this way.
	panickedOld = `2026-12-04T06:49:29Z	INFO	Observed a panic in reconciler: assignment to entry in nil map	{"controller": "edgeroute", ` +
		`"controllerGroup": "net.10xdev.io", "controllerKind": "EdgeRoute", "EdgeRoute": {"name":"orphan","namespace":"` + ns + `"}, ` +
		`"namespace": "` + ns + `", "name": "orphan", "reconcileID": "6837ee5c-26c0-430f-8bb5-2b760b5bf874"}`
	// A correct controller's errors: a conflict on its status write, a
	// refused push, a forbidden Event it may emit (not a write of its objects).
	conflict = reconcilerError(`updating status of ` + ns + `/orphan: Operation cannot be fulfilled on edgeroutes.net.10xdev.io \"orphan\": ` +
		`the object has been modified; please apply your changes to the latest version and try again`)
	nacked         = reconcilerError(`proxy NACKed the route (HTTP 422): listener port conflicts with the admin port (gw10 check)`)
	forbiddenEvent = `2026-12-04T06:49:29Z	ERROR	events	Server rejected event (will not retry!)	{"error": "events is forbidden: ` +
		`User \"gw10-controller\" cannot create resource \"events\" in API group \"\" in the namespace \"` + ns + `\""}`
)

// edgeRoutes is the primary kind of the controller whose log lines these
// are (step 01's, declared by its descriptor).
var edgeRoutes = Primary{GVK: schema.GroupVersionKind{Group: "net.10xdev.io", Version: "v1", Kind: "EdgeRoute"}, Resource: "edgeroutes"}

// evidenceOf lays lines out one every step after the action.
func evidenceOf(action time.Time, step time.Duration, lines ...string) doomEvidence {
	ev := doomEvidence{timeouts: DefaultTimeouts(), primary: edgeRoutes, since: action, now: action.Add(time.Duration(len(lines)+1) * step)}
	for i, l := range lines {
		ev.lines = append(ev.lines, ctrlproc.Line{At: action.Add(time.Duration(i+1) * step), Text: l})
	}
	return ev
}

func repeat(line string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = line
	}
	return out
}

func TestAWaitEndsOnTheProofThatItCannotSucceed(t *testing.T) {
	action := time.Date(2026, 12, 4, 6, 49, 29, 0, time.UTC)
	cases := []struct {
		name    string
		ev      doomEvidence
		want    []string // in the proof
		blocker bool     // the proof holds for the whole run
	}{
		{"the object written with r.Update where only the status is granted", evidenceOf(action, 10*time.Millisecond, repeat(forbiddenUpdate, 2)...),
			[]string{"refused the controller's write of an EdgeRoute twice", `forbidden to update "edgeroutes" in API group "net.10xdev.io"`, "no status was written"}, true},
		{"a CRD without the status subresource", func() doomEvidence {
			ev := evidenceOf(action, 10*time.Millisecond, repeat(statusNotFound, 3)...)
			ev.noStatusSubresource = true
			return ev
		}(), []string{"3 times", "the CRD has no status subresource, so a write of the status is answered NotFound (404)"}, true},
		{"a status the schema rejects", evidenceOf(action, 10*time.Millisecond, repeat(invalidStatus, 2)...),
			[]string{"invalid by the CRD's schema: status.conditions[0].reason: Invalid value"}, false},
		{"a panic loop", evidenceOf(action, 10*time.Millisecond, repeat(panicked, 3)...),
			[]string{"Reconcile panicked 3 times", "retries): assignment to entry in nil map"}, false},
		{"a panic loop, logged by an older controller-runtime", evidenceOf(action, 10*time.Millisecond, repeat(panickedOld, 3)...),
			[]string{"Reconcile panicked 3 times", "retries): assignment to entry in nil map"}, false},
		{"one refusal, after an earlier check proved the status cannot be written",
			func() doomEvidence {
				ev := evidenceOf(action, 10*time.Millisecond, forbiddenUpdate)
				ev.prior = &Prior{Check: "missing-service", Blocker: Blocker{Kind: refusedStatus, Why: "it is forbidden to update …"}}
				return ev
			}(),
			[]string{"not write its status, as check missing-service found: it is forbidden to update …", "(refused here too)"}, false},
		{"a Reconcile that never returns, on the only worker",
			doomEvidence{timeouts: DefaultTimeouts(), since: action, now: action.Add(6 * time.Second), stuck: 5100 * time.Millisecond, allStuck: true},
			[]string{"Reconcile is stuck: a worker has been busy for 5.1s and no reconcile finished"}, true},
		{"a Reconcile that never returns, while other workers are free",
			doomEvidence{timeouts: DefaultTimeouts(), since: action, now: action.Add(6 * time.Second), stuck: 5100 * time.Millisecond},
			[]string{"Reconcile is stuck"}, false},
		{"every worker still stuck, after an earlier check proved it",
			doomEvidence{timeouts: DefaultTimeouts(), since: action, now: action.Add(2 * time.Second), stuck: 1200 * time.Millisecond, allStuck: true,
				prior: &Prior{Check: "missing-service", Blocker: Blocker{Kind: stuckWorkers, Why: "a worker has been busy for 5.1s"}}},
			[]string{"every worker of the controller is stuck in Reconcile, as check missing-service found", "(still stuck here)"}, false},
		{"a hot loop", func() doomEvidence {
			ev := doomEvidence{timeouts: DefaultTimeouts(), since: action, now: action.Add(3 * time.Second)}
			for i := range 30 {
				ev.events = append(ev.events, evidence.Event{At: action.Add(time.Duration(i) * 100 * time.Millisecond),
					Source: evidence.Controller, Kind: evidence.Reconcile, Count: map[string]int{"success": 4}})
			}
			return ev
		}(), []string{"reconciled 120 times in 3s since the last change and is still at it: a hot loop"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, ok := judge(c.ev)
			if !ok {
				t.Fatalf("no proof found in %d lines, %d events", len(c.ev.lines), len(c.ev.events))
			}
			for _, w := range c.want {
				if !strings.Contains(d.Proof, w) {
					t.Errorf("the proof %q lacks %q", d.Proof, w)
				}
			}
			if got := d.Blocker != nil; got != c.blocker {
				t.Errorf("blocker %+v: holds for the run = %v, want %v", d.Blocker, got, c.blocker)
			}
		})
	}
}

// Evidence that proves nothing yet, or that a correct controller leaves,
// never ends a wait early.
func TestACorrectControllersEvidenceNeverEndsAWait(t *testing.T) {
	action := time.Date(2026, 12, 4, 6, 49, 29, 0, time.UTC)
	status := func(at time.Duration) evidence.Event {
		return evidence.Event{At: action.Add(at), Source: evidence.APIServer, Kind: evidence.Status, Text: "status of orphan: Accepted=False/ServiceNotFound"}
	}
	reconciles := func(n int, over time.Duration) []evidence.Event {
		var out []evidence.Event
		for i := range n {
			out = append(out, evidence.Event{At: action.Add(over * time.Duration(i) / time.Duration(n)), Source: evidence.Controller,
				Kind: evidence.Reconcile, Count: map[string]int{"success": 1}})
		}
		return out
	}
	cases := []struct {
		name string
		ev   doomEvidence
	}{
		{"one refusal is not yet a retry that failed the same way", evidenceOf(action, 10*time.Millisecond, forbiddenUpdate)},
		{"refusals before a status write that succeeded", func() doomEvidence {
			ev := evidenceOf(action, 10*time.Millisecond, repeat(forbiddenUpdate, 2)...)
			ev.events = append(ev.events, status(50*time.Millisecond))
			return ev
		}()},
		{"NotFound on writing the status of a route deleted meanwhile", evidenceOf(action, 10*time.Millisecond, repeat(statusNotFound, 3)...)},
		{"two panics", evidenceOf(action, 10*time.Millisecond, repeat(panicked, 2)...)},
		{"panics before the status was written", func() doomEvidence {
			ev := evidenceOf(action, 10*time.Millisecond, repeat(panicked, 5)...)
			ev.events = append(ev.events, status(time.Second))
			return ev
		}()},
		{"conflicts on the status write, retried", evidenceOf(action, 10*time.Millisecond, repeat(conflict, 10)...)},
		{"a refused push retried with backoff", func() doomEvidence {
			ev := evidenceOf(action, 200*time.Millisecond, repeat(nacked, 15)...)
			ev.events = reconciles(15, 3*time.Second)
			return ev
		}()},
		{"an Event the role does not grant", evidenceOf(action, 10*time.Millisecond, repeat(forbiddenEvent, 5)...)},
		{"a burst of reconciles that has ended", func() doomEvidence {
			ev := doomEvidence{timeouts: DefaultTimeouts(), since: action, now: action.Add(5 * time.Second), events: reconciles(150, 2*time.Second)}
			return ev
		}()},
		{"a burst of reconciles in the first moments after the action", func() doomEvidence {
			ev := doomEvidence{timeouts: DefaultTimeouts(), since: action, now: action.Add(time.Second), events: reconciles(150, time.Second)}
			return ev
		}()},
		{"a restart reconciling every route of a sequence", func() doomEvidence {
			ev := doomEvidence{timeouts: DefaultTimeouts(), since: action, now: action.Add(10 * time.Second), events: reconciles(20, 10*time.Second)}
			return ev
		}()},
		{"a worker busy for a moment", doomEvidence{timeouts: DefaultTimeouts(), since: action, now: action.Add(5 * time.Second), stuck: 4 * time.Second, allStuck: true}},
		{"a worker busy for a moment, after an earlier check found its status writes refused",
			doomEvidence{timeouts: DefaultTimeouts(), since: action, now: action.Add(2 * time.Second), stuck: 1200 * time.Millisecond, allStuck: true,
				prior: &Prior{Check: "missing-service", Blocker: Blocker{Kind: refusedStatus, Why: "it is forbidden to update …"}}}},
		{"refusals before the action", func() doomEvidence {
			ev := evidenceOf(action.Add(-time.Second), 10*time.Millisecond, repeat(forbiddenUpdate, 5)...)
			ev.since = action
			return ev
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if d, ok := judge(c.ev); ok {
				t.Errorf("ended a wait that may still succeed: %s", d.Proof)
			}
		})
	}
}

func TestAfterCutsAtTheEndOfTheJSONString(t *testing.T) {
	got := after(invalidStatus, "is invalid: ")
	if !strings.HasPrefix(got, "status.conditions[0].reason: Invalid value") || strings.Contains(got, `"}`) {
		t.Errorf("after = %q", got)
	}
	if got, want := after("no separator", "x: "), "no separator"; got != want {
		t.Errorf("after = %q, want %q", got, want)
	}
}

// A proof the runner's diagnosis cannot read from the log says what to do;
// a prerequisite passes its hint on to the later checks.
func TestAProofSaysWhatToDo(t *testing.T) {
	action := time.Date(2026, 12, 4, 6, 49, 29, 0, time.UTC)
	ev := evidenceOf(action, 10*time.Millisecond, repeat(statusNotFound, 2)...)
	ev.noStatusSubresource = true
	d, ok := judge(ev)
	if !ok || !strings.Contains(d.Hint, "add +kubebuilder:subresource:status above the EdgeRoute type") || d.Blocker == nil || d.Blocker.Hint != d.Hint {
		t.Fatalf("no status subresource: %+v (blocker %+v)", d, d.Blocker)
	}
	later := evidenceOf(action, 10*time.Millisecond, statusNotFound)
	later.noStatusSubresource = true
	later.prior = &Prior{Check: "missing-service", Blocker: *d.Blocker}
	if p, ok := judge(later); !ok || !p.Prerequisite || p.Hint != d.Hint {
		t.Errorf("the later check's proof %+v does not pass on the hint %q", p, d.Hint)
	}
}

// The refused writes are those of the step's primary kind: another step's
// controller refused a write of an EdgeRoute proves nothing about its own.
func TestARefusedWriteIsOneOfThePrimaryKind(t *testing.T) {
	action := time.Date(2026, 12, 4, 6, 49, 29, 0, time.UTC)
	ev := evidenceOf(action, 10*time.Millisecond, repeat(forbiddenUpdate, 2)...)
	if d, ok := judge(ev); !ok || !strings.Contains(d.Proof, "refused the controller's write of an EdgeRoute twice") {
		t.Fatalf("EdgeRoutes: %+v", d)
	}
	ev.primary = Primary{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, Resource: "widgets"}
	if d, ok := judge(ev); ok {
		t.Errorf("a step whose primary kind is Widget read an EdgeRoute's refused write as its own: %+v", d)
	}
	why, _, ok := refusedWrite(ev.primary, `widgets.example.com \"w\" not found`, true)
	if !ok || !strings.Contains(why, "although the Widget exists") || !strings.Contains(refusalHint(ev.primary, why), "above the Widget type") {
		t.Errorf("a Widget without a status subresource: %q, %q", why, refusalHint(ev.primary, why))
	}
}

// TestTheProofsThatNeedTimeReadTheStepsTimeouts: StuckFor and HotLoopWait
// are the run's timeouts, not constants of the proofs.
func TestTheProofsThatNeedTimeReadTheStepsTimeouts(t *testing.T) {
	action := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	ev := doomEvidence{timeouts: DefaultTimeouts(), since: action, now: action.Add(6 * time.Second), stuck: 5100 * time.Millisecond}
	if _, ok := judge(ev); !ok {
		t.Fatalf("a worker busy for 5.1 s is stuck by default")
	}
	ev.timeouts.StuckFor = 10 * time.Second
	if d, ok := judge(ev); ok {
		t.Errorf("with StuckFor 10 s, 5.1 s busy is no proof: %+v", d)
	}
	hot := doomEvidence{timeouts: DefaultTimeouts(), since: action, now: action.Add(3 * time.Second)}
	for i := range 30 {
		hot.events = append(hot.events, evidence.Event{At: action.Add(time.Duration(i) * 100 * time.Millisecond),
			Source: evidence.Controller, Kind: evidence.Reconcile, Count: map[string]int{"success": 4}})
	}
	if _, ok := judge(hot); !ok {
		t.Fatalf("120 reconciles in 3 s, still going, are a hot loop by default")
	}
	hot.timeouts.HotLoopWait = 10 * time.Second
	if d, ok := judge(hot); ok {
		t.Errorf("with HotLoopWait 10 s, 3 s after the action is too soon: %+v", d)
	}
}
