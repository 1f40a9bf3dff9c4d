package step01

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/10xdev/gw10/harness/apifront"
	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/evidence"
)

// statusWritesCheck proves ST-ONE-WRITE and ST-NO-CHURN on the running
// controller, from the API front's side (apifront): every status write the
// controller sends passes through it, the refused ones and those that
// change nothing included, which the API server's watch never shows. After
// each of its actions, once the status reflects it and the controller is
// idle, exactly one successful status write of the route must have
// answered it. Then the front refuses a status write (409, then 500): the
// write's error must make the queue try again, with no event to cause it.
var statusWritesCheck = checks.Check{
	ID:      "status-writes",
	Title:   "each change is answered by exactly one status write, none rewrites an unchanged status, and a refused status write is tried again",
	SeedRef: "Acceptance 1: status conditions stay accurate (the card's defect 3: two status writes, errors dropped)",
	Points:  10,
	Clauses: []string{ClauseOneWrite, ClauseNoChurn},
	Hint:    "every change of a route must be answered by one status write, a whole one, none when nothing changed, and a refused status write must be tried again (ST-ONE-WRITE, ST-NO-CHURN)",
	Direction: `Count the status writes one pass of your code makes, and ask when a write is needed at
all. Then follow a status write the API server refuses: if nothing looks at its error,
what tries it again?`,
	LongHint: `Every status write is a request to the API server, and the harness sees each one: the
controller's kubeconfig names a front that passes its requests on and records them,
refused ones included. This check makes five changes to one EdgeRoute (created with
its Service missing, the Service created, a spec edit the proxy refuses, the proxy
accepting again, another spec edit), and after each, once the status shows it and the
controller is idle, counts the status writes that answered it: exactly one must have
succeeded. Two (Accepted, then Programmed) show readers a half-written status in
between; a write that carries the status already stored changes nothing and costs a
request (the watch never shows it, the front does). Set every condition in memory,
compare with what you read, write once only when it changed. Then the front refuses
the next status write, once with 409 Conflict and once with 500: Reconcile must return
that error (a conflict may be answered with a requeue), so the queue tries again and the
status lands; a write whose error is dropped is never tried again, for nothing else
wakes the route.`,
	Run: func(ctx context.Context, t *checks.T) {
		if t.API == nil {
			t.Fatalf("the harness gave check %s no API front to count the status writes at (a harness bug, please report it)", t.Name())
		}
		const svc = "writes-svc"
		w := &statusWrites{t: t}

		w.action()
		r := t.NewRoute(ctx, "writes", svc, 8080)
		w.oneWrite(ctx, r, "creating the EdgeRoute with its Service missing", serviceNotFound, programmedNotTrue)

		w.action()
		createService(ctx, t, svc)
		w.oneWrite(ctx, r, "creating its Service (the proxy ACKs)", acceptedTrue, programmedTrue)

		w.action()
		t.Did(evidence.ProxyChanged, r.Object(), "telling the proxy to refuse %s", r.Name)
		t.Proxy.SetNACK(r.Key(), nackReason)
		r.Edit(ctx, "spec.port 8080 -> 8081, which the proxy refuses", func(spec map[string]any) { spec["port"] = int64(8081) })
		w.oneWrite(ctx, r, "a spec edit the proxy NACKs", acceptedTrue,
			checks.Want{Type: programmed, Status: "False", Reason: "PushFailed", Message: nackReason})

		w.action()
		t.Did(evidence.ProxyChanged, r.Object(), "telling the proxy to accept %s again", r.Name)
		t.Proxy.SetNACK(r.Key(), "")
		w.oneWrite(ctx, r, "the proxy ACKing the retried push", acceptedTrue, programmedTrue)

		w.action()
		r.Edit(ctx, "spec.port 8081 -> 8082", func(spec map[string]any) { spec["port"] = int64(8082) })
		w.oneWrite(ctx, r, "a spec edit (the proxy ACKs)", acceptedTrue, programmedTrue)

		w.refused(ctx, r, http.StatusConflict, "deleting its Service", func() { deleteService(ctx, t, svc) },
			serviceNotFound, programmedNotTrue)
		w.refused(ctx, r, http.StatusInternalServerError, "creating its Service again", func() { createService(ctx, t, svc) },
			acceptedTrue, programmedTrue)
	},
}

// statusWrites reads one check's status writes at the API front.
type statusWrites struct {
	t *checks.T
	// since is when the current action began: the writes after it answer it.
	since time.Time
}

// action marks the start of an action: the writes from here on answer it.
func (w *statusWrites) action() { w.since = time.Now() }

// writes are the status writes of r that arrived since the current action.
func (w *statusWrites) writes(r *checks.Route) []apifront.Request {
	var out []apifront.Request
	for _, q := range w.t.API.StatusWrites(r.Namespace(), r.Name) {
		if !q.At.Before(w.since) {
			out = append(out, q)
		}
	}
	return out
}

// stored is the status the API server held for r before the current
// action, as the front saw it come back from the last successful write
// (nothing but the controller writes this route's status in this check).
func (w *statusWrites) stored(r *checks.Route) (conds []metav1.Condition, rv string) {
	for _, q := range w.t.API.StatusWrites(r.Namespace(), r.Name) {
		if q.At.Before(w.since) && q.Succeeded() {
			conds, rv = q.Conditions, q.ResourceVersion
		}
	}
	return conds, rv
}

