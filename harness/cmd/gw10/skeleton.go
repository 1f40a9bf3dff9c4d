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
