package checks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/proxy"
)

// Condition vocabulary of the status contract (design.md).
const (
	accepted   = "Accepted"
	programmed = "Programmed"
)

var (
	acceptedTrue       = want{Type: accepted, Status: "True", Reason: "Valid"}
	programmedTrue     = want{Type: programmed, Status: "True", Reason: "Synced"}
	serviceNotFound    = want{Type: accepted, Status: "False", Reason: "ServiceNotFound"}
	programmedNotTrue  = want{Type: programmed, NotTrue: true}
	samplePath         = filepath.Join("config", "samples", "net_v1_edgeroute.yaml")
	invalidSpecsToTest = []struct {
		name  string
		edit  func(spec map[string]any)
		field string
	}{
		{"missing hostname", func(s map[string]any) { delete(s, "hostname") }, "spec.hostname"},
		{"port 0", func(s map[string]any) { s["port"] = int64(0) }, "spec.port"},
		{"port 65536", func(s map[string]any) { s["port"] = int64(65536) }, "spec.port"},
		{`prefix "api" (no leading /)`, func(s map[string]any) { s["prefix"] = "api" }, "spec.prefix"},
		{"empty service", func(s map[string]any) { s["service"] = "" }, "spec.service"},
		{`service "Web_1" (not a DNS-1035 label)`, func(s map[string]any) { s["service"] = "Web_1" }, "spec.service"},
	}
)

var crdSchemaCheck = Check{
	ID:      "crd-schema",
	Title:   "the CRD accepts the sample and rejects invalid specs, naming the field",
	SeedRef: "Acceptance 1: a working CRD",
	Points:  10,
	Hint:    "add validation markers (+kubebuilder:validation:...) to the EdgeRouteSpec fields",
	LongHint: `The API server validates EdgeRoutes against the OpenAPI schema that controller-gen
writes from the markers on EdgeRouteSpec. Every field is required; hostname must be an
RFC 1123 DNS subdomain, prefix must start with "/", service must be a DNS-1035 label and
port must lie in 1..65535. Markers such as +kubebuilder:validation:Minimum, Maximum,
Pattern, MinLength and MaxLength express that. Run make manifests in step01/ and read
config/crd/bases/ to see the schema you produced.`,
	Run: func(ctx context.Context, env *Env) error {
		data, err := os.ReadFile(filepath.Join(env.StepDir, samplePath))
		if err != nil {
			return fmt.Errorf("reading the sample %s: %w", samplePath, err)
		}
		sample := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &sample.Object); err != nil {
			return fmt.Errorf("parsing the sample %s: %w", samplePath, err)
		}
		sample.SetNamespace(env.Namespace)
		if err := env.Client.Create(ctx, sample.DeepCopy()); err != nil {
			return fmt.Errorf("the sample %s was rejected:\n  expected: accepted\n  observed: %v", samplePath, err)
		}
		var problems []string
		for _, tc := range invalidSpecsToTest {
			obj := sample.DeepCopy()
			obj.SetName("invalid")
			spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
			tc.edit(spec)
			_ = unstructured.SetNestedMap(obj.Object, spec, "spec")
			err := env.Client.Create(ctx, obj, client.DryRunAll)
			switch {
			case err == nil:
				problems = append(problems, fmt.Sprintf("%s: accepted, expected rejected naming %s", tc.name, tc.field))
			case !apierrors.IsInvalid(err):
				problems = append(problems, fmt.Sprintf("%s: rejected with an unexpected error: %v", tc.name, err))
			case !strings.Contains(err.Error(), tc.field):
				problems = append(problems, fmt.Sprintf("%s: rejected, but the message does not name %s: %v", tc.name, tc.field, err))
			}
		}
		if len(problems) > 0 {
			return fmt.Errorf("invalid EdgeRoutes must be rejected by the schema with a message naming the field:\n  - %s",
				strings.Join(problems, "\n  - "))
		}
		return nil
	},
}

