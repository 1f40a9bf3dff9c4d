package step01

import (
	"context"
	"fmt"
	"github.com/10xdev/gw10/harness/words"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/proxy"
)

// Condition vocabulary of the status contract (docs/contract.md).
const (
	accepted   = "Accepted"
	programmed = "Programmed"
	crdName    = "edgeroutes.net.10xdev.io"
)

var (
	acceptedTrue      = checks.Want{Type: accepted, Status: "True", Reason: "Valid"}
	programmedTrue    = checks.Want{Type: programmed, Status: "True", Reason: "Synced"}
	serviceNotFound   = checks.Want{Type: accepted, Status: "False", Reason: "ServiceNotFound"}
	programmedNotTrue = checks.Want{Type: programmed, NotTrue: true}
	// programmedFalse: said False, with any reason; not gone (S-MISSING
	// asks for False, and an absent condition is Unknown).
	programmedFalse = checks.Want{Type: programmed, Status: "False"}
	samplePath      = filepath.Join("config", "samples", "net_v1_edgeroute.yaml")
)

var crdSchemaCheck = checks.Check{
	ID:      "crd-schema",
	Title:   "the CRD is the card's: status subresource, condition columns, and a schema that rejects invalid specs naming the field",
	SeedRef: "Acceptance 1: a working CRD",
	Points:  10,
	Clauses: []string{ClauseSchema},
	Hint:    "keep +kubebuilder:subresource:status and the printcolumn markers, and add validation markers (+kubebuilder:validation:...) to the EdgeRouteSpec fields",
	Direction: `Everything this check asks for is a kubebuilder marker on the types in
api/v1/edgeroute_types.go: controller-gen turns the markers into the CRD's schema, its
printed columns and its subresources. After make check, read the CRD it generated
(config/crd/bases/) beside the rules each field must carry, which the TODO in that file
lists. go tool controller-gen crd -ww, run in step01/, lists every marker it knows and
what each does, with no network. The API server's own patterns for such names are
constants of k8s.io/apimachinery: go doc -u k8s.io/apimachinery/pkg/util/validation.dns1123LabelFmt
and go doc -u k8s.io/apimachinery/pkg/util/validation.dns1035LabelFmt, run in step01/.
Those patterns bound no length: a label's 63 characters are a rule of their own.`,
	LongHint: `The card's CRD has a status subresource (+kubebuilder:subresource:status): a write
of the object ignores its status and a write of /status ignores the rest, so spec and
status have separate writers, and RBAC on edgeroutes/status decides who may write status
(the controller's role grants it; kubectl patch --subresource=status works for anyone
else it is granted to). kubectl get er shows the Accepted and Programmed conditions as
columns (+kubebuilder:printcolumn markers with
JSONPath .status.conditions[?(@.type=="Accepted")].status). The API server validates
EdgeRoutes against the OpenAPI schema that controller-gen writes from the markers on
EdgeRouteSpec: every field is required; hostname must be an RFC 1123 DNS subdomain
(lowercase labels of at most 63 characters, no trailing dot, at most 253 in all),
prefix must start with "/" (at most 1024), service must be a DNS-1035 label (a
lowercase letter first, at most 63) and port must lie in 1..65535. Markers such as
+kubebuilder:validation:Minimum, Maximum, Pattern, MinLength and MaxLength express
that. Run make manifests in the step and read config/crd/bases/ to see the schema you
produced.`,
	Run: func(ctx context.Context, t *checks.T) {
		var problems []string
		problems = append(problems, crdShapeProblems(ctx, t)...)
		data, err := os.ReadFile(filepath.Join(t.StepDir, samplePath))
		t.Must(err, "reading the sample %s", samplePath)
		sample := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &sample.Object); err != nil {
			t.Fatalf("the sample %s is not valid YAML: %v", samplePath, err)
		}
		sample.SetNamespace(t.Namespace)
		if err := t.Client.Create(ctx, sample.DeepCopy(), client.DryRunAll); err != nil {
			problems = append(problems, fmt.Sprintf("the sample %s was rejected: %v", samplePath, err))
		}
		rows, err := invalidSpecs()
		t.Must(err, "loading the invalid specs")
		for _, row := range rows {
			obj := sample.DeepCopy()
			obj.SetName("invalid")
			row.apply(obj.Object)
			err := t.Client.Create(ctx, obj, client.DryRunAll)
			switch {
			case err == nil:
				problems = append(problems, fmt.Sprintf("%s: accepted, expected rejected naming %s", row.Name, row.Field))
			case !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err):
				problems = append(problems, fmt.Sprintf("%s: rejected with an unexpected error: %v", row.Name, err))
			case !strings.Contains(err.Error(), row.Field):
				problems = append(problems, fmt.Sprintf("%s: rejected, but the message does not name %s: %v", row.Name, row.Field, err))
			}
		}
		for _, row := range validEdgeSpecs() {
			obj := sample.DeepCopy()
			obj.SetName("edge")
			row.apply(obj.Object)
			if err := t.Client.Create(ctx, obj, client.DryRunAll); err != nil {
				problems = append(problems, fmt.Sprintf("%s: rejected, expected accepted (the card's rules allow it; a rule of yours is tighter): %v", row.Name, err))
			}
		}
		if len(problems) > 0 {
			t.Fatalf("the CRD must be the card's, invalid EdgeRoutes must be rejected by the schema with a message naming the field, and valid ones accepted:\n  - %s",
				strings.Join(problems, "\n  - "))
		}
	},
}

// crdShapeProblems checks the installed CRD for the status subresource and
// the condition columns.
func crdShapeProblems(ctx context.Context, t *checks.T) []string {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	t.Must(t.Client.Get(ctx, client.ObjectKey{Name: crdName}, crd), "reading CRD %s", crdName)
	var problems []string
	for _, v := range crd.Spec.Versions {
		if v.Name != "v1" {
			continue
		}
		if v.Subresources == nil || v.Subresources.Status == nil {
			problems = append(problems, "the CRD has no status subresource: add +kubebuilder:subresource:status to the EdgeRoute type "+
				"(without it, status is part of the object and Status().Update() finds no such resource)")
		}
		for _, typ := range []string{accepted, programmed} {
			if p := conditionColumnProblem(v.AdditionalPrinterColumns, typ); p != "" {
				problems = append(problems, p)
			}
		}
		return problems
	}
	return []string{"the CRD has no version v1"}
}

// conditionColumnProblem says what is wrong with the printer column named
// typ ("" when nothing is): there is none, or it shows something other than
// the status of the condition of that type.
func conditionColumnProblem(cols []apiextensionsv1.CustomResourceColumnDefinition, typ string) string {
	want := fmt.Sprintf(".status.conditions[?(@.type==%q)].status", typ)
	for _, c := range cols {
		if !strings.EqualFold(c.Name, typ) {
			continue
		}
		path := strings.ReplaceAll(strings.ReplaceAll(c.JSONPath, " ", ""), "'", `"`)
		switch {
		case path != want:
			return fmt.Sprintf("kubectl get's %s column shows %s, not the %s condition's status: its JSONPath must be `%s`", c.Name, c.JSONPath, typ, want)
		case c.Type != "string":
			// The API server fills a column of another type only from a
			// JSON value of that type; a condition's status is a string.
			return fmt.Sprintf("kubectl get's %s column has type=%s, and a condition's status is the string \"True\" or \"False\": the column stays empty (type=string)", c.Name, c.Type)
		case c.Priority != 0:
			return fmt.Sprintf("kubectl get shows the %s column only with -o wide: it has priority=%d (0, the default, shows it always)", c.Name, c.Priority)
		}
		return ""
	}
	return fmt.Sprintf("kubectl get shows no %s column: add +kubebuilder:printcolumn:name=%q,type=string,JSONPath=`%s`", typ, typ, want)
}

var missingServiceCheck = checks.Check{
	ID:      "missing-service",
	Title:   "an EdgeRoute to a missing Service is Accepted=False/ServiceNotFound, not programmed, and costs nothing while it waits",
	SeedRef: "Task 2: apply an EdgeRoute pointing at a missing Service",
	Points:  10,
	Clauses: []string{ClauseMissing, ClauseObsGen, ClauseSubres, ClauseNoPoll, ClauseRBAC},
	Hint:    "an EdgeRoute whose Service is missing must read Accepted=False/ServiceNotFound, never be Programmed, stay out of the proxy, and cost no reconcile while it waits",
	Direction: `A Service that does not exist is an answer, not an error. The status contract's first
row says what the route's conditions and the proxy must say then. Then ask what should
make this route's Reconcile run again, and what every other way of getting there costs
while it waits (q-requeue-missing).`,
	LongHint: `Reconcile must look at the world, not only at the EdgeRoute: read the Service named in
spec.service in the EdgeRoute's namespace. NotFound is an answer, not an error: the route
is not accepted (Accepted=False, reason ServiceNotFound), it must not be Programmed, and
the data plane must not hold it. Every condition carries observedGeneration, the
metadata.generation it describes. Then return ctrl.Result{}, nil: the route waits for
its Service at no cost, and the Service watch wakes it when the Service appears.
Requeue: true (or an error, or any RequeueAfter) here is polling: it works, slowly, and
costs a pass per route per tick forever. The check watches a quiet window once the route
was reported, while nothing changes: a reconcile, a push or withdraw, a status write or
the controller's threads waking on a timer fails it; the harness reads the proxy, the API
server and the kernel's counts of the process, not the controller's own /metrics. If
the controller's log says "forbidden", the ClusterRole generated from your RBAC markers
lacks Services.`,
	Run: func(ctx context.Context, t *checks.T) {
		r := t.NewRoute(ctx, "orphan", "no-such-service", 8080)
		r.Eventually(ctx, t.Timeouts.Converge, serviceNotFound, programmedNotTrue)
		t.Stays(ctx, t.Timeouts.Absent, "the proxy must hold no route for "+r.String(), func() error {
			if got, ok := t.Proxy.Route(r.Key()); ok {
				return fmt.Errorf("the proxy holds %+v for %s, whose Service does not exist", got, r)
			}
			return nil
		})
		noPolling(ctx, t, []*checks.Route{r}, "its Service to appear", t.Timeouts.Quiet)
	},
}

