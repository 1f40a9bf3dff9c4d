package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/10xdev/gw10/harness/grade"
	"github.com/10xdev/gw10/harness/runner"
)

// runGrade runs every check with its points, adds the integrity section and
// writes the JSON, JUnit and Markdown reports (the Markdown also to
// $GITHUB_STEP_SUMMARY when set).
func runGrade(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	var f checkFlags
	f.register(fs)
	base := fs.String("base", "", "the upstream revision to compare against (default: upstream/main, origin/main, HEAD)")
	out := fs.String("out", "reports", "directory for grade.json, junit.xml and summary.md")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if f.run != "" {
		return fmt.Errorf("grade runs every check; use check --run for a selection")
	}
	if f.jsonOut == "" {
		f.jsonOut = filepath.Join(*out, "grade.json")
	}
	if f.junit == "" {
		f.junit = filepath.Join(*out, "junit.xml")
	}
	if f.md == "" {
		f.md = filepath.Join(*out, "summary.md")
	}
	integrity, err := grade.Check(ctx, f.root, *base, f.step)
	if err != nil {
		return fmt.Errorf("checking the submission's integrity: %w", err)
	}
	opts, err := runnerOptions(ctx, f)
	if err != nil {
		return err
	}
	rep, runErr := runner.Run(ctx, opts)
	rep.Integrity = integrity
	rep.Finish()
	rep.Terminal(os.Stdout)
	if integrity.Gradable {
		fmt.Printf("Integrity: clean (base %s).\n", integrity.Base)
	} else {
		fmt.Printf("Integrity: NOT GRADABLE — changed since %s: %v\n", integrity.Base, integrity.Forbidden)
	}
	if integrity.Gradable {
		fmt.Printf("Grade: %d/%d points. Reports in %s/.\n", rep.Summary.Points, rep.Summary.TotalPoints, *out)
	} else {
		fmt.Printf("Grade: none, the submission is not gradable (the checks gave %d/%d points). Reports in %s/.\n",
			rep.Summary.Points, rep.Summary.TotalPoints, *out)
	}
	if err := writeReports(rep, f); err != nil {
		return err
	}
	if summary := os.Getenv("GITHUB_STEP_SUMMARY"); summary != "" {
		fh, err := os.OpenFile(summary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("writing $GITHUB_STEP_SUMMARY: %w", err)
		}
		defer fh.Close()
		if err := rep.Markdown(fh); err != nil {
			return fmt.Errorf("writing $GITHUB_STEP_SUMMARY: %w", err)
		}
	}
	if runErr != nil {
		return exitError{130}
	}
	return exitFor(rep)
}
