//go:build !gw10checkonly

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/10xdev/gw10/harness/bench"
	"github.com/10xdev/gw10/harness/runner"
	"github.com/10xdev/gw10/harness/steps"
)

func runBench(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	root := fs.String("root", ".", "the workbook root (where go.work is)")
	stepDir := fs.String("step", steps.Default().SolutionDir, "the step module to measure, relative to the root")
	routes := fs.String("routes", "100,1000,5000", "comma-separated numbers of routes (objects of the step's primary kind) to measure")
	repeat := fs.Int("repeat", 3, "measure each N this many times: the median run, and the spread of the headline figures")
	latency := fs.Int("latency-routes", 100, "how many Service creations and spec edits the latency figures time")
	workers := fs.Int("workers", 4, "passed as --"+bench.WorkersFlag+" when the controller has that flag (0: never)")
	out := fs.String("out", "reports", "directory for bench.json, bench.md and the charts")
	checkReport := fs.String("check-report", "", "a `gw10 check --json` report whose stage and check times to include")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	ns, err := parseRoutes(*routes)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		return err
	}
	st, err := steps.ForDir(abs, *stepDir)
	if err != nil {
		return err
	}
	dir := *stepDir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(abs, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return fmt.Errorf("%s is not a step module (no go.mod): pass STEP=%s or STEP=%s", dir, st.Dir, st.SolutionDir)
	}
	var harness *bench.HarnessFigures
	if *checkReport != "" {
		if harness, err = bench.ReadHarnessFigures(*checkReport); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", *out, err)
	}
	fmt.Printf("gw10 bench: %s with N = %s (Ctrl-C stops it and removes everything it started)\n", *stepDir, *routes)
	res, err := bench.Run(ctx, bench.Options{
		Runner:        runner.Options{Root: abs, Step: st, StepDir: dir, Label: filepath.ToSlash(filepath.Clean(*stepDir)), Out: os.Stdout},
		Routes:        ns,
		Repeat:        *repeat,
		LatencyRoutes: *latency,
		Workers:       *workers,
		Progress:      os.Stdout,
		Live:          isTerminal(os.Stdout),
	})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "gw10: bench interrupted — everything it started has been stopped")
			return exitError{130}
		}
		return err
	}
	res.Harness = harness
	fmt.Println()
	res.Terminal(os.Stdout)
	jsonPath, mdPath := filepath.Join(*out, "bench.json"), filepath.Join(*out, "bench.md")
	if err := res.WriteJSON(jsonPath); err != nil {
		return err
	}
	if err := res.WriteMarkdown(mdPath); err != nil {
		return err
	}
	charts, err := res.WriteCharts(*out)
	if err != nil {
		return err
	}
	fmt.Printf("\nwrote %s\n", strings.Join(append([]string{jsonPath, mdPath}, charts...), ", "))
	return nil
}

func parseRoutes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, errors.New("--routes takes positive numbers separated by commas, e.g. 100,1000,5000")
		}
		out = append(out, n)
	}
	return out, nil
}