// noPolling fails the check when the controller keeps working while the
// waiting routes wait for something only a watch can bring. The window
// starts once the controller went idle (the echo of the routes' own status
// writes has come and gone); in it, any work seen from outside the process
// (a push or withdraw at the proxy, a write at the API server, the kernel's
// count of its wakeups) fails, and so does any reconcile its /metrics
// count, whatever it asked for: a requeue that the window never sees fire
// (a periodic resync after ten minutes) costs nothing, a timer that fires
// while the route waits is polling (Q-NO-POLL). A count of 0 in its
// /metrics never outweighs the outside evidence.
func noPolling(ctx context.Context, t *checks.T, waiting []*checks.Route, waitingFor string, window time.Duration) {
	t.WaitIdle(ctx)
	w := t.WatchQuietConfirmed(ctx, window, checks.Keys(waiting...))
	busy, admitted := w.Busy(), w.Admitted()
	if w.WorkErr != nil {
		t.Logf("the controller's work in the window could not be read: %v", w.WorkErr)
	}
	if len(busy) == 0 && admitted == "" {
		if w.MetricsErr != nil {
			t.Fatalf("no verdict on polling while %s waited: %v", waitingFor, w.MetricsErr)
		}
		if w.WorkErr == nil {
			t.Logf("while %s waited for %s (%s), %s",
				routeNames(waiting), waitingFor, w.Length().Round(10*time.Millisecond), w.IdleFigures())
		}
		return
	}
	who := routeNames(waiting)
	var observed []string
	if admitted != "" {
		cause, obs := pollingWords(who, waitingFor, w.Reconciles, w.Length(), w.ByResult)
		t.Cause("%s", cause)
		observed = append(observed, obs)
	}
	for _, b := range busy {
		t.Cause("while %s waited for %s, %s: that is polling", who, waitingFor, b)
		observed = append(observed, b)
	}
	if len(busy) > 0 {
		if d := w.Denied(); d != "" {
			observed = append(observed, d)
		}
	}
	t.Fatalf("%s waits for %s: the controller must do nothing until something it depends on changes.\n"+
		"  expected: nothing done once the route was reported, until an event wakes it: no reconcile, no push or withdraw, no write, no work on a timer\n"+
		"  observed: %s\n"+
		"  clause:   %s (make hint ID=%s)",
		who, waitingFor, strings.Join(observed, ";\n            "), ClauseNoPoll, ClauseNoPoll)
}

// routeNames reads "EdgeRoute ns/a and EdgeRoute ns/b".
func routeNames(routes []*checks.Route) string {
	names := make([]string, len(routes))
	for i, r := range routes {
		names[i] = r.String()
	}
	return strings.Join(names, " and ")
}

// pollingWords says what noPolling measured: the reconciles of the quiet
// window just watched (named as such), their rate and their results.
func pollingWords(who, waitingFor string, polls int, window time.Duration, byResult map[string]int) (cause, observed string) {
	rate := float64(polls) / window.Seconds()
	window = window.Round(10 * time.Millisecond)
	cause = fmt.Sprintf("Reconcile ran %s in the last %s (%.1f per second: %s) while %s waited for %s, with nothing changing: that is polling",
		checks.Times(polls), window, rate, checks.ResultList(byResult), who, waitingFor)
	if checks.Retries(byResult) == 0 {
		// No pass asked to run again: the wake came from outside Reconcile.
		cause += "; no pass asked to run again (no error, no requeue), so something else put the key in the queue: " +
			"a source of your own (a look at the data plane that enqueues waiting routes), or a watch on something that changes"
	}
	observed = fmt.Sprintf("%s in the last %s, counted once the controller had gone idle (%s)",
		words.Count(polls, "reconcile", "reconciles"), window, checks.ResultList(byResult))
	return cause, observed
}

// selfHealACKDelay holds the proxy's ACK so that a status written before the
// push (instead of after its ACK) shows up as earlier than the ACK.
const selfHealACKDelay = 300 * time.Millisecond

var selfHealCheck = checks.Check{
	ID:      "self-heal",
	Title:   "creating the Service flips the route to Accepted=True/Programmed=True with no change to it",
	SeedRef: "Acceptance 2: fixing the underlying Service flips status with no change to the CR",
	Points:  15,
	Clauses: []string{ClauseAcked, ClauseFanout},
	Hint:    "creating a Service must flip, within 5 s and with no change to them, every EdgeRoute of its namespace that names it, and no other; waiting must cost nothing",
	Direction: `The Service's arrival must put the right EdgeRoute keys in the work queue. Read the
handlers controller-runtime offers (go doc sigs.k8s.io/controller-runtime/pkg/handler)
and ask which can compute an EdgeRoute's key from a Service that has no ownerReference;
then how to find those EdgeRoutes without reading them all (q-find-routes; go doc
sigs.k8s.io/controller-runtime/pkg/cache/cacheapi lists what the cache offers besides a
read by name, go doc sigs.k8s.io/controller-runtime/pkg/cluster.Cluster what the
manager, which is one, hands your code, and the Indexing section of go doc
sigs.k8s.io/controller-runtime/pkg/client how a List then reads by it, with the
ListOption MatchingFields).`,
	LongHint: `Creating the Service changes nothing in the EdgeRoute, so an EdgeRoute watch alone never
reconciles it again. Owns(&corev1.Service{}) only sees Services whose ownerReference
points at an EdgeRoute, and the user's Service has none. Watch Services with
Watches(...) and a map function that finds the EdgeRoutes in the Service's namespace
whose spec.service names it: a field index on spec.service makes that a cache lookup.
Requeueing while the Service is missing gets there too, late and at a price: the check
fails Requeue: true and a RequeueAfter that fires while the routes wait. A second route
names the same Service, and a route in another namespace a Service of the same name: the
Service's creation must reach both of the first (a map function returns every route that
names it) and change nothing for the third.
Report Programmed=True only after the proxy ACKed the push. Skipping Reconcile because
observedGeneration equals generation would also break this: the world changed, the
EdgeRoute did not.`,
	Run: func(ctx context.Context, t *checks.T) {
		r := t.NewRoute(ctx, "heal", "heal-svc", 8080)
		// Q-FANOUT: a second route names the same Service, and a route in
		// another namespace names a Service of the same name there, which
		// does not exist: the Service's creation must reach both of the
		// first, and change nothing for the third.
		r2 := t.NewRoute(ctx, "heal-b", "heal-svc", 8081)
		other := t.NewRouteIn(ctx, t.Neighbour(ctx), "heal", checks.RouteSpec{Hostname: "heal.other.example.com", Prefix: "/", Service: "heal-svc", Port: 8080})
		for _, x := range []*checks.Route{r, r2, other} {
			x.Eventually(ctx, t.Timeouts.Converge, serviceNotFound, programmedNotTrue)
		}
		noPolling(ctx, t, []*checks.Route{r, r2, other}, "their Service to appear", t.Timeouts.Absent)
		gen, spec := r.GenerationAndSpec(ctx)

		t.Proxy.SetACKDelay(selfHealACKDelay)
		defer t.Proxy.SetACKDelay(0)
		createService(ctx, t, r.Service)
		reachesAll(ctx, t, t.Timeouts.SelfHeal, r.Service, []*checks.Route{r, r2}, acceptedTrue, programmedTrue)
		elsewhere(ctx, t, other, serviceNotFound, programmedNotTrue)
		if got, held := t.Proxy.Route(other.Key()); held {
			t.Fatalf("the proxy holds %+v for %s, whose Service does not exist in its namespace: creating Service heal-svc of namespace %s "+
				"must change nothing for the routes of another namespace", got, other, t.Namespace)
		}

		gen2, spec2 := r.GenerationAndSpec(ctx)
		if gen2 != gen || !equality.Semantic.DeepEqual(spec, spec2) {
			t.Fatalf("%s: its spec changed (generation %d -> %d): self-healing must need no change to the EdgeRoute", r, gen, gen2)
		}
		var ack time.Time
		for _, ev := range t.Proxy.Events(r.Key()) {
			if ev.ACKed() {
				ack = ev.Answered
				break
			}
		}
		if ack.IsZero() {
			t.Fatalf("%s is Programmed=True but the proxy never ACKed a push for it", r)
		}
		// The watch may deliver the version a moment after the GET saw it.
		var seen time.Time
		t.WaitFor(ctx, t.Timeouts.Converge, "the watch to deliver "+r.String()+" Programmed=True", func() error {
			var ok bool
			if seen, _, ok = r.FirstTrue(programmed); !ok {
				return fmt.Errorf("no Programmed=True version of %s has arrived on the watch yet", r)
			}
			return nil
		})
		if seen.Before(ack) {
			t.Fatalf("%s: Programmed=True was written %s before the proxy ACKed the push: status must follow the ACK",
				r, ack.Sub(seen).Round(time.Millisecond))
		}
	},
}

