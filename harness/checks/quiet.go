package checks

import (
	"context"
	"errors"
	"fmt"
	"github.com/10xdev/gw10/harness/words"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/10xdev/gw10/harness/apifront"
	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/proxy"
)

// A quiet window is a stretch of time in which the world does not change
// and a correct controller does nothing: a converged route left alone
// (quiescent, sequences), a route that waits for its Service
// (missing-service, self-heal). Its verdict rests on evidence from outside
// the controller's process, each side on its own:
//
//   - the proxy stand-in: a push or withdraw of the window's routes, a
//     read of one of them, and listings of its table above a bounded rate
//     (ToleratedListings: a look for drift now and then is quiet);
//   - the API server: a write of the window's objects, seen on the
//     recorder's watch, and every request a front between the controller
//     and the API server recorded (Env.APIRequests), when there is one;
//   - the kernel: the work of the controller's processes (ctrlproc.Work),
//     read by the harness from /proc, against the figures of an idle
//     controller-runtime manager (IdleWakeups, IdleRun). The window is
//     read in slices (SliceEvery); those around a request the controller sent
//     the API server about other objects (a leader's Lease renewed) are
//     left out when such requests are few (QuietWindow.Judged).
//
// The controller's /metrics are still read: a reconcile counted in the
// window fails it (a controller that admits polling), but a count of 0
// never outweighs the other sides, since the program under test serves its
// own /metrics and can say anything there.

// IdleWakeups and IdleRun are the bounds of a controller with nothing to
// do, per second of a quiet window: above both, its threads are working on
// a timer.
//
// Measured on the 2-core machine (docs/harness.md, "Quiet windows"), per
// second, the harness's scrapes paused: the solution idle (a converged
// route, or a route waiting for its Service) woke 10-25 times and ran
// 0.7-1.6 ms; the solution requeueing every 100 ms, pushing and writing
// nothing (it remembers what it pushed), woke 54-101 times and ran
// 4.1-7 ms (54-68 wakeups with GOMAXPROCS=1); a RequeueAfter of a second
// for one waiting route, 22-34 times and 1.7-1.9 ms, which the bounds do
// not tell from idle. Those counts held involuntary switches too; counting
// only the voluntary (ctrlproc.Work.Wakeups), measured again with three
// busy loops beside the check and without: the solution idle woke 6-29
// times and ran 0.5-1.3 ms, the 100 ms poller (the mutant
// metrics-forged-memo-poller) 68-78 times and 4.8-7.5 ms, its preemptions
// a tenth of that.
const (
	IdleWakeups = 40
	IdleRun     = 2500 * time.Microsecond
)

// idleWakeupsSeen and idleRunSeen are what an idle manager was measured
// doing per second (above), for the failure message.
const (
	idleWakeupsSeen = 15
	idleRunSeen     = time.Millisecond
)

// ListingEvery bounds how often a quiet window lets the controller list the
// proxy's table (GET /v1/routes): a listing reads and changes nothing, and a
// controller that watches the data plane for drift (step 01: S-DRIFT) lists
// it every drift period. ToleratedListings(d) is what a window of length d
// lets pass: two per ListingEvery and two in a shorter window (a look may
// list twice: the orphans' and the table's). More is a loop, and busy. A
// listing followed by a push, a withdraw or a status write is busy anyway:
// those are judged on their own.
const ListingEvery = time.Second

// ToleratedListings is how many listings of the proxy's table a quiet
// window of length d tolerates (see ListingEvery).
func ToleratedListings(d time.Duration) int { return 2 * (1 + int(d/ListingEvery)) }

// FreshFor is how long after a check starts a controller process its
// kernel figures are start-up work (QuietWindow.Fresh). Measured on the
// 2-core machine at load 10: a process a second or two old, converged and
// idle, woke 43 times and ran 2.6 ms a second, over both bounds.
const FreshFor = 10 * time.Second