var missingServiceCheck = Check{
	ID:      "missing-service",
	Title:   "an EdgeRoute to a missing Service is Accepted=False/ServiceNotFound and not programmed",
	SeedRef: "Task 2: apply an EdgeRoute pointing at a missing Service",
	Points:  10,
	Hint:    "observe the target Service in Reconcile; report Accepted=False reason ServiceNotFound and keep the route out of the data plane",
	LongHint: `Reconcile must look at the world, not only at the EdgeRoute: read the Service named in
spec.service in the EdgeRoute's namespace. NotFound is an answer, not an error: the route
is not accepted (Accepted=False, reason ServiceNotFound), it must not be Programmed, and
the data plane must not hold it. Every condition carries observedGeneration, the
metadata.generation it describes. If the controller's log says "forbidden", the
ClusterRole generated from your RBAC markers lacks Services.`,
	Run: func(ctx context.Context, env *Env) error {
		r := env.newRoute(ctx, "orphan", "no-such-service", 8080)
		r.eventually(ctx, env.Timeouts.Converge, serviceNotFound, programmedNotTrue)
		env.stays(ctx, env.Timeouts.Absent, "the proxy must hold no route for "+r.String(), func() error {
			if got, ok := env.Proxy.Route(r.key()); ok {
				return problemf("the proxy holds %+v for %s, whose Service does not exist", got, r)
			}
			return nil
		})
		return nil
	},
}

// selfHealACKDelay holds the proxy's ACK so that a status written before the
// push (instead of after its ACK) shows up as earlier than the ACK.
const selfHealACKDelay = 300 * time.Millisecond

var selfHealCheck = Check{
	ID:      "self-heal",
	Title:   "creating the Service flips the route to Accepted=True/Programmed=True with no change to it",
	SeedRef: "Acceptance 2: fixing the underlying Service flips status with no change to the CR",
	Points:  15,
	Hint:    "watch Services and map each to the EdgeRoutes that name it (a field index on spec.service); Owns() never fires for it",
	LongHint: `Creating the Service changes nothing in the EdgeRoute, so an EdgeRoute watch alone never
reconciles it again. Owns(&corev1.Service{}) only sees Services whose ownerReference
points at an EdgeRoute, and the user's Service has none. Watch Services with
Watches(...) and a map function that finds the EdgeRoutes in the Service's namespace
whose spec.service names it: a field index on spec.service makes that a cache lookup.
Report Programmed=True only after the proxy ACKed the push. Skipping Reconcile because
observedGeneration equals generation would also break this: the world changed, the
EdgeRoute did not.`,
	Run: func(ctx context.Context, env *Env) error {
		rec := env.recordStatus(ctx)
		defer rec.close()
		r := env.newRoute(ctx, "heal", "heal-svc", 8080)
		r.eventually(ctx, env.Timeouts.Converge, serviceNotFound, programmedNotTrue)
		gen, spec := r.generationAndSpec(ctx)

		env.Proxy.SetACKDelay(selfHealACKDelay)
		defer env.Proxy.SetACKDelay(0)
		env.createService(ctx, r.Service)
		r.eventually(ctx, env.Timeouts.SelfHeal, acceptedTrue, programmedTrue)

		gen2, spec2 := r.generationAndSpec(ctx)
		if gen2 != gen || !equality.Semantic.DeepEqual(spec, spec2) {
			return problemf("%s: its spec changed (generation %d -> %d): self-healing must need no change to the EdgeRoute", r, gen, gen2)
		}

		var ack time.Time
		for _, ev := range env.Proxy.Events(r.key()) {
			if ev.ACKed() {
				ack = ev.Answered
				break
			}
		}
		if ack.IsZero() {
			return problemf("%s is Programmed=True but the proxy never ACKed a push for it", r)
		}
		// The watch may deliver the version a moment after the GET saw it.
		var seen seenVersion
		env.waitFor(ctx, env.Timeouts.Converge, "the watch to deliver "+r.String()+" Programmed=True", func() error {
			var ok bool
			if seen, ok = rec.firstTrue(r.Name, programmed); !ok {
				return problemf("no Programmed=True version of %s has arrived on the watch yet", r)
			}
			return nil
		})
		if seen.at.Before(ack) {
			return problemf("%s: Programmed=True was written %s before the proxy ACKed the push: status must follow the ACK",
				r, ack.Sub(seen.at).Round(time.Millisecond))
		}
		return nil
	},
}

var serviceRemovedCheck = Check{
	ID:      "service-removed",
	Title:   "deleting the Service turns the route back to ServiceNotFound, not Programmed, and withdraws it",
	SeedRef: "Acceptance 1: status conditions stay accurate",
	Points:  10,
	Hint:    "when the Service is missing, withdraw the route and set Programmed to False too: status must not keep a stale True",
	LongHint: `Level-triggered means the status is derived from the world on every pass. When the
Service disappears, the Service watch triggers a reconcile; Accepted becomes False
(ServiceNotFound), and Programmed must not stay True from an earlier pass: withdraw the
route from the data plane (Remove is idempotent) and set Programmed=False.`,
	Run: func(ctx context.Context, env *Env) error {
		env.createService(ctx, "gone-svc")
		r := env.newRoute(ctx, "gone", "gone-svc", 8080)
		r.eventually(ctx, env.Timeouts.Converge, acceptedTrue, programmedTrue)
		env.proxyHolds(ctx, env.Timeouts.Converge, r.Name)

		env.deleteService(ctx, r.Service)
		r.eventually(ctx, env.Timeouts.Converge, serviceNotFound, programmedNotTrue)
		env.proxyHolds(ctx, env.Timeouts.Converge)
		return nil
	},
}