// reachesAll waits until every route that names service has the wanted
// conditions after the check's last change of that Service (Q-FANOUT). When
// one does not, the cause says which routes the change reached (a push, a
// withdraw or a status write of theirs since) and which it never did.
func reachesAll(ctx context.Context, t *checks.T, within time.Duration, service string, routes []*checks.Route, wants ...checks.Want) {
	for _, r := range routes {
		err := t.Converges(ctx, within, r.String(), func() error { return r.HasConditions(ctx, wants...) })
		if err == nil {
			continue
		}
		fanoutCause(t, service, routes)
		t.Fatalf("%s", err)
	}
}

// fanoutCause names the routes a Service change reached and those it did not.
func fanoutCause(t *checks.T, service string, routes []*checks.Route) {
	action, ok := t.Record.LastAction(time.Now())
	if !ok {
		return
	}
	events := t.Evidence()
	var reached, missed []string
	for _, r := range routes {
		tl := evidence.TallyAfter(events, action.At, r.Object())
		if tl.Pushes+tl.Withdraws+tl.StatusWrites > 0 {
			reached = append(reached, r.Name)
		} else {
			missed = append(missed, r.Name)
		}
	}
	if len(reached) == 0 || len(missed) == 0 {
		return // nothing reached any (the cause of the wait says so), or all were reached
	}
	t.Cause("after %s the controller acted on EdgeRoute %s but never on %s, which name Service %s too: "+
		"a Service event must reach every EdgeRoute in its namespace that names it (%s), not one of them",
		action.Text, strings.Join(reached, ", "), strings.Join(missed, ", "), service, ClauseFanout)
}

// elsewhere checks, once the controller is idle, that a route of another
// namespace is as it was: a Service of the same name in the check's
// namespace is not its Service.
func elsewhere(ctx context.Context, t *checks.T, r *checks.Route, wants ...checks.Want) {
	t.WaitIdle(ctx)
	if err := r.HasConditions(ctx, wants...); err != nil {
		t.Fatalf("a Service of namespace %s changed the status of a route in another namespace that names a Service of the same name:\n%s\n"+
			"  expected: a route's Service is the one of its own namespace; a Service of another namespace changes nothing for it (%s)",
			t.Namespace, err, ClauseFanout)
	}
}

var serviceRemovedCheck = checks.Check{
	ID:      "service-removed",
	Title:   "deleting the Service turns the route back to ServiceNotFound, not Programmed, and withdraws it",
	SeedRef: "Acceptance 1: status conditions stay accurate",
	Points:  10,
	Clauses: []string{ClauseMissing, ClauseFanout},
	Hint:    "once its Service is deleted, a route must be withdrawn and read Accepted=False/ServiceNotFound with Programmed not True",
	Direction: `A pass after the Service's deletion must decide both conditions and what the proxy holds
from the world again, never keep what an earlier pass decided. Then follow a withdraw
the proxy refuses: after it, what brings the key back into the queue, when no event will
come?`,
	LongHint: `Level-triggered means the status is derived from the world on every pass. When the
Service disappears, the Service watch must trigger a reconcile (if nothing follows the
deletion, the watch is missing: see self-heal). That pass sets Accepted=False
(ServiceNotFound), and Programmed must not stay True from an earlier pass: withdraw the
route from the data plane (Remove is idempotent) and set Programmed=False. A busy proxy
refuses the first withdraws of one route (503), and leaves the first two withdraws of
another unanswered until your controller gives up on each: either way the route is still
served, so the pass that wrote the status must still return the withdraw's error, for
the queue to retry it with backoff; no event will come to try it again.`,
	Run: func(ctx context.Context, t *checks.T) {
		createService(ctx, t, "gone-svc")
		r := t.NewRoute(ctx, "gone", "gone-svc", 8080)
		// Q-FANOUT: a second route on the Service, and a route on a
		// same-named Service in another namespace, which stays.
		r2 := t.NewRoute(ctx, "gone-b", "gone-svc", 8081)
		ns := t.Neighbour(ctx)
		createServiceIn(ctx, t, ns, "gone-svc")
		other := t.NewRouteIn(ctx, ns, "gone", checks.RouteSpec{Hostname: "gone.other.example.com", Prefix: "/", Service: "gone-svc", Port: 8080})
		for _, x := range []*checks.Route{r, r2, other} {
			x.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)
		}
		t.ProxyHolds(ctx, t.Timeouts.Converge, r.Name, r2.Name)

		// A busy proxy refuses the first reads and withdraws of one of the routes:
		// the route is still served until a withdraw is answered.
		t.Did(evidence.ProxyChanged, r2.Object(), "the proxy will refuse the next %d reads or withdraws of %s (503 %s)", busyWithdraws, r2, busyReason)
		t.Proxy.RefuseWithdraws(r2.Key(), busyWithdraws, busyReason)
		defer t.Proxy.RefuseWithdraws(r2.Key(), 0, "")
		// A proxy that does not answer: the first withdraws of the other
		// route stay in flight, unanswered and unapplied, until the
		// controller gives up on each (its timeout): more than the passes
		// the Service's deletion and a status write wake. A withdraw with
		// no answer withdrew nothing.
		t.Did(evidence.ProxyChanged, r.Object(), "the proxy will keep the next %d withdraws of %s in flight, unanswered and never applied, each until the controller gives up on it", unansweredWithdraws, r)
		t.Proxy.HoldWithdraws(r.Key(), unansweredWithdraws)
		defer t.Proxy.ReleaseWithdraw(r.Key())
		deleteService(ctx, t, r.Service)
		awaitGiveUp(ctx, t, r, unansweredWithdraws)
		reachesAll(ctx, t, t.Timeouts.Converge, r.Service, []*checks.Route{r, r2}, serviceNotFound, programmedFalse)
		t.WaitFor(ctx, t.Timeouts.Converge, "the withdraw of "+r2.Name+" that the proxy refused at first", func() error {
			return withdrawnAfterRefusals(t, r2, ClauseMissing)
		})
		t.WaitFor(ctx, t.Timeouts.Converge, "the withdraw of "+r.Name+" after the one the controller gave up on", func() error {
			return withdrawnAfterRefusals(t, r, ClauseMissing)
		})
		t.ProxyHolds(ctx, t.Timeouts.Converge)
		elsewhere(ctx, t, other, acceptedTrue, programmedTrue)
		if _, held := t.Proxy.Route(other.Key()); !held {
			t.Fatalf("the proxy no longer holds %s, whose Service %s/gone-svc still exists: deleting Service gone-svc of namespace %s "+
				"must change nothing for the routes of another namespace", other, ns, t.Namespace)
		}
	},
}

var specUpdateCheck = checks.Check{
	ID:      "spec-update",
	Title:   "a spec change reaches the proxy and every condition reports the new generation",
	SeedRef: "Acceptance 1: status reports accurate conditions",
	Points:  10,
	Clauses: []string{ClauseCurrent, ClauseObsGen, ClauseOneWrite, ClauseAfterAck, ClauseNoChurn, ClauseOneAtATime},
	Hint:    "after a spec edit the new spec must reach the proxy, and every status a reader sees must describe one generation: each condition's observedGeneration the same, the new one once pushed",
	Direction: `After a spec edit, metadata.generation grows. Look at each condition's
observedGeneration at every moment a reader could look, between your writes too.`,
	LongHint: `observedGeneration tells readers which spec a condition describes. After a spec edit,
metadata.generation increases; your conditions must carry the new value once the new
spec was pushed, or kubectl wait and every tool built on conditions will act on stale
information. The push must carry the new port. The check edits the spec again while
the proxy holds the answer to a push: the pass that pushed the earlier spec must not
report the later one programmed.`,
	Run: func(ctx context.Context, t *checks.T) {
		createService(ctx, t, "update-svc")
		r := t.NewRoute(ctx, "update", "update-svc", 8080)
		r.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)

		edited := time.Now()
		newGen := r.Edit(ctx, "spec.port 8080 -> 9090", func(spec map[string]any) { spec["port"] = int64(9090) })
		t.WaitFor(ctx, t.Timeouts.Converge, "the new port to reach the proxy", func() error {
			got, ok := t.Proxy.Route(r.Key())
			if !ok || got.Port != 9090 {
				return fmt.Errorf("the proxy\n  expected: %s with port 9090\n  observed: %+v (present: %v)", r.Key(), got, ok)
			}
			return nil
		})
		r.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)
		if gen, _ := r.GenerationAndSpec(ctx); gen != newGen {
			t.Fatalf("%s: generation %d, want %d: its spec changed again after the edit", r, gen, newGen)
		}
		// ST-ONE-WRITE: every write is a whole status. A pass that writes
		// one condition at a time shows between its writes as conditions
		// describing two generations.
		if half := r.HalfWritten(edited); len(half) > 0 {
			t.Fatalf("%s: its status was written one condition at a time: readers saw conditions describing two generations at once:\n  - %s\n"+
				"every status a reader sees must describe one generation (%s)", r, strings.Join(half, "\n  - "), ClauseOneWrite)
		}

		// An edit while a push is in flight: the pass that pushed the
		// earlier spec must not report the later one programmed (the
		// ST-AFTER-ACK invariant judges every status write of the check).
		// The push is held until the harness's watch has shown the later
		// generation for cacheLag, which the controller's cache, another
		// watch of the same API server, takes as long to show.
		t.Did(evidence.ProxyChanged, "EdgeRoute "+r.Key().String(), "the proxy holds every push of %s unanswered", r.Name)
		t.Proxy.HoldPushes(r.Key())
		defer t.Proxy.ReleasePushes(r.Key())
		midGen := r.Edit(ctx, "spec.port 9090 -> 9191", func(spec map[string]any) { spec["port"] = int64(9191) })
		var held time.Time
		t.WaitFor(ctx, t.Timeouts.Converge, "the push of generation "+fmt.Sprint(midGen)+" to be in flight", func() error {
			for _, p := range t.Proxy.PushesInFlight(r.Key()) {
				if p.Generation == midGen {
					held = time.Now()
					return nil
				}
			}
			return fmt.Errorf("the proxy\n  expected: a push of %s, generation %d (port 9191), in flight\n  observed: none", r, midGen)
		})
		lastGen := r.Edit(ctx, fmt.Sprintf("spec.port 9191 -> 9292, while the push of generation %d is in flight", midGen),
			func(spec map[string]any) { spec["port"] = int64(9292) })
		var seen time.Time
		t.WaitFor(ctx, t.Timeouts.Converge, fmt.Sprintf("the watch to show generation %d, and %s more", lastGen, cacheLag), func() error {
			if seen.IsZero() {
				for _, v := range t.History().Versions {
					if v.Name == r.Name && v.Generation == lastGen {
						seen = v.At
					}
				}
			}
			if seen.IsZero() || time.Since(seen) < cacheLag {
				return fmt.Errorf("the watch has not shown generation %d of %s for %s", lastGen, r, cacheLag)
			}
			return nil
		})
		// A slow answer, too (Q-ONE-AT-A-TIME): a pass that stops waiting
		// for it without giving the request up leaves it in flight beside
		// the next pass's push.
		t.Sleep(ctx, time.Until(held.Add(slowAnswer)))
		t.Did(evidence.ProxyChanged, "EdgeRoute "+r.Key().String(), "the proxy answers the held pushes of %s", r.Name)
		t.Proxy.ReleasePushes(r.Key())
		t.WaitFor(ctx, t.Timeouts.Converge, "the port edited during a push to reach the proxy", func() error {
			got, ok := t.Proxy.Route(r.Key())
			if !ok || got.Port != 9292 {
				return fmt.Errorf("the proxy\n  expected: %s with port 9292 (%s)\n  observed: %+v (present: %v)", r.Key(), ClauseCurrent, got, ok)
			}
			return nil
		})
		r.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)
		if gen, _ := r.GenerationAndSpec(ctx); gen != lastGen {
			t.Fatalf("%s: generation %d, want %d: its spec changed again after the edit", r, gen, lastGen)
		}
	},
}

