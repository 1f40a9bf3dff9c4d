package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/proxy"
)

// Route is a handle on one object of the step's primary kind (Env.Primary:
// step 01's EdgeRoute), which the proxy knows as a route. The harness works
// with unstructured objects so it never depends on the learner's Go types.

type Route struct {
	t       *T
	ns      string // empty: the check's namespace
	Name    string
	Service string
}

// Namespace is the route's namespace: the check's own, or a neighbour's.
func (r *Route) Namespace() string {
	if r.ns != "" {
		return r.ns
	}
	return r.t.Namespace
}

// RouteSpec is what the harness writes into a route's spec.
type RouteSpec struct {
	Hostname, Prefix, Service string
	Port                      int64
}

func (s RouteSpec) object() map[string]any {
	return map[string]any{"hostname": s.Hostname, "prefix": s.Prefix, "service": s.Service, "port": s.Port}
}

// NewRoute creates route name targeting service on port, with a
// hostname made from its name and prefix "/".
func (t *T) NewRoute(ctx context.Context, name, service string, port int64) *Route {
	return t.NewRouteWith(ctx, name, RouteSpec{Hostname: name + ".example.com", Prefix: "/", Service: service, Port: port})
}

// NewRouteWith creates route name with spec.
func (t *T) NewRouteWith(ctx context.Context, name string, spec RouteSpec) *Route {
	return t.NewRouteIn(ctx, t.Namespace, name, spec)
}

// NewRouteIn creates route name with spec in namespace ns (the check's,
// or a neighbour from t.Neighbour).
func (t *T) NewRouteIn(ctx context.Context, ns, name string, spec RouteSpec) *Route {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(t.Primary.GVK)
	obj.SetNamespace(ns)
	obj.SetName(name)
	obj.Object["spec"] = spec.object()
	r := &Route{t: t, ns: ns, Name: name, Service: spec.Service}
	at := time.Now()
	t.Did(evidence.RouteCreated, r.Object(), "creating %s %s (service %s)", t.Primary.Kind(), t.ShortName(ns, name), spec.Service)
	t.Must(t.Client.Create(ctx, obj), "creating %s %s/%s", t.Primary.Kind(), ns, name)
	t.wroteSpec(at, r)
	return r
}

// ShortName is name in the check's namespace, ns/name in a neighbour: how
// an action's text names an object.
func (t *T) ShortName(ns, name string) string {
	if ns == t.Namespace {
		return name
	}
	return ns + "/" + name
}

// Route returns a handle on an existing route.
func (t *T) Route(name, service string) *Route { return &Route{t: t, Name: name, Service: service} }

// Key is the route's key at the proxy.
func (r *Route) Key() proxy.Key { return proxy.Key{Namespace: r.Namespace(), Name: r.Name} }

// Object names the route in evidence: "EdgeRoute ns/name".
func (r *Route) Object() string { return r.t.Primary.Object(r.Namespace(), r.Name) }

func (r *Route) String() string { return r.Object() }

// Get reads the route as it stands.
func (r *Route) Get(ctx context.Context) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(r.t.Primary.GVK)
	err := r.t.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace(), Name: r.Name}, obj)
	return obj, err
}

// MustGet reads the route or ends the check.
func (r *Route) MustGet(ctx context.Context) *unstructured.Unstructured {
	obj, err := r.Get(ctx)
	r.t.Must(err, "reading %s", r)
	return obj
}

// Edit changes the route's spec with edit and returns the new generation.
func (r *Route) Edit(ctx context.Context, what string, edit func(spec map[string]any)) int64 {
	obj := r.MustGet(ctx)
	patch := client.MergeFrom(obj.DeepCopy())
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	edit(spec)
	r.t.Must(unstructured.SetNestedMap(obj.Object, spec, "spec"), "setting the spec of %s", r)
	if s, ok := spec["service"].(string); ok {
		r.Service = s
	}
	at := time.Now()
	r.t.Did(evidence.RouteEdited, r.Object(), "editing %s %s: %s", r.t.Primary.Kind(), r.Name, what)
	r.t.Must(r.t.Client.Patch(ctx, obj, patch), "editing %s (%s)", r, what)
	r.t.wroteSpec(at, r)
	return obj.GetGeneration()
}

