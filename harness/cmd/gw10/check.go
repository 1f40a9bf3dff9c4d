package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/progress"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/runner"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/timeline"
)

// checkFlags are shared by check and grade.
type checkFlags struct {
	root, step, cluster string
	stepName            string
	run                 string
	seeds               seedsFlag
	budget              string
	jsonOut, junit, md  string
	timeline            string
	verbose, all        bool
	// kind and existing backends
	kindName, kubeContext, allowContext string
	keep                                bool
}

// seedsFlag is --seed: one seed or a comma-separated list, in order.
type seedsFlag []int64

func (s *seedsFlag) String() string {
	if s == nil {
		return ""
	}
	out := make([]string, len(*s))
	for i, x := range *s {
		out[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(out, ",")
}

func (s *seedsFlag) Set(v string) error {
	var seeds []int64
	for _, part := range strings.Split(v, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("a seed is a positive whole number, as a failure prints it: %q", part)
		}
		seeds = append(seeds, n)
	}
	*s = seeds
	return nil
}

func (f *checkFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.root, "root", ".", "the workbook root (where go.work is)")
	fs.StringVar(&f.step, "step", steps.Default().Dir, "the step module to check, relative to the root: a step or its solution")
	fs.StringVar(&f.stepName, "step-name", "", "whose checks to run when --step is a copy outside the workbook (a step's name)")
	fs.StringVar(&f.cluster, "cluster", "envtest", "where to run: envtest, kind or existing")
	fs.StringVar(&f.run, "run", "", "comma-separated check IDs to run (default: all)")
	fs.Var(&f.seeds, "seed", "replay these seeds of the generated sequences, comma-separated, as a failure prints them (default: one fresh seed; --budget full: the step's fixed seeds and one fresh seed)")
	fs.StringVar(&f.budget, "budget", string(checks.BudgetLearner), "the generated sequences' length: learner (one short sequence planned to reach every situation) or full (the grade's fixed seeds at full length)")
	fs.StringVar(&f.jsonOut, "json", "", "write the JSON report to this file")
	fs.StringVar(&f.junit, "junit", "", "write a JUnit XML report to this file")
	fs.StringVar(&f.md, "markdown", "", "write a Markdown summary to this file")
	fs.StringVar(&f.timeline, "timeline", defaultTimeline, "write the timeline of every check (one HTML file, for a browser) to this file; empty: none")
	fs.BoolVar(&f.verbose, "v", false, "stream the controller's full log (and show every failure in full, as --all)")
	fs.BoolVar(&f.all, "all", false, "show every failure in full (default: the first in full, the others in short: the hint and the first cause)")
	fs.StringVar(&f.kindName, "kind-name", "gw10-check", "kind: the cluster to create (and delete)")
	fs.BoolVar(&f.keep, "keep", false, "kind: reuse the cluster if it exists and keep it afterwards")
	fs.StringVar(&f.kubeContext, "context", "", "existing: the kubeconfig context (default: the current one)")
	fs.StringVar(&f.allowContext, "allow-context", "", "existing: allow this context although the harness did not create it")
}

func runCheckCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	var f checkFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	rep, err := runChecks(ctx, f)
	if err != nil {
		return err
	}
	return exitFor(rep)
}

// runChecks runs the harness as the flags say and writes the reports.
func runChecks(ctx context.Context, f checkFlags) (*report.Report, error) {
	opts, err := runnerOptions(ctx, f)
	if err != nil {
		return nil, err
	}
	rep, runErr := runner.Run(ctx, opts) // an error: interrupted, and rep.Interrupted says so
	// The closing line comes last: it says what to do next.
	werr := writeReports(rep, f)
	if werr == nil {
		fmt.Print(timelineLine(rep, f.timeline))
	}
	view := f.view()
	view.Progress = remember(opts, progress.Check, rep)
	rep.TerminalView(os.Stdout, view)
	if werr != nil {
		return rep, werr
	}
	if runErr != nil {
		fmt.Fprintln(os.Stderr, "gw10: run", runErr, "— everything it started has been stopped")
		return rep, exitError{130}
	}
	return rep, nil
}