// cacheLag is how long spec-update holds a push after its own watch showed
// the spec edited during it: the controller's cache, another watch of the
// same API server, has shown it by then on any machine the checks run on.
// A second was not enough with six runs side by side on two cores (make
// test): the mutant status-onto-refetched, whose refetch must see the later
// generation, once passed.
const cacheLag = 2 * time.Second

// slowAnswer is at least how long spec-update holds the push in flight: a
// slow proxy, whose answer still comes well within the scaffold's
// --dataplane-timeout of 5 s.
const slowAnswer = 2500 * time.Millisecond

const (
	nackReason = "listener port conflicts with the admin port (gw10 check)"
	// otherNACKReason is the proxy's next refusal of a route it refused
	// already: the message must follow it.
	otherNACKReason = "route table full (gw10 check)"
	// maxRetryRate bounds the pushes per second of a refused route once its
	// first second of refusals is over: a backoff, not a tight loop.
	maxRetryRate = 5.0
)

var pushFailureCheck = checks.Check{
	ID:      "push-failure",
	Title:   "a NACKed push is Programmed=False/PushFailed with the NACK's reason, never True, retried with backoff until the proxy ACKs, and a refusal repeated writes nothing",
	SeedRef: "Discussion: report status after the push (xDS ACK/NACK)",
	Points:  15,
	Clauses: []string{ClauseNacked, ClauseAfterAck, ClauseBackoff, ClauseMessage},
	Hint:    "a refused push must read Programmed=False/PushFailed with the proxy's reason (never the error's whole text), never True before an ACK, and be retried with backoff until the proxy ACKs",
	Direction: `Decide Programmed from the proxy's answer, never before it. Then ask how a refused push
is tried again and how fast (Reconcile's result, and the rate limiter on
docs/controller-runtime.md), and what a message that changes every attempt writes and
wakes (q-nack-message).`,
	LongHint: `Status must reflect reality: the route is programmed only when the proxy said so. Push
first, then set Programmed from the answer: on a NACK, Programmed=False with reason
PushFailed and the proxy's reason in the message (Accepted stays True: the route itself
is fine). Return the error so the work queue retries with backoff (or RequeueAfter of
1 to 10 seconds); when the proxy ACKs a retry, Programmed becomes True. A retry every
few milliseconds hammers a proxy that already said no: after the first second of
refusals, at most a few pushes per second. Writing Programmed=True before the push,
even for a moment, is a lie that the check sees.
The message must be a function of what was observed, not an error's text: the
NACK's reason (dataplane.NACKError.Reason, never the whole answer, which may carry a
request id), and a fixed "data plane unreachable" when no answer came (a reset
connection's error names a local port, new every attempt). A message that changes
every attempt is a status write every attempt, and the write's own event runs the
next pass at once, past the backoff: the check resets one route's connections and
NACKs another with a new request id in every answer, and counts the status writes
and pushes once both have been refused for 2 s. The error itself, with every detail,
is what Reconcile returns: the log shows it.`,
	Run: func(ctx context.Context, t *checks.T) {
		key := checks.RouteKey(t, "nacked")
		t.Did(evidence.ProxyChanged, "EdgeRoute "+key.String(), "telling the proxy to refuse nacked")
		t.Proxy.SetNACK(key, nackReason)
		createService(ctx, t, "nacked-svc")
		varying := refuseVaryingly(ctx, t, "nacked-svc")
		r := t.NewRoute(ctx, "nacked", "nacked-svc", 8080)
		r.Eventually(ctx, t.Timeouts.Converge, acceptedTrue,
			checks.Want{Type: programmed, Status: "False", Reason: "PushFailed", Message: nackReason})
		t.Stays(ctx, t.Timeouts.NACKHold, r.String()+" must not be Programmed while the proxy NACKs", func() error {
			err := r.HasConditions(ctx, programmedNotTrue)
			if err != nil {
				programmedOverNACK(t, r)
			}
			return err
		})
		if at, conds, ok := r.FirstTrue(programmed); ok {
			t.Fatalf("%s was Programmed=True at %s while the proxy NACKed every push:\n  observed: %+v",
				r, at.Format("15:04:05.000"), conds)
		}
		retryRate(t, r)
		varying.settle(ctx, t)

		t.Did(evidence.ProxyChanged, r.Object(), "telling the proxy to accept nacked again")
		t.Proxy.SetNACK(r.Key(), "")
		varying.answer(t)
		r.Eventually(ctx, t.Timeouts.Retry, acceptedTrue, programmedTrue)
		varying.programmed(ctx, t)
		refusedOnceItsServiceExists(ctx, t)
	},
}

// refusedOnceItsServiceExists: a route that waited for its Service while
// the proxy refuses it. Once the Service exists, Programmed stays False,
// now for the proxy's refusal (S-NACKED), not the missing Service; a new
// reason of the proxy's becomes the message; then the proxy accepts it.
// Each is a change of reason or message alone, under a status that stays.
func refusedOnceItsServiceExists(ctx context.Context, t *checks.T) {
	key := checks.RouteKey(t, "nacked-late")
	t.Did(evidence.ProxyChanged, "EdgeRoute "+key.String(), "telling the proxy to refuse nacked-late")
	t.Proxy.SetNACK(key, nackReason)
	r := t.NewRoute(ctx, "nacked-late", "nacked-late-svc", 8080)
	r.Eventually(ctx, t.Timeouts.Converge, serviceNotFound, programmedNotTrue)
	createService(ctx, t, "nacked-late-svc")
	r.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, checks.Want{Type: programmed, Status: "False", Reason: "PushFailed", Message: nackReason})
	t.Did(evidence.ProxyChanged, r.Object(), "telling the proxy to refuse nacked-late for another reason")
	t.Proxy.SetNACK(key, otherNACKReason)
	r.Eventually(ctx, t.Timeouts.Retry, acceptedTrue, checks.Want{Type: programmed, Status: "False", Reason: "PushFailed", Message: otherNACKReason})
	t.Did(evidence.ProxyChanged, r.Object(), "telling the proxy to accept nacked-late")
	t.Proxy.SetNACK(key, "")
	r.Eventually(ctx, t.Timeouts.Retry, acceptedTrue, programmedTrue)
}

// programmedOverNACK adds the cause of a Programmed=True the proxy never
// ACKed: when the status first said so, against the proxy's answers.
func programmedOverNACK(t *checks.T, r *checks.Route) {
	at, _, ok := r.FirstTrue(programmed)
	if !ok {
		return
	}
	refused, acked := 0, 0
	for _, ev := range t.Proxy.Events(r.Key()) {
		switch {
		case ev.Method != "PUT":
		case ev.ACKed():
			acked++
		default:
			refused++
		}
	}
	if acked > 0 {
		return
	}
	t.Cause("the status said Programmed=True at %s, and the proxy refused every push of %s (%s, no ACK): "+
		"Programmed=True was written before, or without, the proxy's answer", at.Format("15:04:05.000"), r, words.Count(refused, "NACK", "NACKs"))
}

