package checks

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/proxy"
)

// lyingController serves /metrics that never count a reconcile (as a
// cmd/main.go that rewrites controller_runtime_reconcile_total to 0 does),
// while the kernel's counts of its work grow by work per reading, and
// counts the scrapes it is asked for.
type lyingController struct {
	Controller
	perSec  ctrlproc.Work // what its threads do a second
	mu      sync.Mutex
	start   time.Time // its first reading
	scrapes atomic.Int64
}

func (c *lyingController) Metrics(context.Context) (ctrlproc.Metrics, error) {
	c.scrapes.Add(1)
	return ctrlproc.Metrics{ByResult: map[string]float64{}, MaxWorkers: 1}, nil
}

func (c *lyingController) LogSince(time.Time) []ctrlproc.Line              { return nil }
func (c *lyingController) StartIn(context.Context, []string) (bool, error) { return false, nil }

func (c *lyingController) Work() (ctrlproc.Work, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.start.IsZero() {
		c.start = time.Now()
	}
	return done(c.perSec, time.Since(c.start)), nil
}

// done is what perSec adds up to in d.
func done(perSec ctrlproc.Work, d time.Duration) ctrlproc.Work {
	secs := d.Seconds()
	return ctrlproc.Work{Wakeups: int64(math.Round(float64(perSec.Wakeups) * secs)),
		Ran: time.Duration(float64(perSec.Ran) * secs), CPU: time.Duration(float64(perSec.CPU) * secs)}
}

// rate is a controller's work a second.
func rate(wakeups, msRan float64) ctrlproc.Work {
	return ctrlproc.Work{Wakeups: int64(wakeups), Ran: time.Duration(msRan * float64(time.Millisecond))}
}

func quietT(t *testing.T, c Controller) (*T, *proxy.Server) {
	t.Helper()
	to := DefaultTimeouts()
	to.Scrape = 20 * time.Millisecond
	return scrapedT(t, "quiet", c, to)
}

// pushEvery pushes ns/name to the proxy every period, as a poller would,
// until the returned func is called.
func pushEvery(p *proxy.Server, name string, period time.Duration) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for ctx.Err() == nil {
			push(p, name)
			time.Sleep(period)
		}
	}()
	return cancel
}