// MinWorkWindow is the shortest quiet window whose kernel figures are
// judged on their own: over a shorter one, a garbage collection or a
// watch's keep-alive is a large part of the count. Shorter windows are
// added up (QuietTally) until they are this long.
const MinWorkWindow = 2 * time.Second

// APIRequest is one request the controller sent the API server, as a
// recording front between them saw it.
type APIRequest struct {
	At, Answered time.Time
	Verb         string // get, list, watch, create, update, patch, delete
	Namespace    string
	Resource     string // edgeroutes, services, …
	// Subresource is "status" for a status write, else empty.
	Subresource string
	Name        string
}

// APIRecord is what a front between the controller and the API server
// recorded: every request, including those the API server answers without
// a trace on a watch (a read, a write that changes nothing).
type APIRecord interface {
	// Requests returns the controller's requests that arrived in [from, to).
	Requests(from, to time.Time) []APIRequest
}

// FrontRecord is the APIRecord of a recording front; nil without one.
func FrontRecord(f *apifront.Front) APIRecord {
	if f == nil {
		return nil
	}
	return frontRecord{f}
}

type frontRecord struct{ f *apifront.Front }

func (r frontRecord) Requests(from, to time.Time) []APIRequest {
	var out []APIRequest
	for _, q := range r.f.Requests() {
		if q.At.Before(from) || !q.At.Before(to) {
			continue
		}
		out = append(out, APIRequest{At: q.At, Answered: q.Answered, Verb: q.Verb, Namespace: q.Namespace,
			Resource: q.Resource, Subresource: q.Subresource, Name: q.Name})
	}
	return out
}

// QuietWindow is what each side saw during one quiet window.
type QuietWindow struct {
	From, To time.Time
	// What waited or stood converged: the window's objects of the primary
	// kind ("EdgeRoute ns/name"), their proxy keys and namespaces.
	Objects    []string
	Keys       []proxy.Key
	Namespaces []string

	// Proxy: the pushes and withdraws of the window's routes; Listings:
	// the listings of the proxy's table (any: a listing names no route),
	// busy only above ToleratedListings.
	Proxy    []proxy.Event
	Listings []proxy.Listing
	// Reads: the reads of the window's routes (GET of one route, as a
	// withdraw that names the route's uid does first).
	Reads []proxy.Read
	// Writes: the changes of the window's objects seen on the watch.
	Writes []evidence.Event
	// Requests: the front's requests about the window's namespaces, other
	// than watches (nil without a front); Elsewhere: its other requests
	// in the window, about other namespaces or none (a Lease renewed).
	Requests  []APIRequest
	Elsewhere []APIRequest
	// Work: the controller's work in the window, as the kernel counts it,
	// and the same in slices of about SliceEvery; WorkErr when it could not
	// be read.
	Work    ctrlproc.Work
	Slices  []WorkSlice
	WorkErr error
	// Fresh: the check started a controller process less than FreshFor
	// before the window. Its kernel figures are start-up work (the
	// runtime's first collections and scavenging, the informers' first
	// lists), not a timer, and are not judged; every other side is.
	Fresh bool
	// Reconciles: the reconciles the controller's /metrics counted in the
	// window, by result; MetricsErr when they could not be read.
	Reconciles int
	ByResult   map[string]int
	MetricsErr error
}

// Length is how long the window lasted.
func (w QuietWindow) Length() time.Duration { return w.To.Sub(w.From) }

// SliceEvery is how often a quiet window reads the kernel's figures, so
// that the moments around a request elsewhere can be left out (Judged).
const SliceEvery = 200 * time.Millisecond

// A WorkSlice is the controller's work in part of a quiet window.
type WorkSlice struct {
	From, To time.Time
	Work     ctrlproc.Work
}

// TalkMargin is how long before a request elsewhere is sent and after it
// is answered its work is the request's (the client's goroutines woken,
// the answer decoded); a request's own span counts up to TalkSpan.
const (
	TalkMargin = 100 * time.Millisecond
	TalkSpan   = 300 * time.Millisecond
)

