package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/proxy"
)

// EdgeRouteGVK is the learner's API. The harness works with unstructured
// objects so it never depends on the learner's Go types.
var EdgeRouteGVK = schema.GroupVersionKind{Group: "net.10xdev.io", Version: "v1", Kind: "EdgeRoute"}

// route is a handle on one EdgeRoute of a check.
type route struct {
	env     *Env
	Name    string
	Service string
}

func (env *Env) newRoute(ctx context.Context, name, service string, port int64) *route {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(EdgeRouteGVK)
	obj.SetNamespace(env.Namespace)
	obj.SetName(name)
	obj.Object["spec"] = map[string]any{
		"hostname": name + ".example.com",
		"prefix":   "/",
		"service":  service,
		"port":     port,
	}
	env.ok(env.Client.Create(ctx, obj), "creating EdgeRoute %s/%s", env.Namespace, name)
	return &route{env: env, Name: name, Service: service}
}

func (env *Env) createService(ctx context.Context, name string) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace, Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8080}}},
	}
	env.ok(env.Client.Create(ctx, svc), "creating Service %s/%s", env.Namespace, name)
}

func (env *Env) deleteService(ctx context.Context, name string) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace, Name: name}}
	env.ok(env.Client.Delete(ctx, svc), "deleting Service %s/%s", env.Namespace, name)
}

func (r *route) key() proxy.Key { return proxy.Key{Namespace: r.env.Namespace, Name: r.Name} }

func (r *route) String() string { return "EdgeRoute " + r.env.Namespace + "/" + r.Name }

// get reads the EdgeRoute as it stands.
func (r *route) get(ctx context.Context) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(EdgeRouteGVK)
	err := r.env.Client.Get(ctx, client.ObjectKey{Namespace: r.env.Namespace, Name: r.Name}, obj)
	return obj, err
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

// want describes an expected condition. An empty Reason matches any reason;
// NotTrue asks for any status but True (absent counts).
type want struct {
	Type    string
	Status  string
	Reason  string
	NotTrue bool
	Message string // substring
}

func (w want) String() string {
	switch {
	case w.NotTrue:
		return w.Type + " not True"
	case w.Reason != "":
		return fmt.Sprintf("%s=%s reason=%s", w.Type, w.Status, w.Reason)
	default:
		return fmt.Sprintf("%s=%s", w.Type, w.Status)
	}
}

// hasConditions returns nil when the EdgeRoute carries every wanted
// condition, each with observedGeneration equal to its generation; otherwise
// an error saying what was expected and what was observed.
func (r *route) hasConditions(ctx context.Context, wants ...want) error {
	obj, err := r.get(ctx)
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
	return problemf("%s\n  expected: %s, each with observedGeneration = metadata.generation\n  observed: %s\n  wrong:    %s",
		r, strings.Join(ws, ", "), describe(obj), strings.Join(problems, "; "))
}

// eventually waits until r has the wanted conditions.
func (r *route) eventually(ctx context.Context, within time.Duration, wants ...want) {
	r.env.waitFor(ctx, within, r.String(), func() error { return r.hasConditions(ctx, wants...) })
}

// generation returns metadata.generation and the spec, to prove they are untouched.
func (r *route) generationAndSpec(ctx context.Context) (int64, map[string]any) {
	obj, err := r.get(ctx)
	r.env.ok(err, "reading %s", r)
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	return obj.GetGeneration(), spec
}

// proxyHolds waits until the proxy holds exactly the named routes of the
// check's namespace.
func (env *Env) proxyHolds(ctx context.Context, within time.Duration, names ...string) {
	sort.Strings(names)
	env.waitFor(ctx, within, "the proxy's route table", func() error {
		var got []string
		for _, k := range env.Proxy.Keys(env.Namespace) {
			got = append(got, k.Name)
		}
		if strings.Join(got, ",") != strings.Join(names, ",") {
			return problemf("the proxy\n  expected: routes [%s] in namespace %s\n  observed: routes [%s]",
				strings.Join(names, " "), env.Namespace, strings.Join(got, " "))
		}
		return nil
	})
}

// statusRecorder watches the check's EdgeRoutes and keeps every version the
// API server sends, with the time it arrived: it sees each status write,
// however briefly a value lasted, which polling cannot.
type statusRecorder struct {
	mu       sync.Mutex
	versions []seenVersion
	stop     func()
}

type seenVersion struct {
	at         time.Time
	name       string
	generation int64
	conds      []condition
}

func (env *Env) recordStatus(ctx context.Context) *statusRecorder {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(EdgeRouteGVK.GroupVersion().WithKind("EdgeRouteList"))
	w, err := env.Client.Watch(ctx, list, client.InNamespace(env.Namespace))
	env.ok(err, "watching EdgeRoutes in %s", env.Namespace)
	rec := &statusRecorder{stop: w.Stop}
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			obj, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			rec.mu.Lock()
			rec.versions = append(rec.versions, seenVersion{at: time.Now(), name: obj.GetName(), generation: obj.GetGeneration(), conds: conditionsOf(obj)})
			rec.mu.Unlock()
		}
	}()
	return rec
}

// firstTrue returns the first version of name seen with typ True, if any.
func (rec *statusRecorder) firstTrue(name, typ string) (seenVersion, bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, v := range rec.versions {
		if v.name == name {
			if c := findCondition(v.conds, typ); c != nil && c.Status == "True" {
				return v, true
			}
		}
	}
	return seenVersion{}, false
}

func (rec *statusRecorder) close() { rec.stop() }