// retryRate fails the check when a refused route was pushed faster than
// maxRetryRate per second after its first second of refusals.
func retryRate(t *checks.T, r *checks.Route) {
	var first time.Time
	var late []time.Time
	for _, ev := range t.Proxy.Events(r.Key()) {
		if ev.Method != "PUT" || ev.ACKed() {
			continue
		}
		if first.IsZero() {
			first = ev.Received
		}
		if ev.Received.Sub(first) > time.Second {
			late = append(late, ev.Received)
		}
	}
	if len(late) < 2 {
		return
	}
	span := late[len(late)-1].Sub(first.Add(time.Second))
	if span < 500*time.Millisecond {
		span = 500 * time.Millisecond
	}
	rate := float64(len(late)) / span.Seconds()
	if rate > maxRetryRate {
		t.Cause("the refused push was retried %d times in %s after its first second: a tight loop, not a backoff", len(late), span.Round(10*time.Millisecond))
		t.Fatalf("%s: a refused push must be retried with backoff.\n  expected: at most %.0f pushes per second once the first second of refusals is over\n"+
			"  observed: %.1f per second (%s)",
			r, maxRetryRate, rate, ClauseBackoff)
	}
}

var quiescentCheck = checks.Check{
	ID:      "quiescent",
	Title:   "a converged controller writes no status and runs no reconcile",
	SeedRef: "Discussion: Reconcile must be idempotent",
	Points:  10,
	Clauses: []string{ClauseQuiet, ClauseNoChurn, ClauseNoPoll},
	Hint:    "once converged, a controller left alone must write no status and run no reconcile; poked with a change that matters to no route, it may run a pass, which must write no status",
	Direction: `Run one pass of your code over a world that has not changed, in your head: does it
write, push, requeue? Every write is an event that runs another pass, and every requeue
runs one later.`,
	LongHint: `Once the world matches the spec, a pass must change nothing: compute the conditions,
compare with what is stored (equality.Semantic.DeepEqual) and skip the write when they
are equal. meta.SetStatusCondition keeps LastTransitionTime when the status does not
change; setting it to now on every pass rewrites the object forever, and each write
triggers another reconcile. Changes arrive through watches, so no RequeueAfter is needed.`,
	Run: func(ctx context.Context, t *checks.T) {
		createService(ctx, t, "quiet-svc")
		r := t.NewRoute(ctx, "quiet", "quiet-svc", 8080)
		r.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)
		t.WaitIdle(ctx)

		// 1. Left alone for a while, a converged controller does nothing:
		// no status write (hot loop), no reconcile, no push and no work on
		// a timer (polling), whatever its /metrics say.
		before := snapshot(ctx, t, r)
		w := t.WatchQuietConfirmed(ctx, t.Timeouts.Quiet, checks.Keys(r))
		after := snapshot(ctx, t, r)
		problems := quietProblems(t, w)
		problems = append(problems, rewritten(r, before, after)...)

		// 2. An event that changes nothing the route depends on (an annotation
		// on its Service, a second after the last write) may trigger a pass,
		// but that pass must not write: a timestamp set to now on every pass
		// shows up here.
		svc := &corev1.Service{}
		t.Must(t.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: "quiet-svc"}, svc), "reading Service quiet-svc")
		patch := client.MergeFrom(svc.DeepCopy())
		svc.Annotations = map[string]string{"gw10.10xdev.io/poke": "1"}
		t.Did(ServiceTouched, "Service "+t.Namespace+"/quiet-svc", "annotating Service quiet-svc (nothing a route depends on)")
		t.Must(t.Client.Patch(ctx, svc, patch), "annotating Service quiet-svc")
		t.Sleep(ctx, t.Timeouts.Absent)
		t.WaitIdle(ctx)
		poked := snapshot(ctx, t, r)
		problems = append(problems, rewritten(r, after, poked)...)
		problems = append(problems, refusedListingsChangeNothing(ctx, t, r)...)

		if len(problems) > 0 {
			t.Fatalf("a converged controller must not write or loop:\n  - %s", strings.Join(problems, "\n  - "))
		}
	},
}

// refusedListingsChangeNothing has the proxy refuse to list its table
// (503, as a proxy still loading it would) for longer than a drift period,
// while it holds every route: a look that cannot list has learnt nothing,
// so a converged controller pushes, withdraws and writes nothing, and
// retries the listing with backoff (Q-QUIET; Q-RESTART's rule 2).
func refusedListingsChangeNothing(ctx context.Context, t *checks.T, r *checks.Route) []string {
	window := DriftPeriod + 1500*time.Millisecond
	t.Did(evidence.ProxyChanged, "", "the proxy refuses to list its routes (503) for %s, and still holds every route", window)
	from := time.Now()
	t.Proxy.RefuseListing(time.Hour)
	before := snapshot(ctx, t, r)
	t.Sleep(ctx, time.Until(from.Add(window)))
	t.Proxy.RefuseListing(0)
	t.Did(evidence.ProxyChanged, "", "the proxy lists its routes again")
	t.Sleep(ctx, t.Timeouts.Absent)
	var problems []string
	for _, ev := range t.Proxy.Events(r.Key()) {
		if ev.Received.After(from) {
			problems = append(problems, fmt.Sprintf("a %s of %s at %s while the proxy refused to list its routes, and held them all: "+
				"a refused listing is no news of the table, never an empty one (%s; %s rule 2)",
				requestWord(ev), r, clock(ev.Received), ClauseQuiet, ClauseRestart))
			break
		}
	}
	problems = append(problems, rewritten(r, before, snapshot(ctx, t, r))...)
	if loop := listingLoop(t.Proxy.Listings(), from, window); loop != "" {
		problems = append(problems, loop)
	}
	return problems
}

var routeDeletedCheck = checks.Check{
	ID:      "route-deleted",
	Title:   "deleting the EdgeRoute withdraws its route from the proxy, also when the proxy refuses the first withdraws or another controller's finalizer keeps the object, and the deletion completes",
	SeedRef: "Acceptance 1: a working reconciler (the data plane follows deletions)",
	Points:  10,
	Clauses: []string{ClauseDeleted, ClauseObsGen},
	Hint:    "once an EdgeRoute is deleted, its route must leave the proxy (a refused withdraw is not a withdraw) and the object must be gone",
	Direction: `A deleted EdgeRoute reaches Reconcile once, as a NotFound for its key. Ask what the
proxy still holds for that key, what tries again when the proxy refuses the withdraw (no
event will come), and what an EdgeRoute that Get still finds with a deletionTimestamp
is.`,
	LongHint: `A deleted EdgeRoute reaches Reconcile as a NotFound. Ignoring it leaves its route in the
proxy forever. Withdraw it (Remove is idempotent, so doing it for a route that was never
programmed is fine). A finalizer is the other way to do this: then the object stays
(with a deletionTimestamp) until Reconcile has withdrawn the route and removed the
finalizer; forgetting to remove it leaves the object stuck in deletion. Keying the data
plane by the EdgeRoute's name makes the withdraw idempotent; it does not make a deletion
reach a controller that was stopped when it happened (check deleted-while-down).
A busy proxy can refuse a withdraw (503): the route is still served. Return the error
from Reconcile: the queue retries the key with backoff until a withdraw is answered.
Nothing else will bring the key back: the EdgeRoute is gone, so no event will come.
Another controller's finalizer can keep a deleted EdgeRoute: Get still finds it, with a
deletionTimestamp and a new generation. It is on its way out all the same: withdraw its
route (retrying a refused withdraw, as on any other path), never push it, never report
it Programmed=True, and stamp any condition you write for it with its generation.`,
	Run: func(ctx context.Context, t *checks.T) {
		createService(ctx, t, "bye-svc")
		r := t.NewRoute(ctx, "bye", "bye-svc", 8080)
		busy := t.NewRoute(ctx, "busy", "bye-svc", 8080)
		held := t.NewRoute(ctx, "held", "bye-svc", 8080)
		for _, x := range []*checks.Route{r, busy, held} {
			x.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)
		}
		t.ProxyHolds(ctx, t.Timeouts.Converge, r.Name, busy.Name, held.Name)
		setForeignFinalizer(ctx, t, held, true)
		defer setForeignFinalizer(context.WithoutCancel(ctx), t, held, false)

		t.Proxy.RefuseWithdraws(busy.Key(), busyWithdraws, busyReason)
		defer t.Proxy.RefuseWithdraws(busy.Key(), 0, "")
		t.WaitIdle(ctx) // the finalizer's own update event answered
		r.Delete(ctx)
		busy.Delete(ctx)
		t.WaitFor(ctx, t.Timeouts.Converge, "the withdraw of "+busy.Name+" that the proxy refused at first", func() error {
			return withdrawnAfterRefusals(t, busy, ClauseDeleted)
		})
		t.ProxyHolds(ctx, t.Timeouts.Converge, held.Name)
		gone(ctx, t, r)
		gone(ctx, t, busy)

		// held's first withdraws are refused too: a pass over an EdgeRoute
		// being deleted retries a refused withdraw as any other pass does.
		// (After busy's: a retry pending for held would keep the controller
		// from looking idle while busy's wait judges it.)
		t.Proxy.RefuseWithdraws(held.Key(), heldWithdraws, busyReason)
		defer t.Proxy.RefuseWithdraws(held.Key(), 0, "")
		deleted := time.Now()
		held.Delete(ctx)
		deletedGen := held.MustGet(ctx).GetGeneration()
		t.WaitFor(ctx, t.Timeouts.Converge, "the withdraw of "+held.Name+", which another controller's finalizer keeps in deletion", func() error {
			if err := withdrawnAfterRefusals(t, held, ClauseDeleted); err != nil {
				return fmt.Errorf("%s is being deleted (another controller's finalizer keeps the object), and is on its way out all the same: "+
					"its route must be withdrawn, whatever finalizer keeps the object\n%w", held, err)
			}
			return nil
		})
		t.ProxyHolds(ctx, t.Timeouts.Converge)

		// held is on its way out, another controller's finalizer keeping
		// the object: withdrawn above, and never pushed or reported
		// programmed since its deletion, however long it stays.
		t.WaitIdle(ctx)
		if err := onItsWayOut(t, held, deleted, deletedGen); err != nil {
			t.Fatalf("%s", err)
		}
		setForeignFinalizer(ctx, t, held, false)
		gone(ctx, t, held)
	},
}

