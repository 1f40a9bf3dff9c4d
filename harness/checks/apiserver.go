package checks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/evidence"
)

// seenVersion is one version of an object of the step's primary kind as the
// watch delivered it.
type seenVersion struct {
	at         time.Time
	name       string
	rv         string
	generation int64
	conds      []condition
	spec       map[string]any // a copy of its spec
	deleting   bool           // a deletionTimestamp: finalizers hold it
	gone       bool           // the watch's Deleted event: no conditions, no spec
}

// apiserverLog keeps every version of the primary kind's objects and every
// change of the step's watched kinds seen in the check's namespace.
type apiserverLog struct {
	mu       sync.Mutex
	versions []seenVersion
	objects  []ObjectSeen
}

// recordAPIServer watches the check's objects of the step's primary kind
// (Env.Primary) and the kinds the step
// watches (Env.Watched) and records
// every change, with the moment it arrived: each status write is seen,
// however briefly a value lasted, which polling cannot.
func (t *T) recordAPIServer(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.api = &apiserverLog{}

	routes := &unstructured.UnstructuredList{}
	routes.SetGroupVersionKind(t.Primary.List())
	stopPrimary := func() {}
	if w, err := t.Client.Watch(ctx, routes, client.InNamespace(t.Namespace)); err == nil {
		stopPrimary = t.FollowPrimary(ctx, w)
	} else {
		t.Logf("could not watch %ss in %s: %v", t.Primary.Kind(), t.Namespace, err)
	}
	for _, gvk := range t.Watched {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		w, err := t.Client.Watch(ctx, list, client.InNamespace(t.Namespace))
		if err != nil {
			t.Logf("could not watch %ss in %s: %v", gvk.Kind, t.Namespace, err)
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); t.followObjects(ctx, gvk.Kind, w) }()
	}
	return func() { cancel(); wg.Wait(); stopPrimary() }
}

// FollowPrimary records every version of the primary kind's objects that w
// delivers, until stop: recordAPIServer feeds it the API server's watch of
// the check's namespace, and a step's cause tests a watch.FakeWatcher, so
// that a cause reading the status history can be shown to fail without it.
func (t *T) FollowPrimary(ctx context.Context, w watch.Interface) (stop func()) {
	if t.api == nil {
		t.api = &apiserverLog{}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); t.followRoutes(ctx, w) }()
	return func() { cancel(); <-done }
}

func (t *T) followRoutes(ctx context.Context, w watch.Interface) {
	defer w.Stop()
	last := map[string]*unstructured.Unstructured{}
	for {
		ev, ok := next(ctx, w)
		if !ok {
			return
		}
		obj, isObj := ev.Object.(*unstructured.Unstructured)
		if !isObj {
			continue
		}
		now := time.Now()
		name := obj.GetName()
		what := t.Primary.Object(t.Namespace, name)
		prev := last[name]
		switch ev.Type {
		case watch.Added:
			t.Record.Add(evidence.Event{At: now, Source: evidence.APIServer, Kind: evidence.Object, Object: what,
				Text: fmt.Sprintf("%s %s exists (generation %d)", t.Primary.Kind(), name, obj.GetGeneration()), Detail: specText(obj)})
			if len(conditionsOf(obj)) > 0 {
				t.Record.Add(statusEvent(now, what, name, obj))
			}
		case watch.Deleted:
			t.Record.Add(evidence.Event{At: now, Source: evidence.APIServer, Kind: evidence.Object, Object: what,
				Text: fmt.Sprintf("%s %s is gone from the API", t.Primary.Kind(), name)})
			delete(last, name)
			t.api.mu.Lock()
			t.api.versions = append(t.api.versions, seenVersion{at: now, name: name, rv: obj.GetResourceVersion(), gone: true})
			t.api.mu.Unlock()
			continue
		case watch.Modified:
			for _, e := range objectChange(now, t.Primary.Kind(), what, name, prev, obj) {
				t.Record.Add(e)
			}
		default:
			continue
		}
		last[name] = obj
		t.api.mu.Lock()
		spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
		t.api.versions = append(t.api.versions, seenVersion{at: now, name: name, rv: obj.GetResourceVersion(),
			generation: obj.GetGeneration(), conds: conditionsOf(obj), spec: spec, deleting: obj.GetDeletionTimestamp() != nil})
		t.api.mu.Unlock()
	}
}