var specUpdateCheck = Check{
	ID:      "spec-update",
	Title:   "a spec change reaches the proxy and every condition reports the new generation",
	SeedRef: "Acceptance 1: status reports accurate conditions",
	Points:  10,
	Hint:    "stamp every condition with observedGeneration = metadata.generation and push the current spec",
	LongHint: `observedGeneration tells readers which spec a condition describes. After a spec edit,
metadata.generation increases; your conditions must carry the new value once the new
spec was pushed, or kubectl wait and every tool built on conditions will act on stale
information. The push must carry the new port.`,
	Run: func(ctx context.Context, env *Env) error {
		env.createService(ctx, "update-svc")
		r := env.newRoute(ctx, "update", "update-svc", 8080)
		r.eventually(ctx, env.Timeouts.Converge, acceptedTrue, programmedTrue)

		obj, err := r.get(ctx)
		env.ok(err, "reading %s", r)
		patch := client.MergeFrom(obj.DeepCopy())
		env.ok(unstructured.SetNestedField(obj.Object, int64(9090), "spec", "port"), "setting spec.port")
		env.ok(env.Client.Patch(ctx, obj, patch), "changing spec.port of %s", r)
		newGen := obj.GetGeneration()

		env.waitFor(ctx, env.Timeouts.Converge, "the new port to reach the proxy", func() error {
			got, ok := env.Proxy.Route(r.key())
			if !ok || got.Port != 9090 {
				return problemf("the proxy\n  expected: %s with port 9090\n  observed: %+v (present: %v)", r.key(), got, ok)
			}
			return nil
		})
		r.eventually(ctx, env.Timeouts.Converge, acceptedTrue, programmedTrue)
		if gen, _ := r.generationAndSpec(ctx); gen != newGen {
			return problemf("%s: generation %d, want %d: its spec changed again after the edit", r, gen, newGen)
		}
		return nil
	},
}

const nackReason = "listener port conflicts with the admin port (gw10 check)"

var pushFailureCheck = Check{
	ID:      "push-failure",
	Title:   "a NACKed push is Programmed=False/PushFailed with the NACK, never True, until the proxy ACKs",
	SeedRef: "Discussion: report status after the push (xDS ACK/NACK)",
	Points:  15,
	Hint:    "set Programmed only from the push's result: False/PushFailed with the error as message, True only after an ACK; return the error to retry",
	LongHint: `Status must reflect reality: the route is programmed only when the proxy said so. Push
first, then set Programmed from the answer: on a NACK, Programmed=False with reason
PushFailed and the proxy's reason in the message (Accepted stays True: the route itself
is fine). Return the error so the work queue retries with backoff; when the proxy ACKs
a retry, Programmed becomes True. Writing Programmed=True before the push, even for a
moment, is a lie that the check sees.`,
	Run: func(ctx context.Context, env *Env) error {
		rec := env.recordStatus(ctx)
		defer rec.close()
		env.Proxy.SetNACK(routeKey(env, "nacked"), nackReason)
		env.createService(ctx, "nacked-svc")
		r := env.newRoute(ctx, "nacked", "nacked-svc", 8080)
		r.eventually(ctx, env.Timeouts.Converge, acceptedTrue,
			want{Type: programmed, Status: "False", Reason: "PushFailed", Message: nackReason})
		env.stays(ctx, env.Timeouts.Absent, r.String()+" must not be Programmed while the proxy NACKs", func() error {
			return r.hasConditions(ctx, programmedNotTrue)
		})
		if v, ok := rec.firstTrue(r.Name, programmed); ok {
			return problemf("%s was Programmed=True at %s while the proxy NACKed every push:\n  observed: %+v",
				r, v.at.Format("15:04:05.000"), v.conds)
		}

		env.Proxy.SetNACK(r.key(), "")
		r.eventually(ctx, env.Timeouts.Retry, acceptedTrue, programmedTrue)
		return nil
	},
}