// foreignFinalizer is the finalizer of "another controller" that
// route-deleted puts on an EdgeRoute to keep it in deletion.
const foreignFinalizer = "gw10.10xdev.io/held-by-another-controller"

// setForeignFinalizer adds foreignFinalizer to r, or removes it (which ends
// a deletion it held). Removing it from an EdgeRoute already gone is done.
func setForeignFinalizer(ctx context.Context, t *checks.T, r *checks.Route, on bool) {
	obj, err := r.Get(ctx)
	if apierrors.IsNotFound(err) && !on {
		return
	}
	t.Must(err, "reading %s", r)
	patch := client.MergeFrom(obj.DeepCopy())
	fins := slices.DeleteFunc(obj.GetFinalizers(), func(f string) bool { return f == foreignFinalizer })
	what := "removing another controller's finalizer from"
	if on {
		fins = append(fins, foreignFinalizer)
		what = "adding another controller's finalizer (" + foreignFinalizer + ") to"
	}
	obj.SetFinalizers(fins)
	t.Did(evidence.RouteEdited, r.Object(), "%s %s %s", what, t.Primary.Kind(), r.Name)
	t.Must(t.Client.Patch(ctx, obj, patch), "%s %s", what, r)
}

// onItsWayOut says what r, kept in deletion by another controller's
// finalizer, had done to it that it must not once deleted at deleted (the contract's
// EdgeRoute being deleted, under S-DELETED): a push of the generation its
// deletion made (deletedGen: the API server counts a deletion held by a
// finalizer as a change), a push after its route was withdrawn, or a status
// write saying Programmed=True of that generation. A push or write of an
// earlier generation may be a pass that read the object before its
// deletion, and is not counted.
func onItsWayOut(t *checks.T, r *checks.Route, deleted time.Time, deletedGen int64) error {
	var seen []string
	withdrawn := false
	for _, ev := range t.Proxy.Events(r.Key()) {
		switch {
		case ev.Received.Before(deleted):
		case ev.Method == http.MethodDelete && ev.Status/100 == 2:
			withdrawn = true
		case ev.Method == http.MethodPut && ev.Route != nil && (ev.Route.Generation >= deletedGen || withdrawn):
			seen = append(seen, fmt.Sprintf("%s a push of its route, generation %d (%s)", ev.Received.Format("15:04:05.000"), ev.Route.Generation, ev.Answer()))
		}
	}
	for _, ev := range statusWritesOf(t, r, deleted, time.Now().Add(time.Hour)) {
		if c, ok := programmedOf(ev.Detail); ok && c.Status == "True" && c.ObservedGeneration >= deletedGen {
			seen = append(seen, fmt.Sprintf("%s a status write: %s (observedGeneration %d)", ev.At.Format("15:04:05.000"), ev.Text, c.ObservedGeneration))
		}
	}
	if len(seen) == 0 {
		return nil
	}
	return fmt.Errorf("%s, being deleted (generation %d; another controller's finalizer keeps the object)\n"+
		"  expected: on its way out (%s): its route withdrawn, never pushed again, never reported Programmed=True\n"+
		"  observed: %s", r, deletedGen, ClauseDeleted, strings.Join(seen, "; "))
}

// busyWithdraws is how many reads or withdraws of its route the proxy
// refuses in route-deleted, heldWithdraws how many of the route whose
// EdgeRoute another controller's finalizer keeps (more than the passes its
// deletion and its own status write wake), and busyReason what it answers.
const (
	busyWithdraws = 2
	heldWithdraws = 3
	busyReason    = "busy: reloading its configuration, try again"
)

// unansweredWithdraws is how many withdraws of a route service-removed
// keeps unanswered; giveUpBound how long it keeps one when the controller
// does not give up on it first (twice the scaffold's --dataplane-timeout):
// then the proxy answers it.
const (
	unansweredWithdraws = 2
	giveUpBound         = 10 * time.Second
)

// awaitGiveUp waits until the controller gave up the n withdraws of r that
// the proxy keeps in flight (proxy.HoldWithdraws), or, when it waits for an
// answer longer than giveUpBound, lets the proxy answer it then.
func awaitGiveUp(ctx context.Context, t *checks.T, r *checks.Route, n int) {
	wait := time.Duration(n)*giveUpBound + t.Timeouts.Converge
	t.WaitFor(ctx, wait, fmt.Sprintf("the controller to give up the %d withdraws of %s that the proxy keeps unanswered", n, r.Name), func() error {
		given := len(t.Proxy.Abandoned(r.Key()))
		if given >= n {
			return nil
		}
		at, held := t.Proxy.WithdrawHeld(r.Key())
		if held && time.Since(at) > giveUpBound {
			t.Proxy.ReleaseWithdraw(r.Key())
			t.Logf("the controller waited over %s for the answer to its withdraw of %s; the proxy answered it then", giveUpBound, r)
			return nil
		}
		if held {
			return fmt.Errorf("the proxy keeps a withdraw of %s, received at %s, unanswered (%d of %d given up so far)", r.Key(), at.Format("15:04:05.000"), given, n)
		}
		return fmt.Errorf("the proxy\n  expected: %d withdraws of %s, whose Service is gone, each kept unanswered until the controller gives up on it\n  observed: %d given up, and none in flight",
			n, r.Key(), given)
	})
}

// withdrawnAfterRefusals says whether the proxy no longer holds r's route,
// and if it does, what the controller asked of it (reads of the route and
// withdraws, with their answers) and whether anything came after.
func withdrawnAfterRefusals(t *checks.T, r *checks.Route, clause string) error {
	if _, held := t.Proxy.Route(r.Key()); !held {
		return nil
	}
	type asked struct {
		at   time.Time
		what string
	}
	var seen []asked
	withdraws := 0
	for _, rd := range t.Proxy.Reads() {
		if rd.Key == r.Key() {
			seen = append(seen, asked{rd.At, fmt.Sprintf("%s a read answered %s", rd.At.Format("15:04:05.000"), readAnswer(rd))})
		}
	}
	for _, ev := range t.Proxy.Events(r.Key()) {
		if ev.Method == http.MethodDelete {
			withdraws++
			seen = append(seen, asked{ev.Answered, fmt.Sprintf("%s a withdraw answered %s", ev.Received.Format("15:04:05.000"), ev.Answer())})
		}
	}
	for _, a := range t.Proxy.Abandoned(r.Key()) {
		withdraws++
		seen = append(seen, asked{a.GaveUp, fmt.Sprintf("%s a withdraw it gave up on at %s, unanswered: never applied",
			a.Received.Format("15:04:05.000"), a.GaveUp.Format("15:04:05.000"))})
	}
	if len(seen) == 0 {
		return fmt.Errorf("the proxy\n  expected: route %s withdrawn (%s)\n  observed: still served, and no withdraw of it was asked for", r.Name, clause)
	}
	slices.SortFunc(seen, func(a, b asked) int { return a.at.Compare(b.at) })
	lines := make([]string, len(seen))
	for i, a := range seen {
		lines[i] = a.what
	}
	none := ""
	if withdraws == 0 {
		none = "; no withdraw of it was asked for"
	}
	return fmt.Errorf("the proxy\n  expected: route %s withdrawn (%s): a refused read or withdraw leaves it served\n"+
		"  observed: still served; what the controller asked of it: %s%s; none since %s",
		r.Name, clause, strings.Join(lines, "; "), none, seen[len(seen)-1].at.Format("15:04:05.000"))
}

// readAnswer says how the proxy answered a read of one route.
func readAnswer(rd proxy.Read) string {
	switch rd.Status {
	case 0:
		return "nothing (the proxy was down)"
	case http.StatusOK:
		return "200 (the route)"
	default:
		return fmt.Sprintf("%d %s", rd.Status, rd.Reason)
	}
}

// gone waits until the EdgeRoute no longer exists.
func gone(ctx context.Context, t *checks.T, r *checks.Route) {
	t.WaitFor(ctx, t.Timeouts.Converge, r.String()+" to be gone", func() error {
		obj, err := r.Get(ctx)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("%s still exists after its deletion\n  expected: gone\n  observed: deletionTimestamp %v, finalizers %v",
			r, obj.GetDeletionTimestamp(), obj.GetFinalizers())
	})
}

