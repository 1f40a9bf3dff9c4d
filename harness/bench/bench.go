// Package bench measures how a step's controller scales with the number of
// objects of its primary kind (its routes: step 01's EdgeRoutes), against
// what the API server can do at all: on the same envtest control plane,
// proxy stand-in and restricted identity as the checks, the controller as a
// separate process. See docs/bench.md for each figure.
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/runner"
)

// Options configure a bench run.
type Options struct {
	// Runner sets up the pipeline (root, step, module); its checks are not run.
	Runner runner.Options
	// Routes are the numbers of routes (objects of the primary kind) to
	// measure, smallest first.
	Routes []int
	// LatencyRoutes is how many changes the latency phase times (default 100).
	LatencyRoutes int
	// Repeat measures each N this many times (default 1): Runs keeps the
	// median run by cold-start ratio, Spread the median, least and most of
	// each headline figure. One run of a shared machine does not hold still.
	Repeat int
	// Workers is passed as --max-concurrent-reconciles when the controller
	// has that flag (0: not passed).
	Workers int
	// Progress receives a progress line while the bench runs; Live rewrites
	// it in place (a terminal), otherwise each phase is a line of its own.
	Progress io.Writer
	Live     bool
}

// WorkersFlag is the controller flag Options.Workers is passed as.
const WorkersFlag = "max-concurrent-reconciles"

// bencher is the state of one run.
type bencher struct {
	s        *runner.Session
	c        client.WithWatch
	kind     checks.Primary // the step's primary kind: the objects measured
	args     []string
	progress *progress
}

// Run sets up the pipeline, measures each N and returns the result. The
// error is non-nil when the setup failed or the run was interrupted;
// everything the run started is stopped either way.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.LatencyRoutes == 0 {
		opts.LatencyRoutes = 100
	}
	if opts.Repeat <= 0 {
		opts.Repeat = 1
	}
	if len(opts.Routes) == 0 {
		return nil, fmt.Errorf("no route counts to measure")
	}
	routes := slices.Clone(opts.Routes)
	slices.Sort(routes)
	res := &Result{Schema: SchemaVersion, Step: opts.Runner.Label, Started: time.Now().UTC(), CPUs: runtime.NumCPU(),
		LoadBefore: loadAverage(), ControllerArgs: []string{}, Notes: []string{}, Repeat: opts.Repeat}
	prog := newProgress(opts.Progress, opts.Live)
	defer prog.stop()

	s, err := runner.Start(ctx, opts.Runner)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	res.Cluster = s.Cluster()
	for _, st := range s.Stages {
		res.Setup = append(res.Setup, Timing{Name: st.Name, Status: string(st.Status), Seconds: round(float64(st.Duration), 2)})
	}
	b := &bencher{s: s, c: s.Client, kind: opts.Runner.Step.Primary, progress: prog}
	if opts.Workers > 0 {
		if s.ControllerHasFlag(ctx, WorkersFlag) {
			b.args = []string{fmt.Sprintf("--%s=%d", WorkersFlag, opts.Workers)}
		} else {
			res.Notes = append(res.Notes, fmt.Sprintf("the controller has no --%s flag: it ran with its own worker count", WorkersFlag))
		}
	}
	res.ControllerArgs = append(res.ControllerArgs, b.args...)
	if err := s.StopController(ctx); err != nil {
		return nil, fmt.Errorf("stopping the controller: %w", err)
	}
	for _, n := range routes {
		var points []Point
		for i := range opts.Repeat {
			run, err := b.measure(ctx, n, opts.LatencyRoutes)
			if err != nil {
				return nil, fmt.Errorf("N=%d: %w", n, err)
			}
			points = append(points, run)
			if opts.Repeat > 1 {
				prog.line(fmt.Sprintf("N=%d run %d/%d done: %s", n, i+1, opts.Repeat, run.summary()))
			} else {
				prog.line(fmt.Sprintf("N=%d done: %s", n, run.summary()))
			}
		}
		median, spread := spreadOf(points)
		res.Runs = append(res.Runs, median)
		if opts.Repeat > 1 {
			res.Spread = append(res.Spread, spread)
		}
	}
	res.Growth = growth(res.Runs)
	res.LoadAfter = loadAverage()
	res.Seconds = round(time.Since(res.Started).Seconds(), 1)
	res.Notes = append(res.Notes, notes(res)...)
	return res, nil
}

// measure runs every phase for n routes in a namespace of their own, and
// deletes them afterwards. The controller is stopped before and after.
func (b *bencher) measure(ctx context.Context, n, latencyRoutes int) (Point, error) {
	run := Point{Routes: n}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: fmt.Sprintf("bench-%d-", n)}}
	if err := b.c.Create(ctx, ns); err != nil {
		return run, fmt.Errorf("creating a namespace: %w", err)
	}
	b.progress.set("N=%d: creating %d Services and %ss", n, n, b.kind.Kind())
	if err := createSet(ctx, b.c, b.kind, ns.Name, "route", n, true); err != nil {
		return run, err
	}
	tctx, stopTracking := context.WithCancel(ctx)
	defer stopTracking()
	t, err := track(tctx, b.c, b.kind, ns.Name)
	if err != nil {
		return run, err
	}
	if run.Limit, err = b.measureLimit(ctx, ns.Name, n); err != nil {
		return run, err
	}
	if run.Cold, err = b.measureCold(ctx, ns.Name, n, t, run.Limit); err != nil {
		return run, err
	}
	if run.Restart, err = b.measureRestart(ctx, ns.Name, n, t); err != nil {
		return run, err
	}
	if run.SelfHeal, run.SpecChange, err = b.measureLatency(ctx, ns.Name, n, latencyRoutes, t); err != nil {
		return run, err
	}
	if err := b.s.StopController(ctx); err != nil {
		return run, fmt.Errorf("stopping the controller: %w", err)
	}
	b.progress.set("N=%d: deleting the routes", n)
	err = deleteAll(ctx, b.c, b.kind, ns.Name)
	b.progress.set("")
	return run, err
}

