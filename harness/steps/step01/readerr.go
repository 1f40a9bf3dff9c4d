package step01

import (
	"context"
	_ "embed"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"

	"github.com/10xdev/gw10/harness/apifront"
	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/proxy"
)

// readErrSource is the grader's own code around the learner's Reconcile
// for S-READERR (see checks.Probe for why a probe and not the cluster).
//
//go:embed probes/readerr_test.go.tmpl
var readErrSource string

var readErrProbe = checks.Probe{File: "readerr_test.go", Source: readErrSource, Run: "^TestGW10ServiceReadError$"}

// probeAgent is the user agent of the probe's requests: "… call N".
const probeAgent = "gw10-probe/read-error call "

// readFaults are the failures of a Service read the front serves, in turn.
var readFaults = []struct {
	what string
	code int
}{
	{"an internal error (HTTP 500)", 500},
	{"a server timeout (HTTP 504)", 504},
	{"a dropped connection (no answer)", 0},
}

var readErrorCheck = checks.Check{
	ID:      "read-error",
	Title:   "a Service that cannot be read (an error other than NotFound) changes nothing: no push, no withdraw, no status write, and the read is tried again",
	SeedRef: "Task 2: handle the Service read error (the card's defect 2)",
	Points:  10,
	Clauses: []string{ClauseReadErr},
	Probe:   &readErrProbe,
	Hint:    "when reading the Service fails with anything but NotFound, the route's status and data plane must stay as they are, and Reconcile must fail so the queue tries again (S-READERR)",
	Direction: `An error reading the Service that is not NotFound is neither "missing" nor "present".
Ask what a pass that learned nothing new should change, and what Reconcile's result does
with the key (go doc sigs.k8s.io/controller-runtime/pkg/reconcile.TypedReconciler). The
check calls your Reconcile with a client that reads the API server directly, not the
cache.`,
	LongHint: `A read of the Service can fail without the Service being gone: the API server
answers 500 or 504, the connection drops. Such an error says nothing about the Service,
so it is neither "missing" (withdraw, Accepted=False) nor "present" (push): the
reconciler knows nothing new and must change nothing. Return the error: the queue
tries the key again with backoff, and the next pass observes again. Only
apierrors.IsNotFound means the Service is gone. A controller-runtime client reads from
its informer cache, where a failing API server rarely shows, so this check calls your
Reconcile from the grader's own code: it builds an EdgeRouteReconciler whose exported
client fields hold a real, uncached client of the API server (through the harness's
front, which fails every read of a Service) and whose data plane field talks to the
proxy stand-in, and calls Reconcile for a programmed route, and again while it returns
an error, as the queue would. The verdict is read at the front and the proxy: no
status write, no push or withdraw, and the Service read again after it failed. None
of your package's init functions run, and a package-level var initializer that calls
your code is refused (move that code into a function). Keep the type, its exported
Client and Programmer fields (or any exported client.Reader / dataplane.DataPlane
fields) and Reconcile's signature.`,
	Run: func(ctx context.Context, t *checks.T) {
		if t.Probe == nil || t.API == nil {
			t.Fatalf("the harness gave check %s no probe or no API front (a harness bug, please report it)", t.Name())
		}
		createService(ctx, t, "web")
		r := t.NewRoute(ctx, "web", "web", 8080)
		markProgrammed(ctx, t, r)
		dp, err := proxy.Start()
		t.Must(err, "starting a proxy stand-in for the grader's data plane")
		defer func() { _ = dp.Close() }()
		for _, f := range readFaults {
			readFails(ctx, t, r, dp, f.what, f.code)
		}
	},
}

// markProgrammed makes r programmed as a controller would have: its route
// pushed to the proxy stand-in and ACKed (the harness's own push: a
// controller that watches the namespace may push it at the same moment,
// and the two are not its requests at once), then its status written
// with Accepted and Programmed True for its generation (the step's
// invariants read that order).
func markProgrammed(ctx context.Context, t *checks.T, r *checks.Route) {
	gen, spec := r.GenerationAndSpec(ctx)
	var route proxy.Route
	t.Must(runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &route), "reading the spec of %s as a route", r)
	route.Generation = gen
	t.Proxy.PushAsHarness(r.Key(), route)
	// A controller that watches every namespace (a grade's) may write it
	// too: retried on a conflict.
	// A condition already True keeps its lastTransitionTime, as ST-NO-CHURN
	// asks of every writer: the step's invariants read this write too.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj := r.MustGet(ctx)
		now := metav1.Now().UTC().Format(time.RFC3339)
		since := map[string]string{accepted: now, programmed: now}
		stored, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, item := range stored {
			c, _ := item.(map[string]any)
			typ, _ := c["type"].(string)
			if ltt, _ := c["lastTransitionTime"].(string); c["status"] == "True" && ltt != "" && since[typ] != "" {
				since[typ] = ltt
			}
		}
		conds := []any{
			map[string]any{"type": accepted, "status": "True", "reason": "Valid", "message": "the route is valid",
				"observedGeneration": obj.GetGeneration(), "lastTransitionTime": since[accepted]},
			map[string]any{"type": programmed, "status": "True", "reason": "Synced", "message": "the proxy ACKed the route",
				"observedGeneration": obj.GetGeneration(), "lastTransitionTime": since[programmed]},
		}
		if err := unstructured.SetNestedSlice(obj.Object, conds, "status", "conditions"); err != nil {
			return err
		}
		return t.Client.Status().Update(ctx, obj)
	})
	t.Must(err, "writing the status of %s as programmed", r)
}

