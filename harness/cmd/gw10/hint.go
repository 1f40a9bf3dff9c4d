package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/step"
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
		fmt.Fprintln(os.Stderr, "usage: gw10 hint <check-id or clause-id>   (make hint ID=<id>)")
		fmt.Fprintln(os.Stderr, "checks:")
		for _, c := range st.Checks {
			fmt.Fprintf(os.Stderr, "  %-20s %s\n", c.ID, c.Title)
		}
		if len(st.Contract) > 0 {
			fmt.Fprintln(os.Stderr, "clauses of the contract (docs/contract.md):")
			for _, cl := range st.Contract {
				fmt.Fprintf(os.Stderr, "  %-20s %s\n", cl.ID, cl.Rule)
			}
		}
		return exitError{2}
	}
	if cl, ok := st.Clause(fs.Arg(0)); ok {
		fmt.Print(clauseHint(st, cl))
		return nil
	}
	c, ok := checks.Find(st.Checks, fs.Arg(0))
	if !ok {
		return fmt.Errorf("no check or clause %q; the checks are: %s", fs.Arg(0), checks.IDs(st.Checks))
	}
	fmt.Printf("%s — %s\nproves: %s\n", c.ID, c.Title, c.SeedRef)
	for _, id := range c.Clauses {
		if cl, ok := st.Clause(id); ok {
			fmt.Printf("  %-15s %s\n", cl.ID, cl.Rule)
		}
	}
	fmt.Printf("\n%s\n\nIn short: %s\nMore: %s\n", c.LongHint, c.Hint, st.DocAnchor(c.ID))
	return nil
}

// clauseHint says what a clause of the contract requires and which checks
// prove it (or that none does yet).
func clauseHint(st step.Step, cl step.Clause) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s\n\n", cl.ID, cl.Rule)
	var by []string
	for _, c := range st.Checks {
		for _, id := range c.Clauses {
			if id == cl.ID {
				by = append(by, c.ID)
			}
		}
	}
	if len(by) == 0 {
		b.WriteString("No check proves it yet: a controller that breaks it can still pass make check.\n")
	} else {
		fmt.Fprintf(&b, "Proved by: %s (make hint ID=<check> says how).\n", strings.Join(by, ", "))
	}
	b.WriteString("The whole contract: docs/contract.md\n")
	return b.String()
}