// oneWrite waits for r's status to show what, then for the controller to
// be idle, and fails the check unless exactly one successful status write
// answered the action, one that changed the stored status.
func (w *statusWrites) oneWrite(ctx context.Context, r *checks.Route, what string, wants ...checks.Want) {
	t := w.t
	prev, prevRV := w.stored(r)
	r.Eventually(ctx, t.Timeouts.Converge, wants...)
	t.WaitIdle(ctx)
	w.judge(r, what, prev, prevRV, w.writes(r))
}

// judge reads the writes that answered one action: those that succeeded
// must be exactly one, and it must change the status stored before it.
func (w *statusWrites) judge(r *checks.Route, what string, prev []metav1.Condition, prevRV string, writes []apifront.Request) {
	t := w.t
	var ok []apifront.Request
	for _, q := range writes {
		if q.Succeeded() {
			ok = append(ok, q)
		}
	}
	var noop []string
	changed := 0
	for _, q := range ok {
		if sameConditions(q.Conditions, prev) || (prevRV != "" && q.ResourceVersion == prevRV) {
			noop = append(noop, describeWrite(q))
		} else {
			changed++
		}
		prev, prevRV = q.Conditions, q.ResourceVersion
	}
	switch {
	case changed > 1:
		t.Cause("%s broken: %d status writes answered one change", ClauseOneWrite, len(ok))
		t.Fatalf("after %s, %d status writes of %s succeeded where one was expected (%s: one whole status per change): "+
			"between them readers saw a status that was neither the old one nor the new one:\n  - %s",
			what, len(ok), r, ClauseOneWrite, strings.Join(describeWrites(ok), "\n  - "))
	case len(noop) > 0:
		t.Cause("%s broken: a status write that carried the status already stored", ClauseNoChurn)
		t.Fatalf("after %s, %s wrote a status identical to the one the API server held (%s: no status write when nothing changed); "+
			"the watch never shows such a write, the API front saw it:\n  - %s\nall the status writes that answered it:\n  - %s",
			what, r, ClauseNoChurn, strings.Join(noop, "\n  - "), strings.Join(describeWrites(writes), "\n  - "))
	case len(ok) == 0:
		t.Fatalf("after %s, the status of %s changed but the API front saw no status write succeed (the controller's requests all pass "+
			"through it; a harness bug, please report it):\n  - %s", what, r, strings.Join(describeWrites(writes), "\n  - "))
	}
	t.Logf("after %s: one status write of EdgeRoute %s (%s)", what, r.Name, describeWrite(ok[0]))
}

// refused makes the front refuse the next status write of r with code,
// does the action, and fails the check unless a further attempt came
// (no event causes it: the queue's retry of the error) and the status
// landed, one write having succeeded.
func (w *statusWrites) refused(ctx context.Context, r *checks.Route, code int, what string, act func(), wants ...checks.Want) {
	t := w.t
	w.action()
	prev, prevRV := w.stored(r)
	answer := fmt.Sprintf("%d %s", code, http.StatusText(code))
	t.Logf("the API front refuses the next status write of EdgeRoute %s with %s", r.Name, answer)
	remove := t.API.Inject(apifront.Fault{Verbs: []string{"update", "patch"}, Resource: t.Primary.Resource, Subresource: "status",
		Namespace: r.Namespace(), Name: r.Name, Code: code, Times: 1})
	defer remove()
	act()
	what += fmt.Sprintf(" with the API front refusing its first status write (%s)", answer)
	err := r.Converges(ctx, t.Timeouts.Converge, wants...)
	writes := w.writes(r)
	first := slices.IndexFunc(writes, func(q apifront.Request) bool { return q.Injected })
	if err != nil {
		if first < 0 {
			t.Fatalf("%s", err)
		}
		q := writes[first]
		t.Cause("%s broken: the status write failed with %s, and no retry came", ClauseOneWrite, answer)
		t.Fatalf("after %s: the write failed with %s at %s, and the controller never tried again "+
			"(%s: a failed write's error is returned, so the queue retries; nothing else wakes the route, "+
			"its object did not change). Its status writes since:\n  - %s\n%s",
			what, answer, q.At.Format("15:04:05.000"), ClauseOneWrite,
			strings.Join(describeWrites(writes), "\n  - "), err)
	}
	t.WaitIdle(ctx)
	writes = w.writes(r)
	if first = slices.IndexFunc(writes, func(q apifront.Request) bool { return q.Injected }); first < 0 {
		t.Fatalf("after %s, the status of %s changed with no status write refused by the API front (a harness bug, please report it):\n  - %s",
			what, r, strings.Join(describeWrites(writes), "\n  - "))
	}
	w.judge(r, what, prev, prevRV, writes[first+1:])
}

func sameConditions(a, b []metav1.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			x.ObservedGeneration != y.ObservedGeneration || !x.LastTransitionTime.Equal(&y.LastTransitionTime) {
			return false
		}
	}
	return true
}

func describeWrites(writes []apifront.Request) []string {
	out := make([]string, len(writes))
	for i, q := range writes {
		out[i] = describeWrite(q)
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// describeWrite is one status write: when, how, what it carried, the answer.
func describeWrite(q apifront.Request) string {
	var cs []string
	for _, c := range q.Conditions {
		cs = append(cs, fmt.Sprintf("%s=%s/%s (generation %d)", c.Type, c.Status, c.Reason, c.ObservedGeneration))
	}
	carried := "no conditions"
	if len(cs) > 0 {
		carried = strings.Join(cs, ", ")
	}
	how := map[string]string{"update": "an update", "patch": "a patch"}[q.Verb]
	return fmt.Sprintf("%s %s of the status carrying %s: %s", q.At.Format("15:04:05.000"), how, carried, q.Answer())
}