var restartReconvergeCheck = checks.Check{
	ID:      "restart-reconverge",
	Title:   "a restarted controller reconverges every EdgeRoute from scratch",
	SeedRef: "Acceptance 3: controller restart reconverges from scratch (task 3)",
	Points:  10,
	Clauses: []string{ClauseRestart, ClauseAcked},
	Hint:    "a restarted controller must bring every EdgeRoute to what the world says now, whatever its status claims and whatever the proxy forgot",
	Direction: `A new process knows only what it observes: the informer's first list, the Services, the
proxy. Look for every decision in your code that trusts the stored status, or the
process's memory, instead of the world. Four workers run the routes' passes at once:
what a pass observed must stay its own.`,
	LongHint: `After a restart the controller gets an Added event for every EdgeRoute and must bring
each to the right state from what it observes now, not from what its status claims. The
check kills the controller, then changes the world behind its back: a Service appears,
another disappears, a status is wiped and the proxy loses its whole table (as a
restarted proxy would). Trusting "Programmed=True for this generation" to skip the push
leaves the proxy empty.`,
	Run: func(ctx context.Context, t *checks.T) {
		createService(ctx, t, "b-svc")
		createService(ctx, t, "c-svc")
		createService(ctx, t, "d-svc")
		a := t.NewRoute(ctx, "a", "a-svc", 8080) // Service appears while down
		b := t.NewRoute(ctx, "b", "b-svc", 8080) // Service disappears while down
		c := t.NewRoute(ctx, "c", "c-svc", 8080) // status wiped while down
		d := t.NewRoute(ctx, "d", "d-svc", 8080) // untouched, but the proxy forgets it
		a.Eventually(ctx, t.Timeouts.Converge, serviceNotFound, programmedNotTrue)
		for _, r := range []*checks.Route{b, c, d} {
			r.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)
		}
		t.ProxyHolds(ctx, t.Timeouts.Converge, "b", "c", "d")
		gens := map[string]int64{}
		for _, r := range []*checks.Route{a, b, c, d} {
			gens[r.Name], _ = r.GenerationAndSpec(ctx)
		}

		t.KillController(ctx)
		createService(ctx, t, "a-svc")
		deleteService(ctx, t, "b-svc")
		t.WipeStatus(ctx, c)
		t.Did(evidence.ProxyChanged, "", "the proxy forgets its table (as a restarted proxy would)")
		t.Proxy.Clear()

		t.StartController(ctx)
		a.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)
		b.Eventually(ctx, t.Timeouts.Converge, serviceNotFound, programmedNotTrue)
		c.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)
		d.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)
		t.ProxyHolds(ctx, t.Timeouts.Converge, "a", "c", "d")
		for _, r := range []*checks.Route{a, b, c, d} {
			if gen, _ := r.GenerationAndSpec(ctx); gen != gens[r.Name] {
				t.Fatalf("%s: its spec changed (generation %d -> %d): reconvergence must need no change to any EdgeRoute", r, gens[r.Name], gen)
			}
		}
	},
}

var deletedWhileDownCheck = checks.Check{
	ID:      "deleted-while-down",
	Title:   "an EdgeRoute deleted while the controller is stopped has its route withdrawn once the controller is back",
	SeedRef: "Task 3: delete an EdgeRoute while the controller is stopped",
	Points:  10,
	Clauses: []string{ClauseDeleted, ClauseRestart, ClauseNoFlap, ClauseOneAtATime},
	Hint:    "an EdgeRoute deleted while the controller is stopped must have its route withdrawn once the controller is back, no other route withdrawn, and one created again under its name must end routed",
	Direction: `A deletion that happened while no process ran reaches no Reconcile. Something has to
remember it across the restart: the API server (go doc
k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta, its Finalizers field) or the proxy's
table. The chapter's "Deletion across restarts" names the cases this check tries on the
new process; step01-checks.md says what fails each.`,
	LongHint: `Reconcile hears of a deletion as a NotFound, but only a running controller gets that
event. An EdgeRoute deleted while the controller is stopped is simply absent from the
informer's first list when it starts again, so nothing ever reconciles its key and its
route stays in the proxy for ever. Two designs fix it. A start-up sweep lists the proxy's
routes (GET /v1/routes, Programmer.Routes) once the cache has synced and enqueues those
whose EdgeRoute is gone, so Reconcile's NotFound path withdraws them. A finalizer keeps
the deleted EdgeRoute (with a deletionTimestamp) until Reconcile has withdrawn its route
and removed the finalizer, so the restarted controller finds it in its first list. The
check programs three routes, kills the controller, deletes two of them, keeps the proxy's
table and starts the controller again, watching only the check's namespace (the
scaffold's --namespaces): the first deleted route must be withdrawn, the object gone,
and the kept route never withdrawn (a sweep withdraws only what has no EdgeRoute). The
proxy is shared: it also holds a route of another namespace, another shard's. A cache
scoped to some namespaces answers a Get elsewhere with an error, not NotFound: that key
is not this controller's to judge, so skip it (log it) and withdraw the orphans you did
find; never let it end the sweep, and never withdraw it. The
proxy is still starting when the controller comes back: it refuses to list its routes
(503) for a couple of seconds, so a sweep must list again after a listing failed (with
backoff, or at its next look: the check waits for either), and never report "0 orphans"
for a table it could not read. The second deleted
EdgeRoute is created again while the proxy holds its old route's withdraw unanswered:
a sweep that withdraws from its own goroutine races the worker that pushes the new one, and
the withdraw can land last. Hand the swept keys to the work queue, which never gives
one key to two workers at once, so the withdraw and the push of one name take turns.`,
	Run: func(ctx context.Context, t *checks.T) {
		createService(ctx, t, "down-svc")
		deleted := t.NewRoute(ctx, "deleted", "down-svc", 8080)
		kept := t.NewRoute(ctx, "kept", "down-svc", 8080)
		again := t.NewRoute(ctx, "again", "down-svc", 8080)
		for _, r := range []*checks.Route{deleted, kept, again} {
			r.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)
		}
		t.ProxyHolds(ctx, t.Timeouts.Converge, again.Name, deleted.Name, kept.Name)

		t.KillController(ctx)
		stopped := time.Now()
		deleted.Delete(ctx) // the proxy keeps its table: only the controller is down
		again.Delete(ctx)
		t.Did(evidence.ProxyChanged, "", "the proxy refuses to list its routes (503) for %s from the first listing, as a proxy still starting would", listRefusal)
		t.Proxy.RefuseListing(listRefusal)
		defer t.Proxy.RefuseListing(0)
		t.Did(evidence.ProxyChanged, again.Object(), "the proxy will keep the next withdraw of %s in flight, unanswered, while its EdgeRoute is created again; "+
			"given up, it lands late, after the next push of that name", again)
		t.Proxy.HoldWithdrawLandingLate(again.Key())
		defer t.Proxy.ReleaseWithdraw(again.Key())
		// The proxy is shared: it also holds a route of a namespace this
		// controller does not watch, put there by another shard's.
		foreign := proxy.Key{Namespace: t.Namespace + "-other-shard", Name: "stray"}
		t.Did(evidence.ProxyChanged, "", "the proxy also holds %s, a route of a namespace the restarted controller does not watch (another shard's)", foreign)
		t.Proxy.Plant(foreign, proxy.Route{Hostname: "stray.example.com", Prefix: "/", Service: "stray", Port: 8080, Generation: 1})
		scoped := t.StartControllerIn(ctx, t.Namespace)
		shared := ""
		if scoped {
			shared = fmt.Sprintf("\n  the proxy also holds %s, of a namespace the controller does not watch (another shard's route): "+
				"a route the controller cannot judge must not stop it from withdrawing the routes of deleted EdgeRoutes (%s)", foreign, ClauseRestart)
		}
		overlap := recreatedInFlight(ctx, t, again, stopped, shared)

		// A sweep retries on a timer of its own, off the queue: the
		// controller's idleness while it waits proves nothing.
		t.WaitPatiently(ctx, t.Timeouts.Converge, "the route of "+deleted.String()+" to be withdrawn", func() error {
			if _, held := t.Proxy.Route(deleted.Key()); held {
				return fmt.Errorf("the proxy still holds %s, whose EdgeRoute was deleted while the controller was stopped\n"+
					"  expected: withdrawn once the controller is back, also when the proxy cannot be listed at first or holds routes of other namespaces\n"+
					"  observed: still routed after the controller started again (%s)\n"+
					"  listings: %s%s", deleted.Key(), ClauseDeleted, listings(t.Proxy.Listings(), stopped), shared)
			}
			return nil
		})

		if loop := listingLoop(t.Proxy.Listings(), stopped, listRefusal); loop != "" {
			t.Fatalf("%s", loop)
		}
		gone(ctx, t, deleted)
		kept.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)
		for _, ev := range t.Proxy.Events(kept.Key()) {
			if ev.Method == http.MethodDelete && ev.Received.After(stopped) {
				t.Fatalf("%s was withdrawn at %s, after the controller started again, although its EdgeRoute exists: "+
					"a withdraw followed by a push is an outage on a real proxy (%s)",
					kept, ev.Received.Format("15:04:05.000"), ClauseNoFlap)
			}
		}
		t.ProxyHolds(ctx, t.Timeouts.Converge, again.Name, kept.Name)
		for _, ev := range t.Proxy.Events(foreign) {
			if scoped && ev.Method == http.MethodDelete {
				t.Fatalf("the controller, watching only %s, withdrew %s at %s, a route of a namespace it does not watch: another shard's route, not its to judge (%s)",
					t.Namespace, foreign, ev.Received.Format("15:04:05.000"), ClauseRestart)
			}
		}
		if overlap != "" {
			t.Fatalf("%s, created again under the name of an EdgeRoute deleted while the controller was stopped, lost its route after it was pushed: %s "+
				"(%s; %s: whatever pushed it again is all that put it back)", again, overlap, ClauseRestart, ClauseNoFlap)
		}
	},
}