// wroteSpec records that the check wrote r's spec at at, naming r.Service
// (History.Specs).
func (t *T) wroteSpec(at time.Time, r *Route) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.specs = append(t.specs, SpecWritten{At: at, Object: r.Object(), Service: r.Service})
}

// Delete deletes the route.
func (r *Route) Delete(ctx context.Context) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(r.t.Primary.GVK)
	obj.SetNamespace(r.Namespace())
	obj.SetName(r.Name)
	r.t.Did(evidence.RouteDeleted, r.Object(), "deleting %s %s", r.t.Primary.Kind(), r.Name)
	r.t.Must(r.t.Client.Delete(ctx, obj), "deleting %s", r)
}

// condition is the part of a metav1.Condition the checks read.
type condition struct {
	Type, Status, Reason, Message string
	ObservedGeneration            int64
	LastTransitionTime            string
}

func conditionsOf(obj *unstructured.Unstructured) []condition {
	raw, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var out []condition
	for _, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		c := condition{}
		c.Type, _ = m["type"].(string)
		c.Status, _ = m["status"].(string)
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		c.LastTransitionTime, _ = m["lastTransitionTime"].(string)
		switch g := m["observedGeneration"].(type) {
		case int64:
			c.ObservedGeneration = g
		case float64:
			c.ObservedGeneration = int64(g)
		}
		out = append(out, c)
	}
	return out
}

