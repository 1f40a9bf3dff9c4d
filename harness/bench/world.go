package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/checks"
)

// routeName and serviceName name the i-th object of a set ("route", "lat").
func routeName(set string, i int) string   { return fmt.Sprintf("%s-%05d", set, i) }
func serviceName(set string, i int) string { return fmt.Sprintf("%s-svc-%05d", set, i) }

// newRoute is an object of the step's primary kind, with the spec a route
// carries to the proxy.
func newRoute(kind checks.Primary, ns, name, service string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind.GVK)
	u.SetNamespace(ns)
	u.SetName(name)
	u.Object["spec"] = map[string]any{"hostname": name + ".bench.example.com", "prefix": "/", "service": service, "port": int64(8080)}
	return u
}

// newService is headless: envtest allocates ClusterIPs from a /24, so a
// bench with thousands of Services would exhaust it.
func newService(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 8080}}},
	}
}

// parallel runs f(0..n-1) on workers goroutines and returns the first error.
func parallel(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}

// createSet creates n routes of a set, each with its Service when withServices.
func createSet(ctx context.Context, c client.Client, kind checks.Primary, ns, set string, n int, withServices bool) error {
	return parallel(ctx, n, 16, func(ctx context.Context, i int) error {
		if withServices {
			if err := c.Create(ctx, newService(ns, serviceName(set, i))); err != nil {
				return fmt.Errorf("creating Service %s/%s: %w", ns, serviceName(set, i), err)
			}
		}
		if err := c.Create(ctx, newRoute(kind, ns, routeName(set, i), serviceName(set, i))); err != nil {
			return fmt.Errorf("creating %s %s/%s: %w", kind.Kind(), ns, routeName(set, i), err)
		}
		return nil
	})
}

// deleteAll removes the namespace's routes (finalizers too: the controller
// is stopped) and Services, so the next N starts from an empty cluster.
func deleteAll(ctx context.Context, c client.Client, kind checks.Primary, ns string) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(kind.List())
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing %ss in %s: %w", kind.Kind(), ns, err)
	}
	if err := parallel(ctx, len(list.Items), 16, func(ctx context.Context, i int) error {
		u := &list.Items[i]
		if len(u.GetFinalizers()) > 0 {
			patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))
			if err := c.Patch(ctx, u, patch); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("removing the finalizers of %s %s/%s: %w", kind.Kind(), ns, u.GetName(), err)
			}
		}
		if err := c.Delete(ctx, u); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s/%s: %w", kind.Kind(), ns, u.GetName(), err)
		}
		return nil
	}); err != nil {
		return err
	}
	svcs := &corev1.ServiceList{}
	if err := c.List(ctx, svcs, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing Services in %s: %w", ns, err)
	}
	return parallel(ctx, len(svcs.Items), 16, func(ctx context.Context, i int) error {
		if err := c.Delete(ctx, &svcs.Items[i]); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Service %s/%s: %w", ns, svcs.Items[i].Name, err)
		}
		return nil
	})
}

// tracker follows the namespace's objects of the primary kind on a watch: when each was
// first seen Programmed=True for its current generation, and how many
// times any was modified (a status write, when the harness writes nothing).
type tracker struct {
	kind       checks.Primary
	mu         sync.Mutex
	routes     map[string]*seen
	modified   int
	programmed int
	lastAt     time.Time // the last route newly seen Programmed
	err        error
}

type seen struct {
	generation   int64
	programmedAt time.Time // zero: not Programmed for generation
}

// track starts watching; it stops with ctx.
func track(ctx context.Context, c client.WithWatch, kind checks.Primary, ns string) (*tracker, error) {
	t := &tracker{kind: kind, routes: map[string]*seen{}}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(kind.List())
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing %ss in %s: %w", kind.Kind(), ns, err)
	}
	now := time.Now()
	for i := range list.Items {
		t.observe(&list.Items[i], now, false)
	}
	go t.run(ctx, c, ns, list.GetResourceVersion())
	return t, nil
}

func (t *tracker) run(ctx context.Context, c client.WithWatch, ns, rv string) {
	for ctx.Err() == nil {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(t.kind.List())
		w, err := c.Watch(ctx, list, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		if err != nil {
			t.fail(fmt.Errorf("watching %ss in %s: %w", t.kind.Kind(), ns, err))
			return
		}
		for ev := range w.ResultChan() {
			at := time.Now()
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue // a watch error: start again from the last version seen
			}
			rv = u.GetResourceVersion()
			switch ev.Type {
			case watch.Added, watch.Modified:
				t.observe(u, at, ev.Type == watch.Modified)
			case watch.Deleted:
				t.forget(u.GetName())
			}
		}
		w.Stop()
	}
}

func (t *tracker) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = err
	}
}

func (t *tracker) observe(u *unstructured.Unstructured, at time.Time, modified bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if modified {
		t.modified++
	}
	s := t.routes[u.GetName()]
	if s == nil {
		s = &seen{}
		t.routes[u.GetName()] = s
	}
	if gen := u.GetGeneration(); gen != s.generation {
		if !s.programmedAt.IsZero() {
			t.programmed--
		}
		s.generation, s.programmedAt = gen, time.Time{}
	}
	if s.programmedAt.IsZero() && programmed(u) {
		s.programmedAt = at
		t.programmed++
		t.lastAt = at
	}
}

func (t *tracker) forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.routes[name]; s != nil && !s.programmedAt.IsZero() {
		t.programmed--
	}
	delete(t.routes, name)
}

// programmed: Programmed=True stamped with the object's generation.
func programmed(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Programmed" {
			continue
		}
		og, _, _ := unstructured.NestedInt64(m, "observedGeneration")
		return m["status"] == "True" && og == u.GetGeneration()
	}
	return false
}

// counts returns how many routes are Programmed, when the last became so,
// and how many modifications the watch has seen.
func (t *tracker) counts() (programmed int, lastAt time.Time, modified int, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.programmed, t.lastAt, t.modified, t.err
}

// programmedAt says when route name was seen Programmed for generation gen
// (0: its current one).
func (t *tracker) programmedAt(name string, gen int64) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.routes[name]
	if s == nil || s.programmedAt.IsZero() || (gen != 0 && s.generation != gen) {
		return time.Time{}, false
	}
	return s.programmedAt, true
}