// recreatedInFlight creates r again, under the name of an EdgeRoute deleted
// while the controller was stopped, while the proxy holds the withdraw of
// the old one in flight (proxy.HoldWithdrawLandingLate): the new EdgeRoute
// must end programmed and routed (Q-RESTART). The hold ends when a push of
// r arrives (the proxy then applies the push, and the withdraw after it),
// when the controller gives up on the withdraw (which then lands after the
// next push of r, as a slow proxy's would), or after giveUpBound. It
// returns what the proxy's requests show when the new EdgeRoute's push and
// the old one's withdraw were in flight at once, or when the old one's
// withdraw, landing late, removed the new one's route, for the check to
// judge last: its other findings name a cause more precisely.
func recreatedInFlight(ctx context.Context, t *checks.T, r *checks.Route, stopped time.Time, shared string) (overlap string) {
	var sent time.Time
	t.WaitPatiently(ctx, t.Timeouts.Converge, "the withdraw of "+r.String()+" to reach the proxy", func() error {
		at, held := t.Proxy.WithdrawHeld(r.Key())
		if !held {
			return fmt.Errorf("the proxy\n  expected: a withdraw of %s, the second EdgeRoute deleted while the controller was stopped (the check creates it again next)\n  observed: none\n  listings: %s%s",
				r.Key(), listings(t.Proxy.Listings(), stopped), shared)
		}
		sent = at
		return nil
	})
	if _, err := r.Get(ctx); err == nil {
		// The EdgeRoute waits for its withdraw (a finalizer): no new one
		// can be created under its name before that withdraw is answered.
		t.Proxy.ReleaseWithdraw(r.Key())
		gone(ctx, t, r)
	}
	again := t.NewRoute(ctx, r.Name, r.Service, 8080)
	for end := sent.Add(giveUpBound); time.Now().Before(end); t.Sleep(ctx, 50*time.Millisecond) {
		if _, held := t.Proxy.WithdrawHeld(r.Key()); !held {
			break // a push of the new EdgeRoute arrived while the withdraw was in flight, or the controller gave up on it
		}
	}
	t.Proxy.ReleaseWithdraw(r.Key())
	again.Eventually(ctx, t.Timeouts.Converge, acceptedTrue, programmedTrue)
	t.WaitFor(ctx, t.Timeouts.Converge, "the proxy to route "+again.String(), func() error {
		if _, ok := t.Proxy.Route(again.Key()); ok {
			return nil
		}
		what, _ := inFlightAtOnce(t.Proxy.Events(again.Key()), sent)
		if late := landedLate(t.Proxy.Abandoned(again.Key()), sent); late != "" {
			what = late
		}
		return fmt.Errorf("the proxy holds no route for %s, created again under the name of an EdgeRoute deleted while the controller was stopped, "+
			"although its status says Programmed=True\n  expected: routed once the controller is back (%s)\n  observed: %s",
			again, ClauseRestart, what)
	})
	if what, overlapped := inFlightAtOnce(t.Proxy.Events(again.Key()), sent); overlapped {
		return what
	}
	return landedLate(t.Proxy.Abandoned(again.Key()), sent)
}

// landedLate says how the withdraw sent at sent, among a route's abandoned
// ones, which the controller gave up on and the proxy applied late, after a
// push of the EdgeRoute created again, removed that EdgeRoute's route; ""
// when it did not (it named the old route's uid, and the proxy refused it:
// 409).
func landedLate(abandoned []proxy.Abandoned, sent time.Time) string {
	for _, a := range abandoned {
		if !a.Received.Equal(sent) || a.Landed.IsZero() || a.Removed == "" || a.Removed == a.UID {
			continue
		}
		uid := "naming no uid"
		if a.UID != "" {
			uid = "naming uid " + a.UID
		}
		return fmt.Sprintf("the withdraw of the old EdgeRoute, sent at %s %s and given up at %s, landed at %s, after the push of the new one, "+
			"and removed the new one's route (uid %s): a withdraw that names the uid of the route it means is refused (409) when it lands that late",
			a.Received.Format("15:04:05.000"), uid, a.GaveUp.Format("15:04:05.000"), a.Landed.Format("15:04:05.000"), a.Removed)
	}
	return ""
}

// inFlightAtOnce says what the proxy's requests for one key, from the
// withdraw sent at sent, show, and whether a push was sent while that
// withdraw was unanswered: two requests of one route in flight at once,
// the withdraw landing last.
func inFlightAtOnce(events []proxy.Event, sent time.Time) (string, bool) {
	var withdraw *proxy.Event
	for i := range events {
		if events[i].Method == http.MethodDelete && events[i].Received.Equal(sent) {
			withdraw = &events[i]
		}
	}
	if withdraw == nil {
		return "the withdraw sent at " + sent.Format("15:04:05.000") + " was never answered", false
	}
	for _, e := range events {
		if e.Method == http.MethodPut && e.ACKed() && e.Received.After(withdraw.Received) && e.Received.Before(withdraw.Answered) {
			return fmt.Sprintf("the push of the new EdgeRoute was sent at %s while the withdraw of the old one, sent at %s, was still unanswered: "+
				"the proxy applied the push, then the withdraw (answered %s); two requests of one route were in flight at once",
				e.Received.Format("15:04:05.000"), withdraw.Received.Format("15:04:05.000"), withdraw.Answered.Format("15:04:05.000")), true
		}
	}
	return fmt.Sprintf("the withdraw of the old EdgeRoute, sent at %s, was answered at %s, and no push of the new one was answered after it",
		withdraw.Received.Format("15:04:05.000"), withdraw.Answered.Format("15:04:05.000")), false
}

// listRefusal is how long deleted-while-down's proxy refuses to list its
// routes after the restart, from the first listing it refuses.
const listRefusal = 2 * time.Second

// listingLoop says how the controller retried listings the proxy refused
// from from on, for d, when it listed more often than a quiet window of d
// tolerates (two a second: a look for drift and a sweep retrying side by
// side); "" when it did not (Q-RESTART's rule 2).
func listingLoop(all []proxy.Listing, from time.Time, d time.Duration) string {
	n := 0
	for _, l := range all {
		if l.Refused && !l.At.Before(from) {
			n++
		}
	}
	if bound := checks.ToleratedListings(d); n > bound {
		return fmt.Sprintf("the proxy refused to list its routes (503) for %s, and the controller listed them %d times meanwhile: "+
			"a refused listing retried in a loop, not with backoff (up to %d in that time is a look now and then, and a retry; %s rule 2)",
			d, n, bound, ClauseRestart)
	}
	return ""
}

// listings says what the controller's listings of the proxy's routes since
// from met: what tells a listing given up on after a refusal from no
// listing at all.
func listings(all []proxy.Listing, from time.Time) string {
	refused, answered := 0, 0
	var lastRefused time.Time
	for _, l := range all {
		switch {
		case l.At.Before(from):
		case l.Refused:
			refused++
			lastRefused = l.At
		default:
			answered++
		}
	}
	switch {
	case refused+answered == 0:
		return "the controller never listed the proxy's routes (GET /v1/routes) after it started, and the deleted EdgeRoute was not kept until its route was withdrawn"
	case answered == 0:
		return fmt.Sprintf("the proxy refused every listing of its routes the controller made (%d, the last at %s: 503), "+
			"and the controller never listed again once the proxy answered: a listing that failed was taken as final, "+
			"as if the proxy held no route (%s)", refused, lastRefused.Format("15:04:05.000"), ClauseRestart)
	default:
		return fmt.Sprintf("the proxy refused %d listings of its routes and answered %d: the controller read the table "+
			"and still did not withdraw the route of the deleted EdgeRoute", refused, answered)
	}
}

// snapshot reads the route, waiting until the second changes first so that
// a fresh timestamp would differ from the last one.
func snapshot(ctx context.Context, t *checks.T, r *checks.Route) *unstructured.Unstructured {
	t.Sleep(ctx, time.Until(time.Now().Truncate(time.Second).Add(time.Second+50*time.Millisecond)))
	return r.MustGet(ctx)
}

// quietProblems is what a converged controller's quiet window shows it
// doing: the reconciles its /metrics count (a controller that admits
// polling), then the work seen from outside it, each a cause of its own.
func quietProblems(t *checks.T, w checks.QuietWindow) []string {
	if w.WorkErr != nil {
		t.Logf("the controller's work in the quiet window could not be read: %v", w.WorkErr)
	}
	if w.MetricsErr != nil && len(w.Busy()) == 0 {
		t.Fatalf("no verdict on a converged controller's quiet: %v", w.MetricsErr)
	}
	var problems []string
	window := w.Length().Round(10 * time.Millisecond)
	if w.Reconciles > 0 {
		p := fmt.Sprintf("Reconcile ran %s in %s after the route had converged, with nothing changing (%s, by its /metrics): a converged controller that keeps reconciling",
			checks.Times(w.Reconciles), window, checks.ResultList(w.ByResult))
		t.Cause("%s", p)
		problems = append(problems, p)
	}
	busy := w.Busy()
	for _, b := range busy {
		p := "after the route had converged, " + b + ": a converged controller that works on a timer"
		t.Cause("%s", p)
		problems = append(problems, p)
	}
	if len(busy) > 0 {
		if d := w.Denied(); d != "" {
			problems = append(problems, d)
		}
	}
	if len(problems) == 0 && w.WorkErr == nil {
		t.Logf("in the %s after the route had converged, %s", window, w.IdleFigures())
	}
	return problems
}

func rewritten(r *checks.Route, before, after *unstructured.Unstructured) []string {
	if before.GetResourceVersion() == after.GetResourceVersion() {
		return nil
	}
	return []string{fmt.Sprintf("%s was rewritten with nothing changed (resourceVersion %s -> %s)\n    before: %s\n    after:  %s",
		r, before.GetResourceVersion(), after.GetResourceVersion(), checks.DescribeTimes(before), checks.DescribeTimes(after))}
}