func findCondition(conds []condition, typ string) *condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// describe renders the conditions for a failure message.
func describe(obj *unstructured.Unstructured) string {
	conds := conditionsOf(obj)
	if len(conds) == 0 {
		return fmt.Sprintf("no conditions (generation %d)", obj.GetGeneration())
	}
	parts := make([]string, 0, len(conds))
	for _, c := range conds {
		s := fmt.Sprintf("%s=%s reason=%s observedGeneration=%d", c.Type, c.Status, c.Reason, c.ObservedGeneration)
		if c.Message != "" {
			s += fmt.Sprintf(" message=%q", c.Message)
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("generation %d: %s", obj.GetGeneration(), strings.Join(parts, "; "))
}

// Want describes an expected condition. An empty Reason matches any reason;
// NotTrue asks for any status but True (absent counts).
type Want struct {
	Type    string
	Status  string
	Reason  string
	NotTrue bool
	Message string // substring
}

func (w Want) String() string {
	switch {
	case w.NotTrue:
		return w.Type + " not True"
	case w.Reason != "":
		return fmt.Sprintf("%s=%s reason=%s", w.Type, w.Status, w.Reason)
	default:
		return fmt.Sprintf("%s=%s", w.Type, w.Status)
	}
}

// HasConditions returns nil when the route carries every wanted
// condition, each with observedGeneration equal to its generation; otherwise
// an error saying what was expected and what was observed.
func (r *Route) HasConditions(ctx context.Context, wants ...Want) error {
	obj, err := r.Get(ctx)
	if err != nil {
		return fmt.Errorf("reading %s: %w", r, err)
	}
	conds := conditionsOf(obj)
	var problems []string
	for _, w := range wants {
		c := findCondition(conds, w.Type)
		switch {
		case w.NotTrue:
			if c != nil && c.Status == "True" {
				problems = append(problems, w.Type+" is True")
			}
			continue
		case c == nil:
			problems = append(problems, "no "+w.Type+" condition")
			continue
		case c.Status != w.Status:
			problems = append(problems, fmt.Sprintf("%s is %s", w.Type, c.Status))
		case w.Reason != "" && c.Reason != w.Reason:
			problems = append(problems, fmt.Sprintf("%s reason is %q", w.Type, c.Reason))
		case w.Message != "" && !strings.Contains(c.Message, w.Message):
			problems = append(problems, fmt.Sprintf("%s message %q lacks %q", w.Type, c.Message, w.Message))
		}
		if c.ObservedGeneration != obj.GetGeneration() {
			problems = append(problems, fmt.Sprintf("%s observedGeneration is %d, not the generation %d", w.Type, c.ObservedGeneration, obj.GetGeneration()))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	ws := make([]string, len(wants))
	for i, w := range wants {
		ws[i] = w.String()
	}
	return fmt.Errorf("%s\n  expected: %s, each with observedGeneration = metadata.generation\n  observed: %s\n  wrong:    %s",
		r, strings.Join(ws, ", "), describe(obj), strings.Join(problems, "; "))
}

// Eventually waits until r has the wanted conditions.
func (r *Route) Eventually(ctx context.Context, within time.Duration, wants ...Want) {
	if err := r.Converges(ctx, within, wants...); err != nil {
		r.t.Fatalf("%s", err)
	}
}

// Converges is Eventually that returns the failure instead of ending the
// check, for a check that explains it with evidence of its own.
func (r *Route) Converges(ctx context.Context, within time.Duration, wants ...Want) error {
	return r.t.converges(ctx, within, r.String(), func() error { return r.HasConditions(ctx, wants...) },
		func(now time.Time) (doom, bool) { return r.t.settledOnRefusal(r.Key(), now) }, false)
}

// GenerationAndSpec returns metadata.generation and the spec, to prove they are untouched.
func (r *Route) GenerationAndSpec(ctx context.Context) (int64, map[string]any) {
	obj := r.MustGet(ctx)
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	return obj.GetGeneration(), spec
}

// ProxyHolds waits until the proxy holds exactly the named routes of the
// check's namespace.
func (t *T) ProxyHolds(ctx context.Context, within time.Duration, names ...string) {
	sort.Strings(names)
	t.WaitFor(ctx, within, "the proxy's route table", func() error {
		var got []string
		for _, k := range t.Proxy.Keys(t.Namespace) {
			got = append(got, k.Name)
		}
		if strings.Join(got, ",") != strings.Join(names, ",") {
			return fmt.Errorf("the proxy\n  expected: routes [%s] in namespace %s\n  observed: routes [%s]%s",
				strings.Join(names, " "), t.Namespace, strings.Join(got, " "), t.missingRoutes(ctx, names, got))
		}
		return nil
	})
}

// missingRoutes says, for each expected route the proxy lacks, what
// happened to it since the check's last action: never pushed, or pushed and
// refused or withdrawn, next to what its status claims. A status that says
// programmed over a route nothing pushed is a controller trusting itself.
func (t *T) missingRoutes(ctx context.Context, want, got []string) string {
	action, ok := t.Record.LastAction(time.Now())
	if !ok {
		return ""
	}
	held := map[string]bool{}
	for _, n := range got {
		held[n] = true
	}
	events := t.Evidence() // the proxy's pushes and withdraws included
	var b strings.Builder
	for _, n := range want {
		if held[n] {
			continue
		}
		r := t.Route(n, "")
		status := "it no longer exists"
		if obj, err := r.Get(ctx); err == nil {
			status = "its status says " + brief(obj)
		}
		tl := evidence.TallyAfter(events, action.At, r.Object())
		what := "nothing pushed it"
		if tl.Pushes > 0 {
			what = fmt.Sprintf("it was pushed %s (%d refused) and withdrawn %s", Times(tl.Pushes), tl.NACKs, Times(tl.Withdraws))
		}
		fmt.Fprintf(&b, "\n  missing:  %s: %s after %s; %s", n, what, action.Text, status)
	}
	return b.String()
}

// brief renders the conditions as "Accepted=True, Programmed=False".
func brief(obj *unstructured.Unstructured) string {
	conds := conditionsOf(obj)
	if len(conds) == 0 {
		return "nothing (no conditions)"
	}
	parts := make([]string, len(conds))
	for i, c := range conds {
		parts[i] = c.Type + "=" + c.Status
	}
	return strings.Join(parts, ", ")
}

// FirstTrue returns when the watch first delivered r with condition typ True.
func (r *Route) FirstTrue(typ string) (time.Time, []condition, bool) {
	v, ok := r.t.firstVersion(r.Name, isTrue(typ))
	return v.at, v.conds, ok
}

// HalfWritten lists the route's versions since since whose conditions
// describe two generations at once (see T.HalfWritten).
func (r *Route) HalfWritten(since time.Time) []string { return r.t.HalfWritten(r.Name, since) }