// ToleratedTalk is how many requests elsewhere a quiet window of length d
// leaves out of its kernel figures: one a second, what leader election
// renewing its Lease every RetryPeriod (2s by default) stays under. A
// window with more is judged whole, as every window was before: what the
// controller does between its requests counts either way.
func ToleratedTalk(d time.Duration) int { return 1 + int(d/time.Second) }

// minJudged is the least a window judged alone must keep of its slices;
// one that would keep less is judged whole. A tally (QuietTally) keeps
// any: its windows add up until they are long enough.
const minJudged = time.Second

// Judged is the kernel's figures the window's verdict weighs, and their
// length: the whole window, or, when the controller sent the API server
// a few requests about other objects in it (Elsewhere, at most
// ToleratedTalk), the slices away from them. A leader's Lease renewed
// every 2s wakes a Go client's threads some 25 times and runs about 2 ms
// (measured on the 2-core machine): above the idle bounds within one
// quiet window, and no timer of the controller's routes. left says what
// was left out ("" when nothing was).
func (w QuietWindow) Judged() (work ctrlproc.Work, length time.Duration, left string) {
	return w.judged(minJudged)
}

// judged is Judged keeping at least least of the window's slices.
func (w QuietWindow) judged(least time.Duration) (work ctrlproc.Work, length time.Duration, left string) {
	if len(w.Slices) == 0 || len(w.Elsewhere) == 0 || len(w.Elsewhere) > ToleratedTalk(w.Length()) {
		return w.Work, w.Length(), ""
	}
	talking := func(s WorkSlice) bool {
		for _, r := range w.Elsewhere {
			end := r.Answered
			if end.Before(r.At) || end.Sub(r.At) > TalkSpan {
				end = r.At.Add(TalkSpan)
			}
			if s.From.Before(end.Add(TalkMargin)) && s.To.After(r.At.Add(-TalkMargin)) {
				return true
			}
		}
		return false
	}
	skipped := 0
	for _, s := range w.Slices {
		if talking(s) {
			skipped++
			continue
		}
		work = work.Plus(s.Work)
		length += s.To.Sub(s.From)
	}
	if skipped == 0 || length < least {
		return w.Work, w.Length(), ""
	}
	return work, length, fmt.Sprintf("the %s of it around %s it sent the API server about other objects (%s) left out",
		(w.Length() - length).Round(10*time.Millisecond), words.Count(len(w.Elsewhere), "request", "requests"), requestList(w.Elsewhere))
}

// judgedFigures is kernelFigures of what Judged weighs, saying what it
// left out.
func (w QuietWindow) judgedFigures() string {
	work, length, left := w.Judged()
	return withLeft(kernelFigures(work, length), left)
}

// IdleFigures is IdleFigures of what Judged weighs, saying what it left out.
func (w QuietWindow) IdleFigures() string {
	work, length, left := w.Judged()
	return withLeft(IdleFigures(work, length), left)
}

func withLeft(s, left string) string {
	if left == "" {
		return s
	}
	return s + ", " + left
}

// Busy is what the window's outside evidence says the controller did, one
// line per side that saw work (none: it did nothing that can be seen). The
// controller's own metrics are not among them (see Admitted).
func (w QuietWindow) Busy() []string {
	out := w.sideWork()
	if s := w.kernelWork(); s != "" {
		out = append(out, s)
	}
	return out
}

// sideWork is Busy without the kernel's side: what the proxy and the API
// server saw.
func (w QuietWindow) sideWork() []string {
	var out []string
	if s := w.proxyWork(); s != "" {
		out = append(out, s)
	}
	if n := len(w.Reads); n > 0 {
		out = append(out, fmt.Sprintf("the controller read single routes from the proxy (GET /v1/routes/<namespace>/<name>, as a withdraw that names the route's uid does first) %s in %s with nothing changing",
			Times(n), w.Length().Round(10*time.Millisecond)))
	}
	if n := len(w.Listings); n > ToleratedListings(w.Length()) {
		out = append(out, fmt.Sprintf("the controller listed the proxy's routes %s in %s with nothing changing "+
			"(a window that long tolerates %d: a look for drift now and then, not a loop)",
			Times(n), w.Length().Round(10*time.Millisecond), ToleratedListings(w.Length())))
	}
	if s := w.writeWork(); s != "" {
		out = append(out, s)
	}
	if s := w.requestWork(); s != "" {
		out = append(out, s)
	}
	return out
}

