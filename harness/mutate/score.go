package mutate

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/modcopy"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/runner"
	"github.com/10xdev/gw10/harness/step"
)

// Outcome is how the checks met one mutant.
type Outcome string

const (
	Killed    Outcome = "killed"    // a check (or the unit tests) failed
	Survived  Outcome = "survived"  // every check and the unit tests passed
	Stillborn Outcome = "stillborn" // it did not build: not counted
)

// Result is one mutant's run.
type Result struct {
	Mutant   Mutant
	Outcome  Outcome
	By       []string // the checks (and stages) that failed
	Duration time.Duration
}

// Options say what to score and where.
type Options struct {
	Root    string    // the workbook
	Step    step.Step // its checks
	Module  string    // the module the mutants were generated from
	Mutants []Mutant
	// Backend is a started cluster every run shares (left running).
	Backend cluster.Backend
	// Progress gets one line per mutant as its run ends.
	Progress io.Writer
}

// Score runs every check on each mutant, one at a time, with the step's
// fixed sequence seeds (the grade's), and says which killed it.
func Score(ctx context.Context, opts Options) ([]Result, error) {
	tmp, err := os.MkdirTemp("", "gw10-mutants-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var out []Result
	for i, m := range opts.Mutants {
		dir := filepath.Join(tmp, fmt.Sprint(i), filepath.Base(opts.Module))
		if err := modcopy.Copy(opts.Module, dir); err != nil {
			return out, err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(m.File)), m.Src, 0o644); err != nil {
			return out, err
		}
		env, err := modcopy.Workspace(opts.Root, dir)
		if err != nil {
			return out, err
		}
		start := time.Now()
		rep, err := runner.Run(ctx, runner.Options{
			Root: opts.Root, Step: opts.Step, StepDir: dir, Label: m.ID, Checks: opts.Step.Checks,
			FixedSeeds: true, Backend: opts.Backend, Out: io.Discard, GoEnv: env,
		})
		if err != nil {
			return out, fmt.Errorf("mutant %s: %w", m.ID, err)
		}
		r := Result{Mutant: m, Outcome: outcomeOf(rep), By: failedIn(rep), Duration: time.Since(start)}
		out = append(out, r)
		_ = os.RemoveAll(filepath.Dir(dir))
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "  %-9s %-62s %5.0fs  %s\n", r.Outcome, m.ID, r.Duration.Seconds(), strings.Join(r.By, ", "))
		}
	}
	return out, nil
}

func outcomeOf(rep *report.Report) Outcome {
	for _, st := range rep.Stages {
		if st.Status == report.Fail && (st.Name == "build" || st.Name == "generate") {
			return Stillborn
		}
	}
	if rep.Summary.OK && !slices.ContainsFunc(rep.Stages, func(s report.Stage) bool { return s.Status == report.Fail }) {
		return Survived
	}
	return Killed
}

func failedIn(rep *report.Report) []string {
	var by []string
	for _, st := range rep.Stages {
		if st.Status == report.Fail {
			by = append(by, "stage "+st.Name)
		}
	}
	for _, c := range rep.Checks {
		if c.Status == report.Fail {
			by = append(by, c.ID)
		}
	}
	return by
}

// Summary is the score in one line: killed of counted (stillborn left out).
func Summary(rs []Result) string {
	var killed, survived, stillborn int
	for _, r := range rs {
		switch r.Outcome {
		case Killed:
			killed++
		case Survived:
			survived++
		case Stillborn:
			stillborn++
		}
	}
	counted := killed + survived
	if counted == 0 {
		return fmt.Sprintf("no mutant built (%d did not compile)", stillborn)
	}
	return fmt.Sprintf("mutation score %d/%d killed (%.0f%%), %d survived, %d did not compile (not counted)",
		killed, counted, 100*float64(killed)/float64(counted), survived, stillborn)
}
