package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/gotool"
	"github.com/10xdev/gw10/harness/skeleton"
)

// The step 01 pair.
const (
	solutionModule = "github.com/10xdev/gw10/solutions/step01"
	learnerModule  = "github.com/10xdev/gw10/step01"
)

func runSkeleton(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("skeleton", flag.ContinueOnError)
	root := fs.String("root", ".", "the workbook root")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	gen, err := gotool.Path(ctx, *root, "controller-gen")
	if err != nil {
		return err
	}
	dst := filepath.Join(*root, "step01")
	tmp, err := os.MkdirTemp(*root, ".step01-skeleton-")
	if err != nil {
		return fmt.Errorf("creating a scratch directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "step01")
	if err := skeleton.Generate(ctx, skeleton.Options{
		Src: filepath.Join(*root, "solutions", "step01"), Dst: out,
		FromModule: solutionModule, ToModule: learnerModule, Step: "step01", ControllerGen: gen,
	}); err != nil {
		return err
	}
	// Swap it in whole, so an error above never leaves a half-written step01/.
	old := filepath.Join(tmp, "old")
	if err := os.Rename(dst, old); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("moving the old step01 aside: %w", err)
	}
	if err := os.Rename(out, dst); err != nil {
		return fmt.Errorf("installing the new step01: %w", err)
	}
	fmt.Println("step01/ regenerated from solutions/step01/")
	return nil
}

// runDiff shows the learner's step against the solution (the instructor's
// review: what differs from the answer), or against the skeleton generated
// from the solution (what the learner changed).
func runDiff(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	root := fs.String("root", ".", "the workbook root")
	step := fs.String("step", "step01", "the learner's module")
	against := fs.String("against", "solution", "solution: the learner's module against the solution; skeleton: what the learner changed since the skeleton")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	learner := filepath.Join(*root, *step)
	var d string
	var err error
	switch *against {
	case "solution":
		d, err = skeleton.Diff(skeleton.DiffOptions{
			Solution: filepath.Join(*root, "solutions", "step01"), Learner: learner,
			SolutionLabel: "solutions/step01", LearnerLabel: *step,
			SolutionModule: solutionModule, LearnerModule: learnerModule, HideMarkers: true,
		})
	case "skeleton":
		d, err = skeleton.LearnerDiff(ctx, skeleton.Options{
			Src: filepath.Join(*root, "solutions", "step01"), FromModule: solutionModule, ToModule: learnerModule, Step: "step01",
		}, learner, *step)
	default:
		return fmt.Errorf("--against %q: want solution or skeleton", *against)
	}
	if err != nil {
		return err
	}
	if d == "" {
		fmt.Printf("%s is identical to the %s (generated files left out)\n", *step, *against)
		return nil
	}
	fmt.Print(d)
	return nil
}

func runHint(_ context.Context, args []string) error {
	all := checks.Step01()
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: gw10 hint <check-id>   (make hint ID=<check-id>)")
		fmt.Fprintln(os.Stderr, "checks:")
		for _, c := range all {
			fmt.Fprintf(os.Stderr, "  %-20s %s\n", c.ID, c.Title)
		}
		return exitError{2}
	}
	c, ok := checks.Find(all, args[0])
	if !ok {
		ids := make([]string, len(all))
		for i, c := range all {
			ids[i] = c.ID
		}
		return fmt.Errorf("no check %q; the checks are: %s", args[0], strings.Join(ids, ", "))
	}
	fmt.Printf("%s — %s\nproves: %s\n\n%s\n\nIn short: %s\nMore: %s\n", c.ID, c.Title, c.SeedRef, c.LongHint, c.Hint, c.DocAnchor())
	return nil
}