// push sends the proxy a push of ns/name, as a controller would; an error
// shows as a push missing from the window.
func push(p *proxy.Server, name string) {
	req, err := http.NewRequest(http.MethodPut, p.URL()+"/v1/routes/ns/"+name,
		bytes.NewReader([]byte(`{"hostname":"a.example.com","prefix":"/","service":"s","port":80,"generation":1}`)))
	if err != nil {
		return
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// TestAQuietWindowTakesNoWordFromTheController: a controller whose /metrics
// count no reconcile while the proxy receives a push of the watched route
// every 100 ms is busy, by the proxy's evidence; the window's verdict says
// its /metrics counted nothing, and that this is not evidence. The
// harness's periodic scrapes pause for the window.
func TestAQuietWindowTakesNoWordFromTheController(t *testing.T) {
	c := &lyingController{}
	ct, p := quietT(t, c)
	if _, err := ct.MeasuredMetrics(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancel := pushEvery(p, "quiet", 100*time.Millisecond)
	defer cancel()
	before := c.scrapes.Load()
	w := ct.WatchQuiet(context.Background(), 600*time.Millisecond, []proxy.Key{{Namespace: "ns", Name: "quiet"}})
	cancel()
	if scraped := c.scrapes.Load() - before; scraped > 3 {
		t.Errorf("the harness scraped the controller %d times during a 600 ms window: a scrape is work the window counts", scraped)
	}
	if w.Admitted() != "" {
		t.Errorf("the metrics counted no reconcile, yet Admitted says %q", w.Admitted())
	}
	busy := strings.Join(w.Busy(), "\n")
	for _, want := range []string{"the proxy received", "pushes of ns/quiet", "with nothing changing"} {
		if !strings.Contains(busy, want) {
			t.Errorf("the window's verdict does not say %q:\n%s", want, busy)
		}
	}
	if d := w.Denied(); !strings.Contains(d, "counted no reconcile") || !strings.Contains(d, "does not take a controller's word") {
		t.Errorf("Denied() = %q", d)
	}
}

// TestAQuietWindowSeesOnlyItsRoutes: a push of another route of the
// namespace (which the check may be changing) is not the window's.
func TestAQuietWindowSeesOnlyItsRoutes(t *testing.T) {
	ct, p := quietT(t, &lyingController{})
	defer pushEvery(p, "other", 50*time.Millisecond)()
	waitUntil(t, func() bool { return len(p.Events(proxy.Key{Namespace: "ns", Name: "other"})) > 0 }) // pushing before the window opens
	w := ct.WatchQuiet(context.Background(), time.Second, []proxy.Key{{Namespace: "ns", Name: "quiet"}})
	if busy := w.Busy(); len(busy) != 0 {
		t.Fatalf("pushes of another route made the window busy: %v", busy)
	}
}

// TestTheKernelSeesAPollerThatPushesNothing: a controller that does
// nothing anyone else sees, but whose threads wake 90 times and run 4.5 ms
// a second (the solution requeueing every 100 ms, remembering what it
// pushed), is busy by the kernel's counts over a window long enough to
// judge; an idle one (15 times, 1 ms) is not.
func TestTheKernelSeesAPollerThatPushesNothing(t *testing.T) {
	const window = MinWorkWindow
	poller := &lyingController{perSec: rate(90, 4.5)}
	ct, _ := quietT(t, poller)
	w := ct.WatchQuiet(context.Background(), window, []proxy.Key{{Namespace: "ns", Name: "quiet"}})
	busy := strings.Join(w.Busy(), "\n")
	// The window is 2s long, or a little more on a loaded machine.
	if !regexp.MustCompile(`the controller's threads woke (179|1[89][0-9]) times and ran 9\.[0-9] ms in 2(\.[0-9]+)?s`).MatchString(busy) {
		t.Errorf("the kernel's verdict does not give the poller's figures:\n%s", busy)
	}
	for _, want := range []string{"with nothing to do", "by the kernel's counts in /proc",
		"an idle controller-runtime manager wakes about 15 times"} {
		if !strings.Contains(busy, want) {
			t.Errorf("the kernel's verdict does not say %q:\n%s", want, busy)
		}
	}

	idle := &lyingController{perSec: rate(15, 1)}
	ct, _ = quietT(t, idle)
	if busy := ct.WatchQuiet(context.Background(), window, nil).Busy(); len(busy) != 0 {
		t.Fatalf("an idle controller is busy: %v", busy)
	}
}

// TestKernelWorkNeedsBothFigures: many wakeups that cost nothing, or a
// burst of CPU with few wakeups (a garbage collection), are not polling;
// both over their bounds are.
func TestKernelWorkNeedsBothFigures(t *testing.T) {
	const d = 3 * time.Second
	for _, c := range []struct {
		wakeups int64
		ran     time.Duration
		busy    bool
	}{
		{75, 5 * time.Millisecond, false},    // the most the solution was seen doing idle: 25 and 1.6 ms a second
		{162, 14 * time.Millisecond, true},   // the least a 100 ms poller that pushes nothing was seen doing (GOMAXPROCS=1)
		{500, 3 * time.Millisecond, false},   // many cheap wakeups
		{30, 40 * time.Millisecond, false},   // one burst of CPU
		{121, 7600 * time.Microsecond, true}, // just over both bounds
		{120, 7600 * time.Microsecond, false},
	} {
		got := KernelWork(ctrlproc.Work{Wakeups: c.wakeups, Ran: c.ran}, d) != ""
		if got != c.busy {
			t.Errorf("%d wakeups and %s in %s: busy %v, want %v", c.wakeups, c.ran, d, got, c.busy)
		}
	}
}

// TestShortQuietWindowsAreAddedUp: a window shorter than MinWorkWindow is
// not judged by the kernel alone; the tally judges the windows once they
// add up to it, and starts again.
func TestShortQuietWindowsAreAddedUp(t *testing.T) {
	from := time.Now()
	window := func(wakeups int64, ran time.Duration) QuietWindow {
		w := QuietWindow{From: from, To: from.Add(800 * time.Millisecond), Work: ctrlproc.Work{Wakeups: wakeups, Ran: ran}}
		return w
	}
	poll := window(72, 4*time.Millisecond) // 90 and 5 ms a second
	if b := poll.Busy(); len(b) != 0 {
		t.Fatalf("an 800 ms window was judged by the kernel alone: %v", b)
	}
	var tally QuietTally
	if s := tally.Add(poll); s != "" {
		t.Fatalf("one window of 800 ms was judged: %s", s)
	}
	if s := tally.Add(poll); s != "" {
		t.Fatalf("1.6 s of windows were judged: %s", s)
	}
	if s := tally.Add(poll); !strings.Contains(s, "over the last 3 quiet windows (2.4s in all)") || !strings.Contains(s, "woke 216 times") {
		t.Fatalf("three windows of a poller: %q", s)
	}
	idle := window(12, 800*time.Microsecond)
	for i := range 6 {
		if s := tally.Add(idle); s != "" {
			t.Fatalf("window %d of an idle controller: %s", i+1, s)
		}
	}
	if s := tally.Add(QuietWindow{From: from, To: from.Add(time.Hour), WorkErr: errNoController}); s != "" {
		t.Fatalf("a window whose work could not be read was judged: %s", s)
	}
	// A window in which the proxy's table was listed (a look for drift) is
	// left out of the tally: three of them, at a poller's figures, are not
	// judged; the same windows without the listing are.
	looked := poll
	looked.Listings = []proxy.Listing{{At: from.Add(400 * time.Millisecond)}}
	for i := range 3 {
		if s := tally.Add(looked); s != "" {
			t.Fatalf("window %d, with a look for drift, was tallied: %s", i+1, s)
		}
	}
	for range 2 {
		tally.Add(poll)
	}
	if s := tally.Add(poll); !strings.Contains(s, "over the last 3 quiet windows") {
		t.Fatalf("three windows of a poller after the looks: %q", s)
	}
	// A window long enough to be judged alone is, listing or not.
	long := QuietWindow{From: from, To: from.Add(3 * time.Second), Work: ctrlproc.Work{Wakeups: 300, Ran: 15 * time.Millisecond},
		Listings: []proxy.Listing{{At: from.Add(time.Second)}}}
	if b := long.Busy(); len(b) != 1 || !strings.Contains(b[0], "woke 300 times") {
		t.Fatalf("a 3 s window of a poller with one look for drift: %v", b)
	}
}

// TestAWriteOrARequestInAQuietWindowIsWork: the API server's side, the
// watch's writes and a front's requests, each makes the window busy and
// says what it saw.
func TestAWriteOrARequestInAQuietWindowIsWork(t *testing.T) {
	from := time.Now()
	w := QuietWindow{From: from, To: from.Add(3 * time.Second), Objects: []string{"EdgeRoute ns/quiet"},
		Writes: []evidence.Event{{At: from.Add(time.Second), Source: evidence.APIServer, Kind: evidence.Status, Object: "EdgeRoute ns/quiet",
			Text: "status of quiet: Accepted=True/Valid"}},
		Requests: []APIRequest{
			{At: from.Add(time.Second), Verb: "get", Namespace: "ns", Resource: "services", Name: "quiet-svc"},
			{At: from.Add(2 * time.Second), Verb: "update", Namespace: "ns", Resource: "edgeroutes", Subresource: "status", Name: "quiet"},
		},
		WorkErr: errNoController,
	}
	busy := strings.Join(w.Busy(), "\n")
	for _, want := range []string{"the API server saw 1 write of EdgeRoute ns/quiet in 3s", "the last: status of quiet",
		"sent the API server 2 requests in 3s", "1 get services", "1 update edgeroutes/status"} {
		if !strings.Contains(busy, want) {
			t.Errorf("the verdict does not say %q:\n%s", want, busy)
		}
	}
}

// apiRecord is a front's record for tests.
type apiRecord []APIRequest

func (a apiRecord) Requests(from, to time.Time) []APIRequest {
	var out []APIRequest
	for _, r := range a {
		if !r.At.Before(from) && r.At.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

// TestAQuietWindowReadsTheFront: the front's requests of the window's
// namespaces are the window's, but for watches (a watch stays open) and
// other namespaces' requests.
func TestAQuietWindowReadsTheFront(t *testing.T) {
	ct, _ := quietT(t, &lyingController{})
	now := time.Now()
	ct.APIRequests = apiRecord{
		{At: now.Add(100 * time.Millisecond), Verb: "get", Namespace: "ns", Resource: "edgeroutes", Name: "quiet"},
		{At: now.Add(150 * time.Millisecond), Verb: "watch", Namespace: "ns", Resource: "edgeroutes"},
		{At: now.Add(200 * time.Millisecond), Verb: "get", Namespace: "elsewhere", Resource: "edgeroutes", Name: "x"},
		{At: now.Add(time.Hour), Verb: "get", Namespace: "ns", Resource: "edgeroutes", Name: "quiet"},
	}
	w := ct.WatchQuiet(context.Background(), 400*time.Millisecond, []proxy.Key{{Namespace: "ns", Name: "quiet"}})
	if len(w.Requests) != 1 || w.Requests[0].Verb != "get" || w.Requests[0].Namespace != "ns" {
		t.Fatalf("the window's requests: %+v", w.Requests)
	}
}

// TestAnHonestPollerIsAdmitted: reconciles the metrics count are the
// controller's own admission, whatever the outside saw.
func TestAnHonestPollerIsAdmitted(t *testing.T) {
	w := QuietWindow{Reconciles: 3, ByResult: map[string]int{"requeue_after": 3}}
	if a := w.Admitted(); a != "its /metrics counted 3 reconciles in the window (3 requeue_after)" {
		t.Errorf("Admitted() = %q", a)
	}
	if d := w.Denied(); d != "" {
		t.Errorf("Denied() = %q for a controller that admitted reconciles", d)
	}
}

// TestAReadOfAWindowsRouteIsWork: a withdraw reads the route's uid first,
// so a controller that withdraws on a timer a route the proxy does not hold
// sends only reads: they are work too; reads of other routes are not.
func TestAReadOfAWindowsRouteIsWork(t *testing.T) {
	ct, p := quietT(t, &lyingController{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			for _, name := range []string{"quiet", "other"} {
				if resp, err := http.Get(p.URL() + "/v1/routes/ns/" + name); err == nil {
					resp.Body.Close()
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	waitUntil(t, func() bool { return len(p.Reads()) > 0 }) // reading before the window opens
	w := ct.WatchQuiet(context.Background(), time.Second, []proxy.Key{{Namespace: "ns", Name: "quiet"}})
	busy := strings.Join(w.Busy(), "\n")
	if !strings.Contains(busy, "read single routes from the proxy") {
		t.Fatalf("reads of the window's route did not make it busy: %q", busy)
	}
	for _, r := range w.Reads {
		if r.Key.Name != "quiet" {
			t.Fatalf("the window counted a read of another route: %+v", r)
		}
	}
}

// TestALookForDriftNowAndThenIsQuiet: a controller that compares the
// proxy's table with the cluster every drift period (S-DRIFT) lists it
// during quiet windows; such listings, read-only and followed by nothing,
// are quiet. A listing storm (many a second) is a loop, and busy.
func TestALookForDriftNowAndThenIsQuiet(t *testing.T) {
	from := time.Now()
	every := func(n int, gap time.Duration) []proxy.Listing {
		out := make([]proxy.Listing, n)
		for i := range out {
			out[i] = proxy.Listing{At: from.Add(time.Duration(i) * gap)}
		}
		return out
	}
	for _, c := range []struct {
		name     string
		length   time.Duration
		listings []proxy.Listing
		busy     bool
	}{
		{"a look every drift period in a long window", 3 * 5 * time.Second, every(3, 5*time.Second), false},
		{"one look in a sequence's short window", 800 * time.Millisecond, every(1, 0), false},
		{"a look that lists twice", 800 * time.Millisecond, every(2, time.Millisecond), false},
		{"a storm in a short window", 800 * time.Millisecond, every(16, 50*time.Millisecond), true},
		{"a storm in a long window", 5 * time.Second, every(100, 50*time.Millisecond), true},
		{"a look every 300 ms", 5 * time.Second, every(16, 300*time.Millisecond), true},
	} {
		w := QuietWindow{From: from, To: from.Add(c.length), Listings: c.listings}
		busy := strings.Join(w.Busy(), "\n")
		if got := busy != ""; got != c.busy {
			t.Errorf("%s (%d listings in %s): busy %v, want %v (%q)", c.name, len(c.listings), c.length, got, c.busy, busy)
		}
		if c.busy && !strings.Contains(busy, "listed the proxy's routes") {
			t.Errorf("%s: the window does not say what it saw: %q", c.name, busy)
		}
	}
}

// listEvery lists the proxy's routes every d, as a controller's sweep
// does, until the test ends.
func listEvery(t *testing.T, p *proxy.Server, d time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			if resp, err := http.Get(p.URL() + "/v1/routes"); err == nil {
				resp.Body.Close()
			}
			time.Sleep(d)
		}
	}()
}

// TestAListingStormAtTheProxyIsBusy: the same through the proxy stand-in.
func TestAListingStormAtTheProxyIsBusy(t *testing.T) {
	ct, p := quietT(t, &lyingController{})
	listEvery(t, p, 20*time.Millisecond)
	waitUntil(t, func() bool { return len(p.Listings()) > 0 }) // listing before the window opens
	w := ct.WatchQuiet(context.Background(), 300*time.Millisecond, []proxy.Key{{Namespace: "ns", Name: "quiet"}})
	if busy := strings.Join(w.Busy(), "\n"); !strings.Contains(busy, "listed the proxy's routes") {
		t.Fatalf("a listing every 20 ms did not make the window busy: %q (%d listings)", busy, len(w.Listings))
	}
}

// TestAWindowRightAfterAStartIsNotJudgedByTheKernel: the kernel's figures
// of a window that follows a start of the controller by the check are a
// new process's start-up work, left out of the tally and of Busy; every
// other side still counts, and a window later than FreshFor is judged.
func TestAWindowRightAfterAStartIsNotJudgedByTheKernel(t *testing.T) {
	tt := &T{Record: &evidence.Record{}}
	tt.Did(evidence.Restarted, "", "starting a new controller process")
	from := time.Now()
	if !tt.startedWithin(from, FreshFor) || tt.startedWithin(from.Add(FreshFor+time.Second), FreshFor) {
		t.Fatal("startedWithin does not tell a window right after a start from a later one")
	}
	busy := QuietWindow{From: from, To: from.Add(3 * time.Second), Work: ctrlproc.Work{Wakeups: 300, Ran: 20 * time.Millisecond}, Fresh: true}
	if b := busy.Busy(); len(b) != 0 {
		t.Fatalf("a fresh process's start-up work was judged: %v", b)
	}
	var tally QuietTally
	for i := range 4 {
		if s := tally.Add(busy); s != "" {
			t.Fatalf("fresh window %d was tallied: %s", i+1, s)
		}
	}
	busy.Proxy = []proxy.Event{{Method: "PUT", Key: proxy.Key{Namespace: "ns", Name: "r"}, Received: from.Add(time.Second)}}
	if b := busy.Busy(); len(b) != 1 || !strings.Contains(b[0], "the proxy received 1 push") {
		t.Fatalf("a push in a fresh window: %v", b)
	}
	busy.Proxy, busy.Fresh = nil, false
	if b := busy.Busy(); len(b) != 1 || !strings.Contains(b[0], "woke 300 times") {
		t.Fatalf("the same figures later: %v", b)
	}
}

// TestATalliedTimerIsConfirmedByALongerWindow: a tally's verdict of work on
// a timer stands only when a window as long as quiescent's, judged alone,
// sees the work again: a poller's does, and the error says both; an idle
// controller's longer window clears the verdict (the short windows' figures
// were a change's aftermath) and a note says so.
func TestATalliedTimerIsConfirmedByALongerWindow(t *testing.T) {
	const summed = "over the last 3 quiet windows (2.4s in all), the controller's threads woke 216 times"
	confirmT := func(c Controller) *T {
		to := DefaultTimeouts()
		to.Scrape, to.Quiet, to.Idle = 20*time.Millisecond, MinWorkWindow, 100*time.Millisecond
		ct, _ := scrapedT(t, "sequences", c, to)
		return ct
	}
	keys := []proxy.Key{{Namespace: "ns", Name: "quiet"}}

	poller := confirmT(&lyingController{perSec: rate(90, 4.5)})
	err := poller.ConfirmKernelWork(context.Background(), keys, summed)
	if err == nil {
		t.Fatal("a poller's longer window cleared the tally's verdict")
	}
	for _, want := range []string{summed, "does not take a controller's word"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the verdict does not say %q:\n%v", want, err)
		}
	}
	// The window is 2s long, or a little more on a loaded machine.
	if !regexp.MustCompile(`in the 2(\.[0-9]+)?s window after them, judged alone, the controller's threads woke (179|1[89][0-9]) times`).MatchString(err.Error()) {
		t.Errorf("the verdict does not give the longer window's figures:\n%v", err)
	}
	if n := strings.Count(err.Error(), "an idle controller-runtime manager"); n > 1 {
		t.Errorf("the verdict names the idle bounds %d times:\n%v", n, err)
	}

	idle := confirmT(&lyingController{perSec: rate(15, 1)})
	if err := idle.ConfirmKernelWork(context.Background(), keys, summed); err != nil {
		t.Fatalf("an idle controller's longer window did not clear the verdict: %v", err)
	}
	// The window is 2s long, or a little more on a loaded machine.
	if notes := notesOf(idle); !regexp.MustCompile(`in the 2(\.[0-9]+)?s window after that the controller's threads woke 3[0-2] times`).MatchString(notes) || !strings.Contains(notes, "not a timer") {
		t.Errorf("no note says the longer window was idle:\n%s", notes)
	}
}

// scriptedController works at first a second from its first reading for
// firstFor, then at then a second.
type scriptedController struct {
	lyingController
	first, then ctrlproc.Work
	firstFor    time.Duration
	readings    int
}

func (c *scriptedController) Work() (ctrlproc.Work, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.start.IsZero() {
		c.start = time.Now()
	}
	c.readings++
	since := time.Since(c.start)
	if since <= c.firstFor {
		return done(c.first, since), nil
	}
	return done(c.first, c.firstFor).Plus(done(c.then, since-c.firstFor)), nil
}

// windows is how many windows of length d the controller's readings are
// (one at the start, then one every SliceEvery).
func (c *scriptedController) windows(d time.Duration) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return float64(c.readings) / float64(1+int(d/SliceEvery))
}

// TestAWindowBusyByTheKernelAloneIsConfirmedByASecond: a window that only
// the kernel's figures call busy is watched again; the second window's
// verdict stands. A burst in the first window alone is cleared with a note;
// a poller busy in both is busy; a window busy at the proxy is not watched
// again.
func TestAWindowBusyByTheKernelAloneIsConfirmedByASecond(t *testing.T) {
	const window = MinWorkWindow
	busy, idle := rate(90, 4.5), rate(15, 1)
	keys := []proxy.Key{{Namespace: "ns", Name: "quiet"}}
	confirmT := func(c Controller) (*T, *proxy.Server) {
		to := DefaultTimeouts()
		to.Scrape, to.Idle = 20*time.Millisecond, 100*time.Millisecond
		ct, p := scrapedT(t, "quiescent", c, to)
		ct.WaitIdle(context.Background()) // a check watches once the controller is idle, its metrics read
		return ct, p
	}

	burst := &scriptedController{first: busy, then: idle, firstFor: window}
	ct, _ := confirmT(burst)
	if b := ct.WatchQuietConfirmed(context.Background(), window, keys).Busy(); len(b) != 0 {
		t.Errorf("a burst in the first window only was not cleared by the second: %v", b)
	}
	if notes := notesOf(ct); !strings.Contains(notes, "only the kernel's figures were over the idle bounds") || !regexp.MustCompile(`in the [0-9.]+s window after that the controller's threads woke 3[0-2] times`).MatchString(notes) {
		t.Errorf("no note says the second window was idle:\n%s", notes)
	}

	poller := &scriptedController{first: busy, then: busy}
	ct, _ = confirmT(poller)
	if b := strings.Join(ct.WatchQuietConfirmed(context.Background(), window, keys).Busy(), "\n"); !regexp.MustCompile(`woke (179|1[89][0-9]) times`).MatchString(b) {
		t.Errorf("a poller busy in both windows: %q", b)
	}
	if n := poller.windows(window); n < 1.5 || n > 2.5 {
		t.Errorf("a poller's figures were read for %.1f windows, want 2", n)
	}

	pusher := &scriptedController{first: busy, then: idle, firstFor: window}
	ct, p := confirmT(pusher)
	defer pushEvery(p, "quiet", 200*time.Millisecond)()
	waitUntil(t, func() bool { return len(p.Events(keys[0])) > 0 })
	w := ct.WatchQuietConfirmed(context.Background(), window, keys)
	if n := pusher.windows(window); n > 1.5 || len(w.Proxy) == 0 {
		t.Errorf("a window busy at the proxy was watched again (%.1f windows read) or lost its pushes (%d)", n, len(w.Proxy))
	}
}

// notesOf is what the check's notes say, one per line.
func notesOf(ct *T) string {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	return strings.Join(ct.notes, "\n")
}

// TestIdleFiguresGiveTheRatesBesideTheBounds: an idle note's totals over a
// window come with the same per second, beside the bounds they are judged
// against, so that 74 wakes in 3 s reads as under 40 a second.
func TestIdleFiguresGiveTheRatesBesideTheBounds(t *testing.T) {
	got := IdleFigures(ctrlproc.Work{Wakeups: 74, Ran: 3700 * time.Microsecond}, 3*time.Second)
	want := "the controller's threads woke 74 times and ran 3.7 ms (25 times and 1.2 ms a second; busy is over 40 and 2.5 ms): idle"
	if got != want {
		t.Errorf("IdleFigures = %q, want %q", got, want)
	}
	if got := IdleFigures(ctrlproc.Work{Wakeups: 3}, 0); !strings.Contains(got, "woke 3 times") {
		t.Errorf("IdleFigures of an empty window = %q", got)
	}
}

// slicedWindow is a 3s window read every SliceEvery, its controller doing
// perSec in every slice and, in the slices that overlap [burstFrom,
// burstTo), burst more.
func slicedWindow(from time.Time, perSec, burst ctrlproc.Work, burstFrom, burstTo time.Duration) QuietWindow {
	w := QuietWindow{From: from, To: from.Add(3 * time.Second)}
	for at := time.Duration(0); at < 3*time.Second; at += SliceEvery {
		s := WorkSlice{From: from.Add(at), To: from.Add(at + SliceEvery), Work: done(perSec, SliceEvery)}
		if at < burstTo && at+SliceEvery > burstFrom {
			s.Work = s.Work.Plus(burst)
		}
		w.Slices = append(w.Slices, s)
		w.Work = w.Work.Plus(s.Work)
	}
	return w
}

// TestTheMomentsAroundARequestElsewhereAreLeftOut: a leader renewing its
// Lease (a request about another namespace, its client's work around it)
// is not a timer of the routes: the slices around the request are left out
// and the rest is judged. A poller that also renews its Lease is still
// busy; so is a controller whose requests elsewhere are more than a few,
// judged whole.
func TestTheMomentsAroundARequestElsewhereAreLeftOut(t *testing.T) {
	from := time.Now()
	renew := func(at time.Duration) APIRequest {
		return APIRequest{At: from.Add(at), Answered: from.Add(at + 5*time.Millisecond), Verb: "update",
			Namespace: "gw10-lease", Resource: "leases", Name: "edgeroute.net.10xdev.io"}
	}
	leader := slicedWindow(from, rate(15, 1), rate(60, 5), 900*time.Millisecond, 1100*time.Millisecond)
	if b := leader.Busy(); len(b) != 1 {
		t.Fatalf("without the request, the renewal's work is not busy (the test's figures are wrong): %v", b)
	}
	leader.Elsewhere = []APIRequest{renew(time.Second)}
	if b := leader.Busy(); len(b) != 0 {
		t.Fatalf("a Lease renewed once in a quiet window made it busy: %v", b)
	}
	if idle := leader.IdleFigures(); !strings.Contains(idle, "left out") || !strings.Contains(idle, "around 1 request it sent the API server about other objects (1 update leases) left out") {
		t.Errorf("the idle figures do not say what was left out: %s", idle)
	}
	work, length, _ := leader.Judged()
	if length >= 3*time.Second || length < 2*time.Second {
		t.Errorf("judged %s of a 3s window around one request", length)
	}
	if work.Wakeups >= leader.Work.Wakeups {
		t.Errorf("the renewal's slices were not left out: %d of %d wakeups judged", work.Wakeups, leader.Work.Wakeups)
	}

	poller := slicedWindow(from, rate(90, 4.5), rate(60, 5), 900*time.Millisecond, 1100*time.Millisecond)
	poller.Elsewhere = leader.Elsewhere
	if b := strings.Join(poller.Busy(), "\n"); !strings.Contains(b, "work on a timer") || !strings.Contains(b, "left out") {
		t.Errorf("a poller that renews a Lease is not busy on the rest of the window: %q", b)
	}

	chatty := slicedWindow(from, rate(15, 1), rate(60, 5), 0, 3*time.Second)
	for at := time.Duration(0); at < 3*time.Second; at += 500 * time.Millisecond {
		chatty.Elsewhere = append(chatty.Elsewhere, renew(at))
	}
	if len(chatty.Elsewhere) <= ToleratedTalk(chatty.Length()) {
		t.Fatalf("the test's %d requests are no more than ToleratedTalk (%d)", len(chatty.Elsewhere), ToleratedTalk(chatty.Length()))
	}
	if _, length, left := chatty.Judged(); length != chatty.Length() || left != "" {
		t.Errorf("a window with %d requests elsewhere was not judged whole: %s judged, %q", len(chatty.Elsewhere), length, left)
	}
	if b := chatty.Busy(); len(b) != 1 {
		t.Errorf("a controller busy between its many requests elsewhere: %v", b)
	}

	// A request that takes long leaves out no more than TalkSpan of it.
	slow := slicedWindow(from, rate(90, 4.5), ctrlproc.Work{}, 0, 0)
	long := renew(200 * time.Millisecond)
	long.Answered = from.Add(2900 * time.Millisecond)
	slow.Elsewhere = []APIRequest{long}
	if _, length, _ := slow.Judged(); length < 2*time.Second {
		t.Errorf("a request answered after 2.7s left out %s of the window", slow.Length()-length)
	}

	// A tally keeps what is left of a short window, however little.
	short := QuietWindow{From: from, To: from.Add(800 * time.Millisecond)}
	for at := time.Duration(0); at < 800*time.Millisecond; at += SliceEvery {
		short.Slices = append(short.Slices, WorkSlice{From: from.Add(at), To: from.Add(at + SliceEvery), Work: done(rate(90, 4.5), SliceEvery)})
	}
	short.Work = done(rate(90, 4.5), 800*time.Millisecond)
	short.Elsewhere = []APIRequest{renew(100 * time.Millisecond)}
	var tally QuietTally
	verdict := ""
	for range 10 {
		if s := tally.Add(short); s != "" {
			verdict = s
			break
		}
	}
	if !strings.Contains(verdict, "work on a timer") {
		t.Errorf("short windows of a poller that renews a Lease in each were not judged busy: %q", verdict)
	}
}