// kernelWork is the kernel's side of Busy: KernelWork over a window long
// enough to judge, whose figures were read and are not start-up work.
func (w QuietWindow) kernelWork() string {
	if w.WorkErr != nil || w.Fresh || w.Length() < MinWorkWindow {
		return ""
	}
	work, length, left := w.Judged()
	if s := KernelWork(work, length); s != "" {
		return withLeft(s, left)
	}
	return ""
}

// Admitted is what the controller's /metrics say it did in the window:
// the reconciles it counted, if any ("" when none or unreadable).
func (w QuietWindow) Admitted() string {
	if w.MetricsErr != nil || w.Reconciles <= 0 {
		return ""
	}
	return fmt.Sprintf("its /metrics counted %s in the window (%s)", words.Count(w.Reconciles, "reconcile", "reconciles"), resultList(w.ByResult))
}

// Denied says, beside outside evidence of work, that the controller's
// /metrics counted nothing: what a program that serves its own figures may
// say, and not evidence.
func (w QuietWindow) Denied() string {
	if w.MetricsErr != nil {
		return "its /metrics could not be read after the window"
	}
	if w.Reconciles > 0 {
		return ""
	}
	return "its /metrics counted no reconcile in the window; the harness does not take a controller's word for what it did"
}

func (w QuietWindow) proxyWork() string {
	if len(w.Proxy) == 0 {
		return ""
	}
	pushes, withdraws := 0, 0
	routes := map[string]bool{}
	for _, ev := range w.Proxy {
		if ev.Method == http.MethodPut {
			pushes++
		} else {
			withdraws++
		}
		routes[ev.Key.String()] = true
	}
	var parts []string
	if pushes > 0 {
		parts = append(parts, words.Count(pushes, "push", "pushes"))
	}
	if withdraws > 0 {
		parts = append(parts, words.Count(withdraws, "withdraw", "withdraws"))
	}
	return fmt.Sprintf("the proxy received %s of %s in %s with nothing changing (the last at %s)",
		strings.Join(parts, " and "), strings.Join(sortedKeys(routes), ", "), w.Length().Round(10*time.Millisecond),
		w.Proxy[len(w.Proxy)-1].Received.Format("15:04:05.000"))
}

func (w QuietWindow) writeWork() string {
	if len(w.Writes) == 0 {
		return ""
	}
	last := w.Writes[len(w.Writes)-1]
	return fmt.Sprintf("the API server saw %s of %s in %s with nothing changing; the last: %s",
		words.Count(len(w.Writes), "write", "writes"), strings.Join(w.Objects, ", "), w.Length().Round(10*time.Millisecond), last.Text)
}

func (w QuietWindow) requestWork() string {
	if len(w.Requests) == 0 {
		return ""
	}
	return fmt.Sprintf("the controller sent the API server %s in %s with nothing changing (%s)",
		words.Count(len(w.Requests), "request", "requests"), w.Length().Round(10*time.Millisecond), requestList(w.Requests))
}

// requestList reads "2 update leases, 1 get services" (resultList's way).
func requestList(requests []APIRequest) string {
	verbs := map[string]int{}
	for _, r := range requests {
		what := r.Verb + " " + r.Resource
		if r.Subresource != "" {
			what += "/" + r.Subresource
		}
		verbs[what]++
	}
	return resultList(verbs)
}