// timelineLine names the timeline file, unless no check ran (a failed build,
// say): a page with nothing on it is not worth opening.
func timelineLine(rep *report.Report, path string) string {
	if path == "" || rep.Summary.Skipped >= rep.Summary.Total {
		return ""
	}
	return fmt.Sprintf("Timeline of every check: %s (open it in a browser)\n", path)
}

// view is how much of the report the terminal shows.
func (f checkFlags) view() report.View { return report.View{All: f.all || f.verbose} }

// remember records the run of command (progress.Check or progress.Watch) in
// the workbook's progress file and says what changed since that command's
// last run. Only a module inside the workbook is remembered (not a copy
// elsewhere, as tests make); a file that cannot be written costs a warning,
// not the run.
func remember(opts runner.Options, command string, rep *report.Report) string {
	rel, err := filepath.Rel(opts.Root, opts.StepDir)
	if err != nil || !filepath.IsLocal(rel) {
		return ""
	}
	line, err := progress.Update(progress.Path(opts.Root), progress.Key{Command: command, Step: opts.Step.Name, Dir: filepath.ToSlash(rel)}, rep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gw10: warning: progress across runs not recorded:", err)
	}
	return line
}

func runnerOptions(ctx context.Context, f checkFlags) (runner.Options, error) {
	root, err := filepath.Abs(f.root)
	if err != nil {
		return runner.Options{}, err
	}
	stepDir := f.step
	if !filepath.IsAbs(stepDir) {
		stepDir = filepath.Join(root, f.step)
	}
	st, err := stepOf(root, f)
	if err != nil {
		return runner.Options{}, err
	}
	if _, err := os.Stat(filepath.Join(stepDir, "go.mod")); err != nil {
		return runner.Options{}, fmt.Errorf("%s is not a step module (no go.mod): pass STEP=%s or STEP=%s", stepDir, st.Dir, st.SolutionDir)
	}
	var ids []string
	if f.run != "" {
		ids = strings.Split(f.run, ",")
	}
	selected, err := checks.Select(st.Checks, ids)
	if err != nil {
		return runner.Options{}, err
	}
	budget := checks.BudgetLearner
	if f.budget != "" {
		if budget, err = checks.ParseBudget(f.budget); err != nil {
			return runner.Options{}, err
		}
	}
	opts := runner.Options{
		Root: root, Step: st, StepDir: stepDir, Label: filepath.ToSlash(filepath.Clean(f.step)),
		Checks: selected, Seeds: f.seeds, Budget: budget, Out: os.Stdout, Terminal: isTerminal(os.Stdout), Verbose: f.verbose,
		StageCache: true, Lanes: learnerLanes,
	}
	if err := selectBackend(ctx, f, &opts); err != nil {
		return runner.Options{}, err
	}
	return opts, nil
}

func writeReports(rep *report.Report, f checkFlags) error {
	if f.jsonOut != "" {
		if err := rep.WriteJSON(f.jsonOut); err != nil {
			return err
		}
	}
	if f.junit != "" {
		if err := rep.WriteJUnit(f.junit); err != nil {
			return err
		}
	}
	if f.md != "" {
		if err := rep.WriteMarkdown(f.md); err != nil {
			return err
		}
	}
	if f.timeline != "" {
		if err := timeline.Write(f.timeline, rep); err != nil {
			return err
		}
	}
	return nil
}

// learnerLanes is how many checks make check runs side by side (see
// runner.Options.Lanes).
const learnerLanes = 4

// defaultTimeline is where check writes the timeline; grade writes it to
// its --out directory.
const defaultTimeline = "reports/timeline.html"

func exitFor(rep *report.Report) error {
	if rep.Summary.OK {
		return nil
	}
	return exitError{1}
}

// stepOfFlags is the descriptor of the step the flags name; ok is false
// when it is not a step of the workbook.
func stepOfFlags(f checkFlags) (st step.Step, ok bool) {
	root, err := filepath.Abs(f.root)
	if err != nil {
		return step.Step{}, false
	}
	st, err = stepOf(root, f)
	return st, err == nil
}

// stepOf is the descriptor of the step the flags name: by --step-name, or
// by the directory --step.
func stepOf(root string, f checkFlags) (step.Step, error) {
	if f.stepName != "" {
		return steps.Find(f.stepName)
	}
	return steps.ForDir(root, f.step)
}
