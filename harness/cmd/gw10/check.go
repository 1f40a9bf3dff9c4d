package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/runner"
)

// checkFlags are shared by check and grade.
type checkFlags struct {
	root, step, cluster string
	run                 string
	jsonOut, junit, md  string
	verbose             bool
	// kind and existing backends
	kindName, kubeContext, allowContext string
	keep                                bool
}

func (f *checkFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.root, "root", ".", "the workbook root (where go.work is)")
	fs.StringVar(&f.step, "step", "step01", "the step module to check, relative to the root")
	fs.StringVar(&f.cluster, "cluster", "envtest", "where to run: envtest, kind or existing")
	fs.StringVar(&f.run, "run", "", "comma-separated check IDs to run (default: all)")
	fs.StringVar(&f.jsonOut, "json", "", "write the JSON report to this file")
	fs.StringVar(&f.junit, "junit", "", "write a JUnit XML report to this file")
	fs.StringVar(&f.md, "markdown", "", "write a Markdown summary to this file")
	fs.BoolVar(&f.verbose, "v", false, "stream the controller's full log")
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
	rep, runErr := runner.Run(ctx, opts)
	rep.Terminal(os.Stdout)
	if err := writeReports(rep, f); err != nil {
		return rep, err
	}
	if runErr != nil {
		fmt.Fprintln(os.Stderr, "gw10: run", runErr, "— everything it started has been stopped")
		return rep, exitError{130}
	}
	return rep, nil
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
	if _, err := os.Stat(filepath.Join(stepDir, "go.mod")); err != nil {
		return runner.Options{}, fmt.Errorf("%s is not a step module (no go.mod): pass STEP=step01 or STEP=solutions/step01", stepDir)
	}
	var ids []string
	if f.run != "" {
		ids = strings.Split(f.run, ",")
	}
	selected, err := checks.Select(checks.Step01(), ids)
	if err != nil {
		return runner.Options{}, err
	}
	opts := runner.Options{
		Root: root, StepDir: stepDir, StepName: filepath.ToSlash(filepath.Clean(f.step)),
		Checks: selected, Partial: len(ids) > 0, Out: os.Stdout, Verbose: f.verbose,
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
	return nil
}

func exitFor(rep *report.Report) error {
	if rep.Summary.OK {
		return nil
	}
	return exitError{1}
}