// KernelWork says why work done in a window of length d is more than an
// idle controller does ("" when it is not: at or under IdleWakeups or IdleRun
// figure).
func KernelWork(work ctrlproc.Work, d time.Duration) string {
	if d <= 0 {
		return ""
	}
	wakeups, ran := perSecond(work, d)
	if wakeups <= IdleWakeups || ran <= IdleRun {
		return ""
	}
	return kernelFigures(work, d) + "; " + fmt.Sprintf("an idle controller-runtime manager wakes about %d times and runs about %s a second, "+
		"and over %d times and %s a second is work on a timer", idleWakeupsSeen, ms(idleRunSeen), IdleWakeups, ms(IdleRun))
}

// kernelFigures says what the kernel counted in a window of length d.
func kernelFigures(work ctrlproc.Work, d time.Duration) string {
	wakeups, ran := perSecond(work, d)
	return fmt.Sprintf("the controller's threads woke %d times and ran %s in %s with nothing to do (%.0f times and %s a second, "+
		"by the kernel's counts in /proc)",
		work.Wakeups, ms(work.Ran), d.Round(10*time.Millisecond), wakeups, ms(ran))
}

// IdleFigures says what the kernel counted of a controller found idle in a
// window of length d: the counts, and the same per second beside the bounds
// that would have made them busy, so that a reader can compare them.
func IdleFigures(work ctrlproc.Work, d time.Duration) string {
	wakeups, ran := perSecond(work, d)
	return fmt.Sprintf("the controller's threads woke %d times and ran %s (%.0f times and %s a second; busy is over %d and %s): idle",
		work.Wakeups, ms(work.Ran), wakeups, ms(ran), IdleWakeups, ms(IdleRun))
}

// perSecond is work over a window of length d, a second's worth (a window
// under a millisecond counts as one).
func perSecond(work ctrlproc.Work, d time.Duration) (wakeups float64, ran time.Duration) {
	secs := max(d.Seconds(), 0.001)
	return float64(work.Wakeups) / secs, time.Duration(float64(work.Ran) / secs)
}

// ms reads a CPU time in milliseconds, with a decimal under 10 ms.
func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// WatchQuiet leaves the world alone for d and returns what each side saw
// of the routes keys meanwhile. The harness's periodic scrapes of the
// controller's metrics pause for the window (each is a request the
// controller serves: work the kernel would count), and one scrape after it
// counts the window's reconciles. Call it once the controller is idle
// (WaitIdle).
func (t *T) WatchQuiet(ctx context.Context, d time.Duration, keys []proxy.Key) QuietWindow {
	w := QuietWindow{Keys: keys}
	for _, k := range keys {
		w.Objects = append(w.Objects, t.Primary.Object(k.Namespace, k.Name))
		if !slices.Contains(w.Namespaces, k.Namespace) {
			w.Namespaces = append(w.Namespaces, k.Namespace)
		}
	}
	t.activity.pause()
	m0, m0err := t.lastMetrics()
	var w0 ctrlproc.Work
	if t.Controller == nil {
		w.WorkErr = errNoController
	} else {
		w0, w.WorkErr = t.Controller.Work()
	}
	w.From = time.Now()
	w.Fresh = t.startedWithin(w.From, FreshFor)
	w.watchWork(ctx, t, d, w0)
	t.activity.resume(ctx)
	m1, m1err := t.MeasuredMetrics(ctx)
	switch {
	case m0err != nil:
		w.MetricsErr = m0err
	case m1err != nil:
		w.MetricsErr = m1err
	default:
		w.Reconciles, w.ByResult = metricsDelta(m0, m1)
	}
	w.collect(t)
	return w
}

// watchWork waits out the window of length d, reading the controller's work
// every SliceEvery from w0 (read at w.From) on, and sets w.To, w.Work and
// w.Slices; without a first reading (w.WorkErr) it only waits.
func (w *QuietWindow) watchWork(ctx context.Context, t *T, d time.Duration, w0 ctrlproc.Work) {
	end := w.From.Add(d)
	if w.WorkErr != nil {
		t.Sleep(ctx, d)
		w.To = time.Now()
		return
	}
	prev, at := w0, w.From
	for left := d; left > 0 && ctx.Err() == nil; left = time.Until(end) {
		t.Sleep(ctx, min(left, SliceEvery))
		cur, err := t.Controller.Work()
		if err != nil {
			w.WorkErr, w.Slices = err, nil
			t.Sleep(ctx, time.Until(end))
			w.To = time.Now()
			return
		}
		now := time.Now()
		w.Slices = append(w.Slices, WorkSlice{From: at, To: now, Work: cur.Sub(prev)})
		prev, at = cur, now
	}
	w.To, w.Work = at, prev.Sub(w0)
}

