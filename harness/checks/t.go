package checks

import (
	"context"
	"fmt"
	"github.com/10xdev/gw10/harness/words"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/apifront"
	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/proxy"
)

// Controller is the learner's controller process as checks may drive it.
type Controller interface {
	// Kill SIGKILLs it and waits until it is gone.
	Kill(ctx context.Context) error
	// Start runs a new process and waits until it is ready.
	Start(ctx context.Context) error
	// StartIn runs a new process that watches only namespaces (the
	// scaffold's --namespaces flag), and says whether it does: a binary
	// without the flag is started as Start starts it. The run gives its
	// controller back its own scope after the check.
	StartIn(ctx context.Context, namespaces []string) (bool, error)
	// Metrics scrapes controller-runtime's metrics.
	Metrics(ctx context.Context) (ctrlproc.Metrics, error)
	// LogSince returns the controller's log lines since a moment.
	LogSince(t time.Time) []ctrlproc.Line
	// Work reads what the controller's processes have done so far, as the
	// kernel counts it (ctrlproc.Work): evidence from outside the process.
	Work() (ctrlproc.Work, error)
}

// Env is what a check works with; the runner makes one per check.
type Env struct {
	Client client.WithWatch // cluster admin, uncached: assertions never race a cache
	Proxy  *proxy.Server
	// API is the front between the controller and the API server: every
	// request the controller made, as data, and faults to inject (a check
	// that injects one scopes it to its own namespace). Nil where the
	// runner gives none.
	API        *apifront.Front
	Controller Controller
	StepDir    string // the step module, for its samples
	Namespace  string // created for this check, removed after it
	Timeouts   Timeouts
	// Primary is the kind the step's controller reconciles (step.Step.Primary):
	// the recorder follows it, the route handles make it, texts name it.
	Primary Primary
	// Seeds drive the checks that generate sequences: one segment per seed,
	// in order. Fixed are the step's fixed seeds among them (the others are
	// fresh: drawn for this run, printed with a replay command on failure).
	Seeds []int64
	Fixed []int64
	// Budget is how long the generated sequences run: the learner's short
	// planned sequence or the grade's full one (empty: the grade's).
	Budget Budget
	// Prior is a proof an earlier check of the run found that holds for the
	// rest of the run (its Outcome.Blocker): a wait whose own evidence
	// confirms it ends at once, naming it.
	Prior *Prior
	// NewNamespace makes another namespace for the check (removed with the
	// check's own), for what must hold across namespaces: a Service event
	// reaches the routes of its own namespace, and a same-named Service
	// elsewhere changes nothing. Nil where the runner gives none.
	NewNamespace func(ctx context.Context) (string, error)
	// Invariants are the step's clauses that must hold at every event:
	// Execute evaluates them over the whole history once the check has
	// run, and a check may evaluate them sooner (T.Violations).
	Invariants []Invariant
	// Watched are the namespaced kinds, beside the step's Primary, whose objects the check's recorder watches in its namespace:
	// each change is evidence, and History().Objects lists them.
	Watched []schema.GroupVersionKind
	// Triggers are the step's own actions beside every step's
	// (evidence.Generic), for T.Did and the step's Causes (step 01: a
	// Service created, deleted or touched).
	Triggers []evidence.Trigger
	// Probe compiles and runs a grader-owned test beside the step's code
	// (see Probe); nil where the runner gives none.
	Probe ProbeFunc
	// APIRequests is what a recording front between the controller and
	// the API server saw (every request, reads and writes that change
	// nothing included), as the quiet windows read it (WatchQuiet); nil
	// where there is no front.
	APIRequests APIRecord
}