// objectChange says what changed between two versions of an object of kind
// (the step's primary kind).
func objectChange(now time.Time, kind, what, name string, prev, obj *unstructured.Unstructured) []evidence.Event {
	var out []evidence.Event
	if prev == nil {
		return []evidence.Event{statusEvent(now, what, name, obj)}
	}
	if prev.GetGeneration() != obj.GetGeneration() {
		out = append(out, evidence.Event{At: now, Source: evidence.APIServer, Kind: evidence.Object, Object: what,
			Text: fmt.Sprintf("%s %s spec changed: generation %d", kind, name, obj.GetGeneration()), Detail: specText(obj)})
	}
	if !equality.Semantic.DeepEqual(prev.GetFinalizers(), obj.GetFinalizers()) {
		out = append(out, evidence.Event{At: now, Source: evidence.APIServer, Kind: evidence.Object, Object: what,
			Text: fmt.Sprintf("%s %s finalizers [%s]", kind, name, strings.Join(obj.GetFinalizers(), " "))})
	}
	if obj.GetDeletionTimestamp() != nil && prev.GetDeletionTimestamp() == nil {
		out = append(out, evidence.Event{At: now, Source: evidence.APIServer, Kind: evidence.Object, Object: what,
			Text: fmt.Sprintf("%s %s is being deleted (finalizers hold it)", kind, name)})
	}
	ps, _, _ := unstructured.NestedFieldCopy(prev.Object, "status")
	cs, _, _ := unstructured.NestedFieldCopy(obj.Object, "status")
	switch {
	case !equality.Semantic.DeepEqual(ps, cs):
		out = append(out, statusEvent(now, what, name, obj))
	case len(out) == 0:
		out = append(out, evidence.Event{At: now, Source: evidence.APIServer, Kind: evidence.Status, Object: what, Bad: true,
			Text: fmt.Sprintf("%s %s rewritten with nothing changed (resourceVersion %s)", kind, name, obj.GetResourceVersion())})
	}
	return out
}

func statusEvent(now time.Time, what, name string, obj *unstructured.Unstructured) evidence.Event {
	conds := conditionsOf(obj)
	parts := make([]string, 0, len(conds))
	for _, c := range conds {
		parts = append(parts, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	text := "status of " + name + ": " + strings.Join(parts, ", ")
	if len(parts) == 0 {
		text = "status of " + name + ": no conditions"
	}
	detail, _ := json.MarshalIndent(obj.Object["status"], "", "  ")
	return evidence.Event{At: now, Source: evidence.APIServer, Kind: evidence.Status, Object: what,
		Text: text, Detail: fmt.Sprintf("generation %d, resourceVersion %s\n%s", obj.GetGeneration(), obj.GetResourceVersion(), detail)}
}

func specText(obj *unstructured.Unstructured) string {
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	b, _ := json.Marshal(spec)
	return string(b)
}

// followObjects records the objects of kind on w appearing, changing and
// going, as evidence, and in t.api's objects.
func (t *T) followObjects(ctx context.Context, kind string, w watch.Interface) {
	defer w.Stop()
	for {
		ev, ok := next(ctx, w)
		if !ok {
			return
		}
		obj, isObj := ev.Object.(metav1.Object)
		if !isObj {
			continue
		}
		verb := map[watch.EventType]string{watch.Added: "exists", watch.Modified: "changed", watch.Deleted: "is gone"}[ev.Type]
		if verb == "" {
			continue
		}
		now := time.Now()
		t.Record.Add(evidence.Event{At: now, Source: evidence.APIServer, Kind: evidence.Object,
			Object: kind + " " + t.Namespace + "/" + obj.GetName(), Text: kind + " " + obj.GetName() + " " + verb})
		t.api.mu.Lock()
		t.api.objects = append(t.api.objects, ObjectSeen{At: now, Kind: kind, Name: obj.GetName(),
			Generation: obj.GetGeneration(), Exists: ev.Type != watch.Deleted})
		t.api.mu.Unlock()
	}
}

// firstVersion returns the first version of primary object name that satisfies ok.
func (t *T) firstVersion(name string, ok func(seenVersion) bool) (seenVersion, bool) {
	t.api.mu.Lock()
	defer t.api.mu.Unlock()
	for _, v := range t.api.versions {
		if v.name == name && ok(v) {
			return v, true
		}
	}
	return seenVersion{}, false
}

// isTrue matches a version whose condition typ is True.
func isTrue(typ string) func(seenVersion) bool {
	return func(v seenVersion) bool {
		c := findCondition(v.conds, typ)
		return c != nil && c.Status == "True"
	}
}

// next returns the watch's next event, or false once ctx ends or the watch closes.
func next(ctx context.Context, w watch.Interface) (watch.Event, bool) {
	select {
	case <-ctx.Done():
		return watch.Event{}, false
	case ev, ok := <-w.ResultChan():
		return ev, ok
	}
}

// HalfWritten lists the versions of primary object name, seen since since, whose
// conditions disagree on observedGeneration: a status written a condition at
// a time (two writes in one pass), caught between its writes. A whole status
// describes one generation, so every condition of a write carries it.
func (t *T) HalfWritten(name string, since time.Time) []string {
	t.api.mu.Lock()
	defer t.api.mu.Unlock()
	return halfWritten(t.api.versions, name, since)
}

func halfWritten(versions []seenVersion, name string, since time.Time) []string {
	var out []string
	for _, v := range versions {
		if v.name != name || v.at.Before(since) || len(v.conds) < 2 {
			continue
		}
		var parts []string
		agree := true
		for _, c := range v.conds {
			parts = append(parts, fmt.Sprintf("%s=%s observedGeneration=%d", c.Type, c.Status, c.ObservedGeneration))
			if c.ObservedGeneration != v.conds[0].ObservedGeneration {
				agree = false
			}
		}
		if !agree {
			out = append(out, fmt.Sprintf("%s (resourceVersion %s, generation %d): %s",
				v.at.Format("15:04:05.000"), v.rv, v.generation, strings.Join(parts, ", ")))
		}
	}
	return out
}
