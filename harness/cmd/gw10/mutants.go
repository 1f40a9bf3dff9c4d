package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/mutate"
	"github.com/10xdev/gw10/harness/steps"
)

// runMutants generates mutants of a step's reference solution inside its
// exercise regions and scores the checks against them: which mutants some
// check (or the unit tests) kills, which survive every check.
func runMutants(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	root := fs.String("root", ".", "the workbook root")
	stepName := fs.String("step", "", "the step (default: the workbook's first)")
	sample := fs.Int("sample", 0, "score this many mutants, drawn with --seed (0: all of them)")
	seed := fs.Uint64("seed", 1, "the sample's seed: the same seed, the same sample")
	list := fs.Bool("list", false, "list the mutants and run nothing")
	only := fs.String("only", "", "score only these mutants (IDs or keys as --list prints them, comma-separated)")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	st := steps.Default()
	if *stepName != "" {
		var err error
		if st, err = steps.Find(*stepName); err != nil {
			return err
		}
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		return err
	}
	module := filepath.Join(abs, st.SolutionDir)
	all, err := mutate.Generate(module)
	if err != nil {
		return err
	}
	equivalent, err := mutate.LoadEquivalents(mutate.EquivalentsFile(abs, st))
	if err != nil {
		return err
	}
	picked := mutate.Sample(all, *sample, *seed)
	if *only != "" {
		if picked, err = mutate.Select(all, strings.Split(*only, ",")); err != nil {
			return err
		}
	}
	if *list {
		for _, m := range picked {
			eq := ""
			if why, ok := equivalent[m.Key]; ok {
				eq = "  [equivalent: " + why + "]"
			}
			fmt.Printf("%s  %s  %s%s\n", m.ID, m.Key, m.What, eq)
		}
		fmt.Printf("%d of %d mutants of %s\n", len(picked), len(all), st.SolutionDir)
		return nil
	}
	fmt.Printf("gw10: scoring the checks of %s against %d of its %d generated mutants (each a full run: about a minute) ...\n",
		st.Name, len(picked), len(all))
	dir, err := os.MkdirTemp("", "gw10-mutants-cluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	backend, err := cluster.NewEnvtestBackend(ctx, dir, os.Stdout)
	if err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	defer func() { _ = backend.Stop(context.WithoutCancel(ctx)) }()
	rs, err := mutate.Score(ctx, mutate.Options{Root: abs, Step: st, Module: module, Mutants: picked, Backend: backend, Progress: os.Stdout, Equivalent: equivalent})
	if err != nil {
		return err
	}
	fmt.Println()
	for _, r := range rs {
		switch {
		case r.Outcome == mutate.Survived && r.Equivalent == "":
			fmt.Printf("survived: %s  %s\n", r.Mutant.ID, r.Mutant.What)
		case r.Outcome == mutate.Killed && r.Equivalent != "":
			fmt.Printf("killed, yet listed as equivalent (take it off %s): %s  by %s\n",
				filepath.Base(mutate.EquivalentsFile(abs, st)), r.Mutant.ID, strings.Join(r.By, ", "))
		}
	}
	fmt.Println(mutate.Summary(rs))
	return nil
}
