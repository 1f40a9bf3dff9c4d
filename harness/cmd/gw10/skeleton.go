package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/10xdev/gw10/harness/gotool"
	"github.com/10xdev/gw10/harness/skeleton"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
)

// runSkeleton regenerates every step's learner module from its solution
// (or the one --step names).
func runSkeleton(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("skeleton", flag.ContinueOnError)
	root := fs.String("root", ".", "the workbook root")
	name := fs.String("step", "", "the step to regenerate (default: every step)")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	gen, err := gotool.Path(ctx, *root, "controller-gen")
	if err != nil {
		return err
	}
	for _, st := range steps.All() {
		if *name != "" && st.Name != *name {
			continue
		}
		if err := regenerate(ctx, *root, st, gen); err != nil {
			return err
		}
		fmt.Printf("%s/ regenerated from %s/\n", st.Dir, st.SolutionDir)
	}
	return nil
}

// regenerate writes the step's skeleton beside it and swaps it in whole, so
// an error never leaves a half-written learner module.
func regenerate(ctx context.Context, root string, st step.Step, controllerGen string) error {
	dst := filepath.Join(root, st.Dir)
	tmp, err := os.MkdirTemp(root, ".skeleton-")
	if err != nil {
		return fmt.Errorf("creating a scratch directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "new")
	if err := skeleton.Generate(ctx, skeleton.Options{
		Src: filepath.Join(root, st.SolutionDir), Dst: out,
		FromModule: st.SolutionModule, ToModule: st.Module, Step: st.Name, ControllerGen: controllerGen,
	}); err != nil {
		return err
	}
	if err := os.Rename(dst, filepath.Join(tmp, "old")); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("moving the old %s aside: %w", st.Dir, err)
	}
	if err := os.Rename(out, dst); err != nil {
		return fmt.Errorf("installing the new %s: %w", st.Dir, err)
	}
	return nil
}

// runDiff shows the learner's step against the solution (the instructor's
// review: what differs from the answer), or against the skeleton generated
// from the solution (what the learner changed).
func runDiff(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	root := fs.String("root", ".", "the workbook root")
	step := fs.String("step", steps.Default().Dir, "the learner's module")
	against := fs.String("against", "solution", "solution: the learner's module against the solution; skeleton: what the learner changed since the skeleton")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	learner := *step
	if !filepath.IsAbs(learner) {
		learner = filepath.Join(*root, learner)
	}
	if _, err := os.Stat(learner); err != nil {
		d := steps.Default().Dir
		return fmt.Errorf("no learner module to diff at %s (--step, or STEP= with make: a directory like %s or a submission's /path/to/%s): %w", *step, d, d, err)
	}
	st, err := steps.ForDir(*root, learner)
	if err != nil {
		abs, _ := filepath.Abs(*root)
		if st, err = steps.ForDir(abs, learner); err != nil {
			st = steps.Default() // a learner's copy elsewhere: compare with the newest step
		}
	}
	if _, err := os.Stat(filepath.Join(*root, st.SolutionDir)); err != nil {
		return fmt.Errorf("make diff compares with the solution, %s/, which this checkout does not have: "+
			"a learner's copy has none. Run it in the instructor's checkout of the workbook, with STEP=<path to the learner's %s>",
			st.SolutionDir, st.Dir)
	}
	var d string
	switch *against {
	case "solution":
		d, err = skeleton.Diff(skeleton.DiffOptions{
			Solution: filepath.Join(*root, st.SolutionDir), Learner: learner,
			SolutionLabel: st.SolutionDir, LearnerLabel: *step,
			SolutionModule: st.SolutionModule, LearnerModule: st.Module, HideMarkers: true,
		})
	case "skeleton":
		d, err = skeleton.LearnerDiff(ctx, skeleton.Options{
			Src: filepath.Join(*root, st.SolutionDir), FromModule: st.SolutionModule, ToModule: st.Module, Step: st.Name,
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