// T is a check's handle, as testing.T is a test's: the environment, the
// evidence record, and the one way to fail. Fatalf ends the check (it must be
// called from the check's goroutine); Errorf records a failure and goes on.
type T struct {
	Env
	Record *evidence.Record

	id       string
	start    time.Time
	activity *activity
	api      *apiserverLog

	mu       sync.Mutex
	failures []string
	violated bool // Violations found some: said once
	causes   []string
	notes    []string
	blocker  *Blocker
	hint     string // the first proof's (doom.go)
	specs    []SpecWritten

	// crdOnce reads the installed CRD for the waits' proofs (doom.go).
	crdOnce  sync.Once
	noStatus bool
}

// NewT makes the handle for one run of check id; zero Timeouts are the
// defaults.
func NewT(id string, env Env) *T {
	if env.Timeouts == (Timeouts{}) {
		env.Timeouts = DefaultTimeouts()
	}
	t := &T{Env: env, Record: &evidence.Record{}, id: id, start: time.Now()}
	t.activity = &activity{t: t}
	return t
}

// Neighbour makes another namespace for the check (see Env.NewNamespace).
func (t *T) Neighbour(ctx context.Context) string {
	if t.NewNamespace == nil {
		t.Fatalf("the harness gave check %s no way to make a second namespace (a harness bug, please report it)", t.id)
	}
	ns, err := t.NewNamespace(ctx)
	t.Must(err, "creating a second namespace for the check")
	return ns
}

// Name is the check's ID.
func (t *T) Name() string { return t.id }

// Helper is there for gomega and other test libraries; it does nothing.
func (t *T) Helper() {}

// Errorf records a failure; the check goes on.
func (t *T) Errorf(format string, args ...any) {
	msg := strings.TrimSpace(fmt.Sprintf(format, args...))
	t.mu.Lock()
	t.failures = append(t.failures, msg)
	t.mu.Unlock()
	t.Record.Add(evidence.Event{Source: evidence.Harness, Kind: evidence.Expectation, Text: words.FirstLine(msg), Detail: msg, Bad: true})
}

// Fatalf records a failure and ends the check.
func (t *T) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	t.FailNow()
}

// FailNow ends the check (runtime.Goexit, as testing.T does).
func (t *T) FailNow() { runtime.Goexit() }

// Failed reports whether the check has failed.
func (t *T) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.failures) > 0
}

// Logf puts a note on the record and in the result.
func (t *T) Logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	t.mu.Lock()
	t.notes = append(t.notes, msg)
	t.mu.Unlock()
	t.Record.Add(evidence.Event{Source: evidence.Harness, Kind: evidence.Note, Text: msg})
}

// Cause adds what the evidence says about a failure: shown as "cause:".
func (t *T) Cause(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.causes {
		if c == msg {
			return
		}
	}
	t.causes = append(t.causes, msg)
}

// Causes are the causes added so far (a step's unit tests read them).
func (t *T) Causes() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.causes)
}

// Expect is gomega's Expect failing this check.
func (t *T) Expect(actual any, extra ...any) types.Assertion {
	return gomega.NewWithT(t).Expect(actual, extra...)
}

// Must ends the check when err is not nil, saying what was being done: for
// the harness's own requests, whose failure is not the learner's.
func (t *T) Must(err error, what string, args ...any) {
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}

// setHint keeps the first hint a proof gave.
func (t *T) setHint(h string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hint == "" {
		t.hint = h
	}
}

// setBlocker keeps the first proof that holds for the rest of the run.
func (t *T) setBlocker(b Blocker) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.blocker == nil {
		t.blocker = &b
	}
}

// Outcome is what a run of a check came to.
type Outcome struct {
	Failed   bool
	Message  string   // the failures, in order
	Causes   []string // drawn from the evidence
	Notes    []string
	Started  time.Time
	Evidence []evidence.Event // everything seen, in time order
	// Blocker is a proof that holds for the rest of the run, which ended a
	// wait: the runner hands it to the later checks as Env.Prior.
	Blocker *Blocker
	// Hint is what to do about the proof that ended a wait, if it says.
	Hint string
}

