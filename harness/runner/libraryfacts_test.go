package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"golang.org/x/mod/modfile"

	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
)

// A libraryFact is something the chapter, its answers or the instructors'
// guide state about controller-runtime or client-go: the sentence each of
// those files says it in (a phrase that must stay there), and a test that
// reads the fact from the library the workbook pins. A fact that stops
// holding after an upgrade fails here, naming the files that state it.
type libraryFact struct {
	name   string
	stated map[factDoc][]string // the doc -> phrases it must contain
	holds  func(t *testing.T)
}

// A factDoc is one of the default step's docs that state library facts.
type factDoc int

const (
	chapterText  factDoc = iota // the chapter
	referenceDoc                // its page of library reference
	answersDoc                  // its answers
	furtherDoc                  // its second part, for after the checks pass
	guideDoc                    // the instructors' guide
)

// read is the doc's name, relative to the root, and its text (the answers:
// every page of them).
func (d factDoc) read(t *testing.T) (string, string) {
	t.Helper()
	var files []string
	switch d {
	case chapterText:
		files = []string{steps.Default().Chapter}
	case referenceDoc:
		files = []string{steps.Default().Reference}
	case answersDoc:
		files = answerPages(t, steps.Default())
	case furtherDoc:
		files = []string{steps.Default().Further}
	default:
		files = []string{filepath.Join("docs", "instructors.md")}
	}
	var text strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		text.Write(b)
		text.WriteString("\n")
	}
	if d == answersDoc {
		return step.AnswersOf(steps.Default().Chapter), text.String()
	}
	return files[0], text.String()
}

// defaultController is a controller built as the builder builds one
// (crcontroller.TypedOptions with nothing set but the reconciler), read
// through reflection: the queue's constructor and the rate limiter it
// hands the queue are exported fields of controller-runtime's internal
// controller type.
func defaultController(t *testing.T, opts crcontroller.TypedOptions[reconcile.Request]) (workqueue.TypedRateLimiter[reconcile.Request], workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	t.Helper()
	opts.Reconciler = reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	opts.SkipNameValidation = new(true)
	c, err := crcontroller.NewTypedUnmanaged("facts", opts)
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(c)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	rlField, newQueueField := v.FieldByName("RateLimiter"), v.FieldByName("NewQueue")
	if !rlField.IsValid() || !newQueueField.IsValid() {
		t.Fatalf("controller-runtime's controller (%s) has no RateLimiter or NewQueue field any more: read the defaults another way", v.Type())
	}
	rl, ok := rlField.Interface().(workqueue.TypedRateLimiter[reconcile.Request])
	if !ok {
		t.Fatalf("the controller's RateLimiter is a %T", rlField.Interface())
	}
	newQueue, ok := newQueueField.Interface().(func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request])
	if !ok {
		t.Fatalf("the controller's NewQueue is a %T", newQueueField.Interface())
	}
	q := newQueue("facts", rl)
	t.Cleanup(q.ShutDown)
	return rl, q
}

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

// enqueuedPriority hands one event to a handler over a priority queue and
// returns the priority the request was queued with.
func enqueuedPriority(t *testing.T, h handler.EventHandler, send func(handler.EventHandler, workqueue.TypedRateLimitingInterface[reconcile.Request])) int {
	t.Helper()
	q := priorityqueue.New[reconcile.Request]("facts")
	defer q.ShutDown()
	send(h, q)
	if q.Len() != 1 {
		t.Fatalf("the handler queued %d requests, want 1", q.Len())
	}
	_, priority, _ := q.GetWithPriority()
	return priority
}