// WatchQuietConfirmed is WatchQuiet, with a window that only the kernel's
// figures call busy (nothing seen at the proxy or the API server, no
// reconcile counted) put to a second window of the same length: a timer
// works in both, while a change's aftermath on a loaded machine (a
// collection, the runtime's scavenger) fills one. It returns the second
// window then.
func (t *T) WatchQuietConfirmed(ctx context.Context, d time.Duration, keys []proxy.Key) QuietWindow {
	w := t.WatchQuiet(ctx, d, keys)
	if len(w.sideWork()) > 0 || w.kernelWork() == "" || w.Admitted() != "" || w.MetricsErr != nil {
		return w
	}
	return t.confirmingWindow(ctx, d, keys, fmt.Sprintf("in a first quiet window of %s only the kernel's figures were over the idle bounds (%s)",
		w.Length().Round(10*time.Millisecond), w.judgedFigures()))
}

// confirmingWindow watches one more quiet window of length d once the
// controller is idle, to confirm what the kernel's figures said before
// (seen); when it is idle, a note says both.
func (t *T) confirmingWindow(ctx context.Context, d time.Duration, keys []proxy.Key, seen string) QuietWindow {
	t.WaitIdle(ctx)
	w := t.WatchQuiet(ctx, d, keys)
	if len(w.Busy()) == 0 && w.Admitted() == "" && w.WorkErr == nil {
		t.Logf("%s, but in the %s window after that %s (a loaded machine, not a timer)",
			seen, w.Length().Round(10*time.Millisecond), w.IdleFigures())
	}
	return w
}

// Keys are the routes' proxy keys.
func Keys(routes ...*Route) []proxy.Key {
	out := make([]proxy.Key, len(routes))
	for i, r := range routes {
		out[i] = r.Key()
	}
	return out
}

var errNoController = errors.New("no controller process to read")

// startedWithin says the check started a controller process less than d
// before at.
func (t *T) startedWithin(at time.Time, d time.Duration) bool {
	for _, ev := range t.Record.Events() {
		if ev.Kind == evidence.Action && ev.Trigger == evidence.Restarted && !ev.At.After(at) && at.Sub(ev.At) < d {
			return true
		}
	}
	return false
}

// lastMetrics is the newest scrape, which WaitIdle saw succeed.
func (t *T) lastMetrics() (ctrlproc.Metrics, error) {
	if m, ok := t.activity.metrics(); ok {
		return m, nil
	}
	return ctrlproc.Metrics{}, fmt.Errorf("the controller's metrics could not be read before the window: nothing was measured")
}

// metricsDelta is the reconciles between two scrapes, by result; a
// counter that went down (a new process) counts from 0.
func metricsDelta(m0, m1 ctrlproc.Metrics) (int, map[string]int) {
	by := resultDelta(&m0, &m1)
	n := 0
	for _, v := range by {
		n += v
	}
	return n, by
}

