package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/10xdev/gw10/harness/grade"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/skeleton"
	"github.com/10xdev/gw10/harness/steps"
)

// runDiff is the instructor's review of a learner's step: against the
// solution (what still differs from the answer) or against the skeleton
// generated from it (what the learner changed). The learner's step is a
// directory (--step) or, with --submission, the step of a learner's
// repository (a path or git URL) at --ref, read without running anything of
// it. Headers name files relative to the repository (step01/…,
// skeleton/step01/…, solutions/step01/…), whatever the directory read.
func runDiff(ctx context.Context, args []string) error {
	return diffTo(ctx, args, os.Stdout, os.Stderr)
}

// diffTo is runDiff writing the diff to stdout and what it compares to stderr.
func diffTo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	root := fs.String("root", ".", "the workbook root")
	stepFlag := fs.String("step", steps.Default().Dir, "the learner's module: a directory; with --submission, the step's directory in that repository")
	against := fs.String("against", "", "solution: against the solution; skeleton: what the learner changed since the skeleton (default: solution, or skeleton with --submission)")
	view := fs.String("view", "", "make diff's VIEW: learner (= --against skeleton) or solution")
	submission := fs.String("submission", "", "a learner's repository (a path or git URL) whose step to diff")
	ref := fs.String("ref", "", "with --submission: the commit, branch or ref to read (default HEAD)")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	mode, err := diffMode(*against, *view, *submission != "")
	if err != nil {
		return err
	}
	if *ref != "" && *submission == "" {
		return fmt.Errorf("REF (--ref %q) names a commit of a submission: give SUBMISSION=<path or git URL> too", *ref)
	}

	var learner, what string
	st := steps.Default()
	if *submission != "" {
		if s, err := steps.ForDir(*root, *stepFlag); err == nil {
			st = s
		}
		co, err := grade.FetchStep(ctx, *submission, *ref, st.Dir)
		if err != nil {
			return err
		}
		defer func() { _ = co.Remove() }()
		learner = filepath.Join(co.Dir, filepath.FromSlash(st.Dir))
		r := co.Revision
		what = fmt.Sprintf("%s/ of %s at %s (%s)", st.Dir, r.Repository, r.Ref, r.Commit)
	} else {
		learner = *stepFlag
		if !filepath.IsAbs(learner) {
			learner = filepath.Join(*root, learner)
		}
		if _, err := os.Stat(learner); err != nil {
			d := steps.Default().Dir
			return fmt.Errorf("no learner module to diff at %s (--step, or STEP= with make: a directory like %s or a submission's /path/to/%s; "+
				"or SUBMISSION=<path or git URL> [REF=]): %w", *stepFlag, d, d, err)
		}
		if s, err := steps.ForDir(*root, learner); err == nil {
			st = s
		} else if abs, aerr := filepath.Abs(*root); aerr == nil {
			if s, err := steps.ForDir(abs, learner); err == nil {
				st = s
			} // else a learner's copy elsewhere: compare with the newest step
		}
		what = *stepFlag
	}
	if _, err := os.Stat(filepath.Join(*root, st.SolutionDir)); err != nil {
		return fmt.Errorf("make diff compares with the solution, %s/, which this checkout does not have: "+
			"a learner's copy has none. Run it in the instructor's checkout of the workbook, with STEP=<path to the learner's %s> or SUBMISSION=<their repository>",
			st.SolutionDir, st.Dir)
	}
	var d string
	switch mode {
	case "solution":
		d, err = skeleton.Diff(skeleton.DiffOptions{
			Solution: filepath.Join(*root, st.SolutionDir), Learner: learner,
			SolutionLabel: st.SolutionDir, LearnerLabel: st.Dir,
			SolutionModule: st.SolutionModule, LearnerModule: st.Module, HideMarkers: true,
		})
	case "skeleton":
		d, err = skeleton.LearnerDiff(ctx, skeleton.Options{
			Src: filepath.Join(*root, st.SolutionDir), FromModule: st.SolutionModule, ToModule: st.Module, Step: st.Name,
		}, learner, st.Dir)
	}
	if err != nil {
		return err
	}
	if d == "" {
		fmt.Fprintf(stdout, "%s is identical to the %s (generated files and //gw10: markers left out)\n", what, mode)
		return nil
	}
	fmt.Fprintf(stderr, "%s against the %s (generated files and //gw10: markers left out):\n", what, mode)
	// A submission's code reaches the terminal as text: an escape sequence
	// in a line (ESC[2K, a carriage return) would hide the code before it.
	_, err = io.WriteString(report.PlainText(stdout), d)
	return err
}

// diffMode is what the learner's step is compared with: --against, else
// make's VIEW, else the skeleton for a submission and the solution for a
// directory.
func diffMode(against, view string, submission bool) (string, error) {
	switch against {
	case "solution", "skeleton":
		return against, nil
	case "":
	default:
		return "", fmt.Errorf("--against %q: want solution or skeleton", against)
	}
	switch view {
	case "learner", "skeleton":
		return "skeleton", nil
	case "solution":
		return "solution", nil
	case "":
		if submission {
			return "skeleton", nil
		}
		return "solution", nil
	}
	return "", fmt.Errorf("VIEW=%q: want learner (what the learner changed since the skeleton) or solution", view)
}