var quiescentCheck = Check{
	ID:      "quiescent",
	Title:   "a converged controller writes no status and runs no reconcile",
	SeedRef: "Discussion: Reconcile must be idempotent",
	Points:  10,
	Hint:    "write status only when it changed (keep LastTransitionTime unless the status flips) and do not poll with RequeueAfter",
	LongHint: `Once the world matches the spec, a pass must change nothing: compute the conditions,
compare with what is stored (equality.Semantic.DeepEqual) and skip the write when they
are equal. meta.SetStatusCondition keeps LastTransitionTime when the status does not
change; setting it to now on every pass rewrites the object forever, and each write
triggers another reconcile. Changes arrive through watches, so no RequeueAfter is needed.`,
	Run: func(ctx context.Context, env *Env) error {
		env.createService(ctx, "quiet-svc")
		r := env.newRoute(ctx, "quiet", "quiet-svc", 8080)
		r.eventually(ctx, env.Timeouts.Converge, acceptedTrue, programmedTrue)
		env.waitIdle(ctx)

		// 1. Left alone for a while, a converged controller does nothing:
		// no status write (hot loop) and no reconcile (RequeueAfter polling).
		before, m0 := r.snapshot(ctx)
		time.Sleep(env.Timeouts.Quiet)
		after, m1 := r.snapshot(ctx)
		var problems []string
		if n := m1.ReconcileTotal - m0.ReconcileTotal; n > 0 {
			problems = append(problems, fmt.Sprintf("Reconcile ran %.0f times in %s with nothing changing (controller_runtime_reconcile_total %.0f -> %.0f): polling with RequeueAfter, or a loop",
				n, env.Timeouts.Quiet, m0.ReconcileTotal, m1.ReconcileTotal))
		}
		problems = append(problems, rewritten(r, before, after)...)

		// 2. An event that changes nothing the route depends on (an annotation
		// on its Service, a second after the last write) may trigger a pass,
		// but that pass must not write: a timestamp set to now on every pass
		// shows up here.
		svc := &corev1.Service{}
		env.ok(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: "quiet-svc"}, svc), "reading Service quiet-svc")
		patch := client.MergeFrom(svc.DeepCopy())
		svc.Annotations = map[string]string{"gw10.10xdev.io/poke": "1"}
		env.ok(env.Client.Patch(ctx, svc, patch), "annotating Service quiet-svc")
		time.Sleep(env.Timeouts.Absent)
		env.waitIdle(ctx)
		poked, _ := r.snapshot(ctx)
		problems = append(problems, rewritten(r, after, poked)...)

		if len(problems) > 0 {
			return problemf("a converged controller must not write or loop:\n  - %s", strings.Join(problems, "\n  - "))
		}
		return nil
	},
}

// waitIdle waits until the controller has nothing queued or running.
func (env *Env) waitIdle(ctx context.Context) {
	env.G.Eventually(func() error {
		m, err := env.Controller.Metrics(ctx)
		if err == nil && !m.Idle() {
			err = problemf("the controller still has work: %.0f queued, %.0f running", m.QueueDepth, m.ActiveWorkers)
		}
		return asProblem(err)
	}).WithContext(ctx).WithTimeout(env.Timeouts.Converge).WithPolling(env.Timeouts.Poll).
		Should(gomega.Succeed(), "waiting for the controller's work queue to drain")
}

// snapshot reads the route and the controller's metrics, waiting until the
// second changes first so that a fresh timestamp would differ from the last one.
func (r *route) snapshot(ctx context.Context) (*unstructured.Unstructured, ctrlproc.Metrics) {
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 50*time.Millisecond)))
	obj, err := r.get(ctx)
	r.env.ok(err, "reading %s", r)
	m, err := r.env.Controller.Metrics(ctx)
	r.env.ok(err, "scraping the controller's metrics")
	return obj, m
}

func rewritten(r *route, before, after *unstructured.Unstructured) []string {
	if before.GetResourceVersion() == after.GetResourceVersion() {
		return nil
	}
	return []string{fmt.Sprintf("%s was rewritten with nothing changed (resourceVersion %s -> %s)\n    before: %s\n    after:  %s",
		r, before.GetResourceVersion(), after.GetResourceVersion(), describeTimes(before), describeTimes(after))}
}

func describeTimes(obj *unstructured.Unstructured) string {
	var parts []string
	for _, c := range conditionsOf(obj) {
		parts = append(parts, fmt.Sprintf("%s=%s lastTransitionTime=%s", c.Type, c.Status, c.LastTransitionTime))
	}
	return strings.Join(parts, "; ")
}