var libraryFacts = []libraryFact{
	{
		name: "a manager is a cluster.Cluster: its client, cache and field indexer are that interface's",
		stated: map[factDoc][]string{
			referenceDoc: {"A manager is a `cluster.Cluster`", "`GetFieldIndexer`"},
		},
		holds: func(t *testing.T) {
			m, c := reflect.TypeFor[manager.Manager](), reflect.TypeFor[cluster.Cluster]()
			if !m.Implements(c) {
				t.Fatal("manager.Manager is not a cluster.Cluster")
			}
			for _, name := range []string{"GetClient", "GetCache", "GetFieldIndexer"} {
				if _, ok := c.MethodByName(name); !ok {
					t.Errorf("cluster.Cluster has no method %s", name)
				}
			}
		},
	},
	{
		name: "a controller's default queue is controller-runtime's priority queue",
		stated: map[factDoc][]string{
			chapterText:  {"a priority queue"},
			referenceDoc: {"a priority queue"},
			answersDoc:   {"priority queue"},
			guideDoc:     {"priority queue"},
		},
		holds: func(t *testing.T) {
			_, q := defaultController(t, crcontroller.TypedOptions[reconcile.Request]{})
			if _, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); !ok {
				t.Errorf("the default queue is a %T, not a priorityqueue.PriorityQueue", q)
			}
		},
	},
	{
		name: "a retry waits 5 ms, doubling per retry of the same key up to 1000 s",
		stated: map[factDoc][]string{
			referenceDoc: {"5 ms", "1000 s"},
			answersDoc:   {"5 ms", "1000 s"},
			guideDoc:     {"5 ms", "1000 s"},
		},
		holds: func(t *testing.T) {
			rl, _ := defaultController(t, crcontroller.TypedOptions[reconcile.Request]{})
			r := request("a")
			for i, want := range []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond} {
				if got := rl.When(r); got != want {
					t.Fatalf("retry %d of one key waits %v, want %v", i+1, got, want)
				}
			}
			var last time.Duration
			for range 40 {
				last = rl.When(r)
			}
			if last != 1000*time.Second {
				t.Errorf("after 44 retries of one key the wait is %v, want the cap of 1000s", last)
			}
			rl.Forget(r)
			if got := rl.When(r); got != 5*time.Millisecond {
				t.Errorf("after Forget (a pass that succeeds) the next retry waits %v, want 5ms", got)
			}
		},
	},
	{
		name: "the default limiter is per key only: no overall bucket",
		stated: map[factDoc][]string{
			referenceDoc: {"the default counts each key alone"},
			answersDoc:   {"no overall bucket"},
			guideDoc:     {"no overall bucket"},
		},
		holds: func(t *testing.T) {
			rl, _ := defaultController(t, crcontroller.TypedOptions[reconcile.Request]{})
			for i := range 1000 {
				if got := rl.When(request(fmt.Sprintf("r%d", i))); got != 5*time.Millisecond {
					t.Fatalf("the first retry of key %d of 1000 waits %v: something limits all keys together", i+1, got)
				}
			}
		},
	},
	{
		name: "without the priority queue, the limiter adds a bucket of 10 retries a second (burst 100) shared by every key",
		stated: map[factDoc][]string{
			furtherDoc: {"UsePriorityQueue", "10 a second", "a burst of 100"},
			guideDoc:   {"UsePriorityQueue", "10 a second", "burst 100"},
		},
		holds: func(t *testing.T) {
			rl, q := defaultController(t, crcontroller.TypedOptions[reconcile.Request]{UsePriorityQueue: new(false)})
			if _, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
				t.Fatalf("UsePriorityQueue: false still makes a priority queue")
			}
			var waits []time.Duration
			for i := range 150 {
				waits = append(waits, rl.When(request(fmt.Sprintf("r%d", i))))
			}
			if waits[99] > 10*time.Millisecond {
				t.Errorf("the 100th key's first retry waits %v: the burst is not 100", waits[99])
			}
			// The 150th first retry is 50 tokens past the burst: 5 s at 10 a second.
			if waits[149] < 4500*time.Millisecond || waits[149] > 5500*time.Millisecond {
				t.Errorf("the 150th key's first retry waits %v, want about 5s (10 a second past a burst of 100)", waits[149])
			}
		},
	},
	{
		name: "an event for a key that waits out its backoff makes it ready at once",
		stated: map[factDoc][]string{
			guideDoc: {"ready at once"},
		},
		holds: func(t *testing.T) {
			q := priorityqueue.New[reconcile.Request]("facts", func(o *priorityqueue.Opts[reconcile.Request]) {
				o.RateLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Hour, time.Hour)
			})
			defer q.ShutDown()
			q.AddRateLimited(request("a"))
			if n := q.Len(); n != 0 {
				t.Fatalf("a key retried with an hour's backoff is ready at once (%d ready)", n)
			}
			q.Add(request("a")) // the event of the pass's own status write, say
			if n := q.Len(); n != 1 {
				t.Errorf("after an event for it, %d keys are ready, want the waiting key, at once", n)
			}
		},
	},
	{
		name: "the initial list's events and a resync's replays are queued at low priority, a real change at the default",
		stated: map[factDoc][]string{
			referenceDoc: {"low priority"},
			guideDoc:     {"low priority"},
		},
		holds: func(t *testing.T) {
			route := func(rv string) client.Object {
				return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: rv}}
			}
			mapped := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
				return []reconcile.Request{request(o.GetName())}
			})
			for _, h := range []struct {
				name string
				h    handler.EventHandler
			}{{"For's handler (EnqueueRequestForObject)", &handler.EnqueueRequestForObject{}}, {"a map function's handler", mapped}} {
				initial := enqueuedPriority(t, h.h, func(h handler.EventHandler, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
					h.Create(context.Background(), event.CreateEvent{Object: route("1"), IsInInitialList: true}, q)
				})
				resync := enqueuedPriority(t, h.h, func(h handler.EventHandler, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
					h.Update(context.Background(), event.UpdateEvent{ObjectOld: route("1"), ObjectNew: route("1")}, q)
				})
				change := enqueuedPriority(t, h.h, func(h handler.EventHandler, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
					h.Update(context.Background(), event.UpdateEvent{ObjectOld: route("1"), ObjectNew: route("2")}, q)
				})
				created := enqueuedPriority(t, h.h, func(h handler.EventHandler, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
					h.Create(context.Background(), event.CreateEvent{Object: route("1")}, q)
				})
				if initial != handler.LowPriority || resync != handler.LowPriority || change != 0 || created != 0 {
					t.Errorf("%s queues the initial list at %d, a resync at %d, a change at %d, a creation at %d; want %d, %d, 0, 0",
						h.name, initial, resync, change, created, handler.LowPriority, handler.LowPriority)
				}
			}
		},
	},
	{
		name: "a cache read waits for its kind's informer to sync: it never answers from an empty cache",
		stated: map[factDoc][]string{
			chapterText: {"never answers from an empty cache"},
		},
		holds: func(t *testing.T) {
			// An API server that never answers: the Service informer never
			// lists, so it never syncs. A read that answered from the empty
			// cache would say NotFound; one that waits ends with the
			// informer's sync timing out when its context does.
			hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
			defer hang.Close()
			mapper := meta.NewDefaultRESTMapper(nil)
			mapper.Add(corev1.SchemeGroupVersion.WithKind("Service"), meta.RESTScopeNamespace)
			c, err := crcache.New(&rest.Config{Host: hang.URL}, crcache.Options{Scheme: clientgoscheme.Scheme, Mapper: mapper})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { _ = c.Start(ctx) }()
			var err2 error
			for range 100 { // until the cache has started: before, a read says so at once
				readCtx, done := context.WithTimeout(ctx, 200*time.Millisecond)
				err2 = c.Get(readCtx, client.ObjectKey{Namespace: "ns", Name: "web"}, &corev1.Service{})
				done()
				if !errors.As(err2, new(*crcache.ErrCacheNotStarted)) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			switch {
			case apierrors.IsNotFound(err2):
				t.Fatalf("a read before the informer synced answered from the empty cache: %v", err2)
			case !apierrors.IsTimeout(err2):
				t.Fatalf("a read before the informer synced ended with %v, want the wait for the sync to time out with its context", err2)
			}
		},
	},
}

