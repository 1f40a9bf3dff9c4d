// Package watch is gw10 watch: the step's checks rerun on every save, on a
// control plane, CRD, controller identity and proxy stand-in that stay up
// between runs (runner.Loop). A save during a run stops that run and starts
// another; the checks that failed last time run first.
package watch

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/runner"
)

// Options configure a watch.
type Options struct {
	// Runner says what to check and how (Root, Step, StepDir, Label, Checks,
	// GoEnv, Timeouts, Seed); its Out is replaced by the watch's screen.
	Runner runner.Options
	Out    io.Writer
	// Live: Out is a terminal, so the running check is shown on a line
	// redrawn in place.
	Live bool
	// Debounce is how long a save waits for more (editors write a file in
	// several events, a formatter after the editor); default 200 ms.
	Debounce time.Duration
	// Render writes a run's result: the renderer of gw10 check.
	Render func(w io.Writer, rep *report.Report)
}

// DefaultDebounce is the wait after a save for more of it.
const DefaultDebounce = 200 * time.Millisecond

// Watch runs the checks at once and again after every save until ctx
// ends, then stops everything it started. The error is nil when ctx ended
// it; otherwise it says what made watching impossible (no cluster, no
// watch on the files).
func Watch(ctx context.Context, opts Options) error {
	if opts.Debounce == 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.Render == nil {
		opts.Render = func(w io.Writer, rep *report.Report) { rep.Terminal(w) }
	}
	scr := &screen{w: opts.Out, live: opts.Live}
	stopTick := make(chan struct{})
	defer close(stopTick)
	go scr.tick(stopTick)

	ropts := opts.Runner
	ropts.Out = scr
	loop, err := runner.NewLoop(ctx, ropts)
	if err != nil {
		return err
	}
	defer loop.Close()
	fw, err := watchFiles(ropts.StepDir)
	if err != nil {
		return err
	}
	defer fw.Close()
	saves := make(chan string)
	go fw.run(ctx, saves, func(err error) { fmt.Fprintf(scr, "warning: %v\n", err) })

	w := &watcher{opts: opts, scr: scr, loop: loop, failed: map[string]bool{}, all: ropts.Checks}
	if len(w.all) == 0 {
		w.all = ropts.Step.Checks
	}
	fmt.Fprintf(scr, "gw10 watch: %s — every save of its Go code reruns the checks; Ctrl-C stops.\n", ropts.Label)
	return w.serve(ctx, saves)
}

// watcher is the state between runs.
type watcher struct {
	opts   Options
	scr    *screen
	loop   *runner.Loop
	all    []checks.Check
	failed map[string]bool // by check ID: how it ended when it last ran
	n      int
}

type outcome struct {
	rep *report.Report
	err error
}

func (w *watcher) serve(ctx context.Context, saves <-chan string) error {
	trigger, since := "start", time.Now()
	for {
		w.n++
		order := w.order()
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan outcome, 1)
		fmt.Fprintf(w.scr, "\n── run %d · %s · %s ──\n", w.n, trigger, time.Now().Format("15:04:05"))
		go func() {
			rep, err := w.loop.Run(runCtx, order, w.scr)
			done <- outcome{rep, err}
		}()
		running := done
		var pending []string
		var debounce <-chan time.Time
		var first time.Time
	waiting:
		for {
			select {
			case <-ctx.Done():
				cancel()
				if running != nil {
					<-running
				}
				w.scr.setStatus("")
				return nil
			case p := <-saves:
				if first.IsZero() {
					first = time.Now()
				}
				if !slices.Contains(pending, p) {
					pending = append(pending, p)
				}
				debounce = time.After(w.opts.Debounce)
			case <-debounce:
				cancel()
				if running != nil {
					w.scr.setStatus("  stopping this run: " + strings.Join(pending, ", ") + " changed")
					o := <-running
					w.scr.setStatus("")
					w.remember(o.rep)
					fmt.Fprintf(w.scr, "  (run %d stopped: %s changed)\n", w.n, strings.Join(pending, ", "))
				}
				trigger, since = strings.Join(pending, ", ")+" changed", first
				break waiting
			case o := <-running:
				running = nil
				if runCtx.Err() != nil {
					continue // Ctrl-C stopped it: the ctx.Done case ends the watch
				}
				cancel()
				if o.rep != nil {
					w.opts.Render(w.scr, o.rep)
				}
				if o.err != nil {
					return o.err // no cluster: no run can succeed
				}
				w.remember(o.rep)
				// From the first event of the save (or the start) to the verdict.
				fmt.Fprintf(w.scr, "[run %d · %s · verdict %.1fs after the %s] watching %s/ — save to run again, Ctrl-C to stop\n",
					w.n, o.rep.Headline(), time.Since(since).Seconds(), cause(trigger), w.opts.Runner.Label)
			}
		}
	}
}

func cause(trigger string) string {
	if trigger == "start" {
		return "start"
	}
	return "save"
}

// remember keeps how each check that ran ended.
func (w *watcher) remember(rep *report.Report) {
	if rep == nil {
		return
	}
	for _, c := range rep.Checks {
		switch c.Status {
		case report.Pass:
			w.failed[c.ID] = false
		case report.Fail:
			w.failed[c.ID] = true
		}
	}
}

// order is the step's checks with the ones that failed when they last ran
// first, each group in the step's order (the order to fix them in).
func (w *watcher) order() []checks.Check {
	var first, rest []checks.Check
	for _, c := range w.all {
		if w.failed[c.ID] {
			first = append(first, c)
		} else {
			rest = append(rest, c)
		}
	}
	return append(first, rest...)
}