// Execute runs the check on its own goroutine, with the API server and the
// controller recorded, and returns its outcome once it has ended: by
// returning, by Fatalf, or by ctx ending (the check's own timeout, an exit of
// the controller, Ctrl-C). A panic in the check is a harness bug and says so.
func Execute(ctx context.Context, chk Check, t *T) Outcome {
	stopWatch := t.recordAPIServer(ctx)
	stopScrape := t.activity.run(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if rec := recover(); rec != nil {
				t.Errorf("the harness's check %s panicked (a harness bug, please report it): %v", chk.ID, rec)
			}
		}()
		chk.Run(ctx, t)
	}()
	<-done
	if ctx.Err() == nil && !t.alreadyViolated() {
		if err := t.Violations(); err != nil {
			t.Errorf("%s", err)
		}
	}
	stopScrape()
	stopWatch()
	t.mu.Lock()
	out := Outcome{
		Failed:  len(t.failures) > 0,
		Message: strings.Join(t.failures, "\n"),
		Causes:  append([]string(nil), t.causes...),
		Notes:   append([]string(nil), t.notes...),
		Started: t.start,
		Blocker: t.blocker,
		Hint:    t.hint,
	}
	t.mu.Unlock()
	out.Evidence = t.Evidence()
	return out
}

// Evidence is the record with the proxy's events, the requests the API
// front refused or failed and the controller's log lines about the check's
// namespace merged in, in time order.
func (t *T) Evidence() []evidence.Event {
	rec := &evidence.Record{}
	for _, ev := range t.Record.Events() {
		rec.Add(ev)
	}
	if t.Proxy != nil {
		for _, pe := range t.Proxy.EventsIn(t.Namespace) {
			rec.Add(proxyEvent(t.Primary, pe))
		}
	}
	if t.API != nil {
		for _, q := range t.API.RequestsIn(t.Namespace) {
			if q.At.Before(t.start) || q.Succeeded() || q.Code == 0 && !q.Injected {
				continue
			}
			// A refused request leaves no trace on the watch: the front's
			// record is the only one (a status write refused, a read failed).
			rec.Add(evidence.Event{At: q.At, End: q.Answered, Source: evidence.APIServer, Kind: evidence.Note, Bad: true,
				Object: t.Primary.Object(q.Namespace, q.Name), Text: "the API front: " + q.String()})
		}
	}
	if t.Controller != nil {
		for _, l := range t.Controller.LogSince(t.start) {
			if strings.Contains(l.Text, t.Namespace) || strings.HasPrefix(l.Text, "--- controller") {
				rec.Add(evidence.Event{At: l.At, Source: evidence.Controller, Kind: evidence.Log,
					Text: ctrlproc.Shorten(l.Text, 140), Detail: l.Text, Bad: ctrlproc.IsErrorLine(l.Text)})
			}
		}
	}
	return rec.Events()
}

// proxyEvent is pe as evidence: the proxy's key names an object of the
// step's primary kind.
func proxyEvent(primary Primary, pe proxy.Event) evidence.Event {
	ev := evidence.Event{At: pe.Received, End: pe.Answered, Source: evidence.Proxy, Object: primary.Object(pe.Key.Namespace, pe.Key.Name)}
	switch pe.Method {
	case "PUT":
		ev.Kind = evidence.Push
		if pe.Route != nil {
			ev.Detail = fmt.Sprintf("hostname=%s prefix=%s service=%s port=%d generation=%d",
				pe.Route.Hostname, pe.Route.Prefix, pe.Route.Service, pe.Route.Port, pe.Route.Generation)
		}
		if pe.ACKed() {
			ev.Text = fmt.Sprintf("push %s ACKed", pe.Key.Name)
		} else {
			ev.Text, ev.Bad = fmt.Sprintf("push %s refused: %s", pe.Key.Name, pe.Answer()), true
		}
	default:
		ev.Kind = evidence.Withdraw
		ev.Text = fmt.Sprintf("withdraw %s (%s)", pe.Key.Name, pe.Answer())
		ev.Bad = pe.Status == 0
	}
	return ev
}
