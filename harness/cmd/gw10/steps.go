package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
)

// runSteps lists the course's steps, one a line, so the Makefile and
// scripts iterate the descriptors instead of naming a step.
func runSteps(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("steps", flag.ContinueOnError)
	field := fs.String("field", "name", "what to print of each step: name, dir (the learner's module) or solution (the reference solution's module)")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	return listSteps(os.Stdout, steps.All(), *field)
}

func listSteps(w io.Writer, all []step.Step, field string) error {
	for _, s := range all {
		var v string
		switch field {
		case "name":
			v = s.Name
		case "dir":
			v = s.Dir
		case "solution":
			v = s.SolutionDir
		default:
			return fmt.Errorf("gw10 steps: unknown --field %q (name, dir or solution)", field)
		}
		if _, err := fmt.Fprintln(w, v); err != nil {
			return fmt.Errorf("writing the steps: %w", err)
		}
	}
	return nil
}