// summary is the one-line outcome of a run.
func (r Point) summary() string {
	cold := "cold start not measured"
	if r.Cold.Measured {
		cold = fmt.Sprintf("cold start %.2f s (%.2f × the limit: routes a second over the API server's status writes a second; 1 is as fast as it can write, higher is faster)", r.Cold.Seconds, r.Cold.RatioToLimit)
	}
	heal := "self-heal not measured"
	if r.SelfHeal.Measured {
		heal = fmt.Sprintf("self-heal p50 %.0f ms", r.SelfHeal.P50)
	}
	return fmt.Sprintf("limit %.0f writes/s, %s, restart %.0f status writes, %s", r.Limit.PerSecond, cold, r.Restart.StatusWrites, heal)
}

// growth compares per-route figures from the smallest to the largest N
// whose cold start was measured.
func growth(runs []Point) Growth {
	var measured []Point
	for _, r := range runs {
		if r.Cold.Measured {
			measured = append(measured, r)
		}
	}
	if len(measured) < 2 {
		return Growth{Sentence: "not measured: fewer than two route counts converged"}
	}
	a, z := measured[0], measured[len(measured)-1]
	ratio := func(x, y float64) float64 {
		if x == 0 {
			return 0
		}
		return round(y/x, 2)
	}
	g := Growth{Measured: true, From: a.Routes, To: z.Routes,
		TimePerRoute: ratio(a.Cold.Seconds/float64(a.Routes), z.Cold.Seconds/float64(z.Routes)),
		CPUPerRoute:  ratio(a.Cold.PerRoute.CPUSeconds, z.Cold.PerRoute.CPUSeconds),
		APIPerRoute:  ratio(a.Cold.PerRoute.APIRequests, z.Cold.PerRoute.APIRequests),
	}
	g.Sentence = fmt.Sprintf("From N=%d to N=%d, cold-start time per route changed ×%.2f (%s), CPU per route ×%.2f, API requests per route ×%.2f.",
		a.Routes, z.Routes, g.TimePerRoute, shape(g.TimePerRoute), g.CPUPerRoute, g.APIPerRoute)
	return g
}

// shape says what a per-route ratio means for the total.
func shape(r float64) string {
	switch {
	case r < 0.8:
		return "falls: fixed start-up costs spread over more routes"
	case r <= 1.25:
		return "flat: the total grows linearly"
	default:
		return "grows: the total grows faster than linearly"
	}
}

// notes say what the figures cannot: an unloaded machine, goals missed.
func notes(res *Result) []string {
	var out []string
	if len(res.LoadBefore) > 0 && res.LoadBefore[0] > float64(res.CPUs) {
		out = append(out, fmt.Sprintf("the machine was busy (load average %.1f on %d CPUs before the run): compare ratios, not absolute times",
			res.LoadBefore[0], res.CPUs))
	}
	return out
}

// loadAverage reads the 1, 5 and 15 minute load averages (empty if unknown).
func loadAverage() []float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return []float64{}
	}
	out := []float64{}
	for _, f := range strings.Fields(string(data))[:3] {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return []float64{}
		}
		out = append(out, v)
	}
	return out
}

// progress shows what the bench is doing: rewritten in place on a
// terminal, a line per phase otherwise.
type progress struct {
	w    io.Writer
	live bool

	mu    sync.Mutex
	text  string
	shown string
	done  chan struct{}
	wg    sync.WaitGroup
}

func newProgress(w io.Writer, live bool) *progress {
	if w == nil {
		w = io.Discard
	}
	p := &progress{w: w, live: live, done: make(chan struct{})}
	p.wg.Add(1)
	go p.loop()
	return p
}

func (p *progress) set(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.text = fmt.Sprintf(format, args...)
}

// line prints a line that stays.
func (p *progress) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintln(p.w, "  "+s)
	p.shown = ""
}

func (p *progress) loop() {
	defer p.wg.Done()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-tick.C:
		}
		p.mu.Lock()
		switch {
		case p.text == p.shown || p.text == "":
		case p.live:
			fmt.Fprintf(p.w, "\r\033[K  %s", p.text)
		case phase(p.text) != phase(p.shown):
			fmt.Fprintln(p.w, "  "+p.text)
		}
		if p.live || phase(p.text) != phase(p.shown) {
			p.shown = p.text
		}
		p.mu.Unlock()
	}
}

// phase is a progress text without its counters: "N=100 cold start".
func phase(s string) string {
	if i := strings.Index(s, ":"); i >= 0 {
		return s[:i]
	}
	return s
}

func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
	if p.live && p.shown != "" {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