// collect reads the window's proxy events, watch events and front requests.
func (w *QuietWindow) collect(t *T) {
	in := func(at time.Time) bool { return !at.Before(w.From) && at.Before(w.To) }
	if t.Proxy != nil {
		for _, ns := range w.Namespaces {
			for _, ev := range t.Proxy.EventsIn(ns) {
				if (ev.Method == http.MethodPut || ev.Method == http.MethodDelete) && in(ev.Received) && slices.Contains(w.Keys, ev.Key) {
					w.Proxy = append(w.Proxy, ev)
				}
			}
		}
		slices.SortFunc(w.Proxy, func(a, b proxy.Event) int { return a.Received.Compare(b.Received) })
		for _, r := range t.Proxy.Reads() {
			if in(r.At) && slices.Contains(w.Keys, r.Key) {
				w.Reads = append(w.Reads, r)
			}
		}
		for _, l := range t.Proxy.Listings() {
			if in(l.At) {
				w.Listings = append(w.Listings, l)
			}
		}
	}
	for _, ev := range t.Record.Events() {
		if ev.Source == evidence.APIServer && (ev.Kind == evidence.Status || ev.Kind == evidence.Object) &&
			in(ev.At) && slices.Contains(w.Objects, ev.Object) {
			w.Writes = append(w.Writes, ev)
		}
	}
	if t.APIRequests != nil {
		for _, r := range t.APIRequests.Requests(w.From, w.To) {
			switch {
			case r.Verb == "watch":
			case slices.Contains(w.Namespaces, r.Namespace):
				w.Requests = append(w.Requests, r)
			default:
				w.Elsewhere = append(w.Elsewhere, r)
			}
		}
	}
}

// QuietTally adds up the kernel's figures of quiet windows too short to be
// judged alone (sequences' windows after each step) until they are
// MinWorkWindow long in all.
type QuietTally struct {
	work    ctrlproc.Work
	length  time.Duration
	windows int
}

// Add takes a window's kernel figures. Once the windows taken add up to
// MinWorkWindow, it says what they show together ("" when it is no more
// than an idle controller does) and starts again; before, it says nothing.
// A window whose figures could not be read, or that follows a start of the
// controller (QuietWindow.Fresh), is left out; so is one in which the proxy's
// table was listed: a look for drift, judged by ToleratedListings, whose own
// cost is a large part of a window this short and is no timer. A single
// window long enough to be judged alone (Busy) is judged whatever it holds.
func (q *QuietTally) Add(w QuietWindow) string {
	if w.WorkErr != nil || w.Fresh || len(w.Listings) > 0 {
		return ""
	}
	work, length, _ := w.judged(0)
	q.work = q.work.Plus(work)
	q.length += length
	q.windows++
	if q.length < MinWorkWindow {
		return ""
	}
	work, length, n := q.work, q.length, q.windows
	*q = QuietTally{}
	if s := KernelWork(work, length); s != "" {
		return fmt.Sprintf("over the last %d quiet windows (%s in all), %s", n, length.Round(10*time.Millisecond), s)
	}
	return ""
}

// ConfirmKernelWork puts a tally's verdict of work on a timer (summed, as
// QuietTally.Add said it) to one window of Timeouts.Quiet, as long as
// quiescent's, judged alone on every side. The short windows a tally adds
// up come right after a change and carry its aftermath (a collection, the
// last echoes), which a loaded machine can stretch over the idle bounds; a
// timer works in the longer window too. The error says both, and is nil
// when the longer window was idle (a note then says so).
func (t *T) ConfirmKernelWork(ctx context.Context, keys []proxy.Key, summed string) error {
	w := t.confirmingWindow(ctx, t.Timeouts.Quiet, keys, "the kernel's figures of the short quiet windows added up were over the idle bounds")
	busy := w.sideWork()
	if s := w.kernelWork(); s != "" {
		busy = append(busy, w.judgedFigures()) // summed gave the bounds
	}
	if admitted := w.Admitted(); admitted != "" {
		busy = append(busy, admitted)
	}
	length := w.Length().Round(10 * time.Millisecond)
	if len(busy) == 0 {
		if w.WorkErr != nil {
			return fmt.Errorf("%s, and the controller's work in the %s window after them could not be read: %w", summed, length, w.WorkErr)
		}
		return nil
	}
	msg := fmt.Sprintf("%s, and in the %s window after them, judged alone, %s", summed, length, strings.Join(busy, "; "))
	if d := w.Denied(); d != "" {
		msg += " (" + d + ")"
	}
	return errors.New(msg)
}
