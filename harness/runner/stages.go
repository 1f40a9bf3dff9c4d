package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/10xdev/gw10/harness/report"
)

// A stage is one step of the pipeline before the checks: a line of its
// output and a row of its report. What a stage does lives with its concern
// (build.go, probes.go, install.go, controller.go); runStages is the one
// driver that runs them, prints their lines and fills their rows.
type stage struct {
	name string
	// harness: nothing a submission holds can fail it (a control plane
	// that does not start on a busy machine); its row says so
	// (report.Stage.Harness).
	harness bool
	// aside follows the time in the line's parentheses.
	aside string
	// skip, when set, says why the stage does not run: its line says so,
	// it gets no row, and the pipeline goes on.
	skip string
	// do is the work; an error fails the stage.
	do func(ctx context.Context) error
	// failThrough: after a failure the pipeline goes on (the unit tests: the
	// checks say more about the controller than a red unit test alone).
	// The pipeline stops anyway when do's error is final (stopErr).
	failThrough bool
}

// stopErr wraps an error after which the pipeline stops even from a stage
// that fails through (unit tests that changed what the run reads next).
type stopErr struct{ error }

func (e stopErr) Unwrap() error { return e.error }

// runStages runs the stages in order and says whether the pipeline goes
// on: false at the first that fails (unless it fails through), or once ctx
// ends.
func (r *run) runStages(ctx context.Context, stages ...stage) bool {
	for _, s := range stages {
		if s.skip != "" {
			fmt.Fprintf(r.opts.Out, "  %-24s skipped (%s)\n", s.name+" ...", s.skip)
			continue
		}
		ran, err := r.runStage(ctx, s)
		if !ran {
			return false
		}
		if err != nil && (!s.failThrough || isStop(err)) {
			return false
		}
		if ctx.Err() != nil {
			return false
		}
	}
	return true
}

func isStop(err error) bool {
	var stop stopErr
	return errors.As(err, &stop)
}

// runStage runs one stage, prints its line and adds its row; ran is false
// when ctx had ended before it began.
func (r *run) runStage(ctx context.Context, s stage) (ran bool, err error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	out := stageOutOf(r.opts.Out)
	out.begin(fmt.Sprintf("  %-24s ", s.name+" ..."))
	start := time.Now()
	stopTicking := r.tick(out, start)
	err = s.do(ctx)
	stopTicking()
	st := report.Stage{Name: s.name, Status: report.Pass, Duration: report.Since(start), Harness: s.harness}
	if err != nil {
		st.Status, st.Detail = report.Fail, err.Error()
		if ctx.Err() != nil {
			st.Detail = "interrupted"
		}
		out.end(fmt.Sprintf("FAIL (%s)", st.Duration), false)
	} else if s.aside != "" {
		out.end(fmt.Sprintf("ok (%s; %s)", st.Duration, s.aside), false)
	} else {
		out.end(fmt.Sprintf("ok (%s)", st.Duration), false)
	}
	for _, n := range r.notes {
		fmt.Fprintf(r.opts.Out, "  note: %s\n", report.Inline(n)) // a note may quote a process's command line
	}
	st.Notes, r.notes = r.notes, nil
	r.rep.Stages = append(r.rep.Stages, st)
	return true, err
}

// tick says every StageTick that the stage whose line is open still runs:
// it ends the line with the time so far and starts it again. Whole lines
// only, so a CI log reads as well as a terminal. stop returns once ticking
// has stopped.
func (r *run) tick(out *stageOut, start time.Time) (stop func()) {
	return ticking(r.opts.StageTick, func(now time.Time) {
		out.end(fmt.Sprintf("still running (%s)", now.Sub(start).Round(time.Second)), true)
	})
}

// ticking calls f with the time every d until stop is called; stop
// returns once it has stopped (f is not running and will not run again).
func ticking(d time.Duration, f func(now time.Time)) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case now := <-t.C:
				f(now)
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); <-stopped }
}
