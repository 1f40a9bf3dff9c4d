package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/steps"
)

// runHint prints the longer hint of a check of a step.
func runHint(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("hint", flag.ContinueOnError)
	stepDir := fs.String("step", steps.Default().Dir, "the step whose check it is")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	root, err := filepath.Abs(".")
	if err != nil {
		return err
	}
	st, err := steps.ForDir(root, *stepDir)
	if err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gw10 hint <check-id>   (make hint ID=<check-id>)")
		fmt.Fprintln(os.Stderr, "checks:")
		for _, c := range st.Checks {
			fmt.Fprintf(os.Stderr, "  %-20s %s\n", c.ID, c.Title)
		}
		return exitError{2}
	}
	c, ok := checks.Find(st.Checks, fs.Arg(0))
	if !ok {
		return fmt.Errorf("no check %q; the checks are: %s", fs.Arg(0), checks.IDs(st.Checks))
	}
	fmt.Printf("%s — %s\nproves: %s\n\n%s\n\nIn short: %s\nMore: %s\n", c.ID, c.Title, c.SeedRef, c.LongHint, c.Hint, st.DocAnchor(c.ID))
	return nil
}