var routeDeletedCheck = Check{
	ID:      "route-deleted",
	Title:   "deleting the EdgeRoute withdraws its route from the proxy",
	SeedRef: "Acceptance 1: a working reconciler (the data plane follows deletions)",
	Points:  10,
	Hint:    "when the EdgeRoute is NotFound, withdraw its route from the data plane instead of returning early",
	LongHint: `A deleted EdgeRoute reaches Reconcile as a NotFound. Ignoring it leaves its route in the
proxy forever. Withdraw it (Remove is idempotent, so doing it for a route that was never
programmed is fine). A finalizer is the other way to do this; the reference solution
does not need one because the data plane is keyed by the EdgeRoute's name.`,
	Run: func(ctx context.Context, env *Env) error {
		env.createService(ctx, "bye-svc")
		r := env.newRoute(ctx, "bye", "bye-svc", 8080)
		r.eventually(ctx, env.Timeouts.Converge, acceptedTrue, programmedTrue)
		env.proxyHolds(ctx, env.Timeouts.Converge, r.Name)

		obj, err := r.get(ctx)
		env.ok(err, "reading %s", r)
		env.ok(env.Client.Delete(ctx, obj), "deleting %s", r)
		env.proxyHolds(ctx, env.Timeouts.Converge)
		return nil
	},
}

var restartReconvergeCheck = Check{
	ID:      "restart-reconverge",
	Title:   "a restarted controller reconverges every EdgeRoute from scratch",
	SeedRef: "Acceptance 3: controller restart reconverges from scratch (task 3)",
	Points:  10,
	Hint:    "derive everything from the world on every pass: push even when the status already says Programmed",
	LongHint: `After a restart the controller gets an Added event for every EdgeRoute and must bring
each to the right state from what it observes now, not from what its status claims. The
check kills the controller, then changes the world behind its back: a Service appears,
another disappears, a status is wiped and the proxy loses its whole table (as a
restarted proxy would). Trusting "Programmed=True for this generation" to skip the push
leaves the proxy empty.`,
	Run: func(ctx context.Context, env *Env) error {
		env.createService(ctx, "b-svc")
		env.createService(ctx, "c-svc")
		env.createService(ctx, "d-svc")
		a := env.newRoute(ctx, "a", "a-svc", 8080) // Service appears while down
		b := env.newRoute(ctx, "b", "b-svc", 8080) // Service disappears while down
		c := env.newRoute(ctx, "c", "c-svc", 8080) // status wiped while down
		d := env.newRoute(ctx, "d", "d-svc", 8080) // untouched, but the proxy forgets it
		a.eventually(ctx, env.Timeouts.Converge, serviceNotFound, programmedNotTrue)
		for _, r := range []*route{b, c, d} {
			r.eventually(ctx, env.Timeouts.Converge, acceptedTrue, programmedTrue)
		}
		env.proxyHolds(ctx, env.Timeouts.Converge, "b", "c", "d")
		gens := map[string]int64{}
		for _, r := range []*route{a, b, c, d} {
			gens[r.Name], _ = r.generationAndSpec(ctx)
		}

		env.ok(env.Controller.Kill(ctx), "killing the controller")
		env.createService(ctx, "a-svc")
		env.deleteService(ctx, "b-svc")
		obj, err := c.get(ctx)
		env.ok(err, "reading %s", c)
		_ = unstructured.SetNestedSlice(obj.Object, []any{}, "status", "conditions")
		env.ok(env.Client.Status().Update(ctx, obj), "clearing the status of %s", c)
		env.Proxy.Clear()

		env.ok(env.Controller.Start(ctx), "starting a new controller process")
		a.eventually(ctx, env.Timeouts.Converge, acceptedTrue, programmedTrue)
		b.eventually(ctx, env.Timeouts.Converge, serviceNotFound, programmedNotTrue)
		c.eventually(ctx, env.Timeouts.Converge, acceptedTrue, programmedTrue)
		d.eventually(ctx, env.Timeouts.Converge, acceptedTrue, programmedTrue)
		env.proxyHolds(ctx, env.Timeouts.Converge, "a", "c", "d")
		for _, r := range []*route{a, b, c, d} {
			gen, _ := r.generationAndSpec(ctx)
			if gen != gens[r.Name] {
				return problemf("%s: its spec changed (generation %d -> %d): reconvergence must need no change to any EdgeRoute", r, gens[r.Name], gen)
			}
		}
		return nil
	},
}

func routeKey(env *Env, name string) proxy.Key {
	return proxy.Key{Namespace: env.Namespace, Name: name}
}