// TestTheChaptersLibraryFactsHold runs what the chapter, its answers, its second part and
// the instructors' guide state about controller-runtime's work queue against
// the library the workbook pins (harness/go.mod and step01/go.mod require the
// same version), and checks that each file still states it.
func TestTheChaptersLibraryFactsHold(t *testing.T) {
	// The facts are read from the harness's controller-runtime; the chapter
	// states them of the learner's.
	learnerMod := filepath.Join(steps.Default().Dir, "go.mod")
	harnessCR, learnerCR := requiredVersion(t, "harness/go.mod", crModule), requiredVersion(t, learnerMod, crModule)
	if harnessCR != learnerCR {
		t.Fatalf("harness/go.mod requires %s %s, %s %s: the facts below are read from the first", crModule, harnessCR, learnerMod, learnerCR)
	}
	for _, f := range libraryFacts {
		t.Run(f.name, func(t *testing.T) {
			for doc, phrases := range f.stated {
				file, text := doc.read(t)
				flat := strings.Join(strings.Fields(text), " ")
				for _, p := range phrases {
					if !strings.Contains(flat, p) {
						t.Errorf("%s does not say %q: say it there, or change this fact's phrases", file, p)
					}
				}
			}
			f.holds(t)
		})
	}
}

const crModule = "sigs.k8s.io/controller-runtime"

// requiredVersion is the version of module path that a go.mod (relative to
// the root) requires.
func requiredVersion(t *testing.T, gomod, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, gomod))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax(gomod, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == path {
			return r.Mod.Version
		}
	}
	t.Fatalf("%s does not require %s", gomod, path)
	return ""
}