// readFails runs the grader's code around Reconcile while the front fails
// every read of a Service in r's namespace with code (0: a dropped
// connection), and judges what reached the front and the proxy stand-in dp:
// the probe's own output only explains a failure.
func readFails(ctx context.Context, t *checks.T, r *checks.Route, dp *proxy.Server, what string, code int) {
	front, err := hostOf(t.API.URL())
	t.Must(err, "the API front's address")
	plane, err := hostOf(dp.URL())
	t.Must(err, "the proxy stand-in's address")
	p := readErrProbe
	p.Env = []string{"GW10_PROBE_API=" + t.API.URL(), "GW10_PROBE_CA=" + string(t.API.CAData()), "GW10_PROBE_DATAPLANE=" + dp.URL(),
		"GW10_PROBE_NAMESPACE=" + r.Namespace(), "GW10_PROBE_ROUTE=" + r.Name}
	p.Connect = []string{front, plane}

	start := time.Now()
	t.Logf("the API front fails every read of a Service in %s with %s; the grader's code calls Reconcile for %s", r.Namespace(), what, r.Name)
	remove := t.API.Inject(apifront.Fault{Verbs: []string{"get", "list", "watch"}, Resource: "services", Namespace: r.Namespace(), Code: code})
	res, err := t.Probe(ctx, p)
	remove()
	t.Must(err, "running the grader's code around your Reconcile")
	switch {
	case len(res.Refused) > 0:
		t.Fatalf("the grader's code calls your Reconcile with nothing of yours running before it, but a package-level var initializer "+
			"of your module could run your code (no init function of yours runs in the probe either); move that code into a function:\n  - %s",
			strings.Join(res.Refused, "\n  - "))
	case !res.Compiled:
		t.Fatalf("the grader's code around your Reconcile does not compile against your code: it builds an "+
			"EdgeRouteReconciler of package internal/controller and calls its Reconcile(ctx, ctrl.Request) "+
			"(keep the type, the package and the signature):\n%s", res.Output)
	}

	// The evidence: the probe's requests at the front (its user agent
	// numbers the Reconcile call each belongs to), and the proxy's.
	var writes, firstReads, laterReads []apifront.Request
	for _, q := range t.API.RequestsIn(r.Namespace()) {
		call, ok := probeCall(q.UserAgent)
		switch {
		case !ok || q.At.Before(start):
		case q.Resource == t.Primary.Resource && q.Subresource == "status" && q.Write():
			writes = append(writes, q)
		case q.Resource == "services" && call == 1:
			firstReads = append(firstReads, q)
		case q.Resource == "services":
			laterReads = append(laterReads, q)
		}
	}
	var problems []string
	if pushes := dp.EventsIn(r.Namespace()); len(pushes) > 0 {
		var done []string
		for _, e := range pushes {
			done = append(done, map[string]string{"PUT": "pushed", "DELETE": "withdrew"}[e.Method]+" "+e.Key.String())
		}
		problems = append(problems, fmt.Sprintf("it changed the data plane: the proxy stand-in got %s (an unread Service is neither missing nor present)",
			strings.Join(done, ", ")))
	}
	if len(writes) > 0 {
		problems = append(problems, fmt.Sprintf("it wrote the route's status (the status must stay as it was: nothing was observed): %s",
			strings.Join(describeWrites(writes), "; ")))
	}
	failed := slices.ContainsFunc(firstReads, func(q apifront.Request) bool { return q.Injected })
	switch {
	case len(firstReads) == 0:
		problems = append(problems, "Reconcile never read the Service "+r.Service+" through the client it was given (the front saw no read of it)")
	case failed && len(laterReads) == 0:
		problems = append(problems, "after the read failed, Reconcile returned no error and asked for no requeue: the grader's code, "+
			"as a work queue would, called it again only on an error, and no further read of the Service came: the route would never be tried again")
	}
	if len(problems) == 0 {
		t.Logf("reading the Service failed with %s: Reconcile changed nothing, and the read came again (%d read(s) after the first call)", what, len(laterReads))
		return
	}
	t.Cause("%s broken: with every read of the Service failing with %s, %s", ClauseReadErr, what, problems[0])
	explain := res.Lines("call ", "S-READERR", "panic")
	if len(explain) == 0 {
		explain = lastLines(res.Output, 10)
	}
	t.Fatalf("when reading the Service fails with an error other than NotFound, nothing may change and the route must be tried again "+
		"(the contract's %s). The API front failed every read of Service %s/%s with %s, and the grader's code called Reconcile for %s; "+
		"at the front and the proxy stand-in:\n  - %s\nwhat the grader's code printed (it explains; it does not judge):\n  | %s",
		ClauseReadErr, r.Namespace(), r.Service, what, r, strings.Join(problems, "\n  - "), strings.Join(explain, "\n  | "))
}

// probeCall reads the Reconcile call a probe's request belongs to from its
// user agent; false for a request that is not the probe's.
func probeCall(agent string) (int, bool) {
	n, found := strings.CutPrefix(agent, probeAgent)
	if !found {
		return 0, false
	}
	call, err := strconv.Atoi(n)
	return call, err == nil
}

// hostOf is the host:port of a base URL.
func hostOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		return "", fmt.Errorf("%s names no port: %w", raw, err)
	}
	return u.Host, nil
}

func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}
