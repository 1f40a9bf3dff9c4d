package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/progress"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/watch"
)

// runWatch is gw10 watch: the checks again on every save, on a control
// plane kept up between runs. Ctrl-C or SIGTERM stop it with status 0.
func runWatch(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	f := checkFlags{cluster: "envtest"}
	fs.StringVar(&f.root, "root", ".", "the workbook root (where go.work is)")
	fs.StringVar(&f.step, "step", steps.Default().Dir, "the step module to watch, relative to the root")
	fs.StringVar(&f.stepName, "step-name", "", "whose checks to run when --step is a copy outside the workbook (a step's name)")
	fs.StringVar(&f.run, "run", "", "comma-separated check IDs to run (default: all)")
	fs.Var(&f.seeds, "seed", "replay these seeds of the generated sequences, comma-separated (default: one fresh seed each run; --budget full: the step's fixed seeds and one fresh seed)")
	fs.StringVar(&f.budget, "budget", string(checks.BudgetLearner), "the generated sequences' length: learner (one short sequence planned to reach every situation) or full (the grade's fixed seeds at full length)")
	fs.BoolVar(&f.verbose, "v", false, "stream the controller's full log (and show every failure in full, as --all)")
	fs.BoolVar(&f.all, "all", false, "show every failure in full (default: the first in full, the others in short: the hint and the first cause)")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	opts, err := runnerOptions(ctx, f)
	if err != nil {
		return err
	}
	// Each run ends as make check ends: the same view, and what changed
	// since the last watch run.
	render := func(w io.Writer, rep *report.Report) {
		view := f.view()
		view.Command, view.Again = "make watch", "save again"
		if !rep.Interrupted {
			view.Progress = remember(opts, progress.Watch, rep)
		}
		rep.TerminalView(w, view)
	}
	err = watch.Watch(ctx, watch.Options{Runner: opts, Out: os.Stdout, Live: isTerminal(os.Stdout), Render: render})
	if err != nil {
		return err
	}
	fmt.Println("\ngw10 watch: stopped; the control plane, the proxy and the controller are gone.")
	return nil
}
