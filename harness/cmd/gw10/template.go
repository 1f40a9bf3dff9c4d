package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/10xdev/gw10/harness/grade"
	"github.com/10xdev/gw10/harness/steps"
)

// runTemplate writes a learner's copy of the workbook (make template).
func runTemplate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("template", flag.ContinueOnError)
	root := fs.String("root", ".", "the workbook root (a git checkout)")
	out := fs.String("out", "../gw10-learner", "the learner's copy: a new directory, made a git repository")
	ref := fs.String("ref", "HEAD", "the commit of the workbook to copy (committed content only)")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	omit := grade.LearnerCopyOmits(steps.All())
	commit, upstream, err := grade.Template(ctx, grade.TemplateOptions{Root: *root, Ref: *ref, Out: *out, Omit: omit})
	if err != nil {
		return err
	}
	fmt.Printf("%s: a learner's copy of the workbook at %s, one commit (%s), without:\n", *out, upstream[:12], commit[:12])
	for _, o := range omit {
		fmt.Printf("  %-40s %s\n", o.Path, o.Why)
	}
	fmt.Println("Push it to a new repository and mark that a template (docs/instructors.md, \"A learner's copy\").")
	return nil
}
