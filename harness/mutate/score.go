package mutate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	Mutant  Mutant
	Outcome Outcome
	By      []string // the checks (and stages) that failed
	// Clauses are the contract clauses the killing check's failure named
	// (its declared clauses when its message names none).
	Clauses  []string
	Duration time.Duration
	// Equivalent is why the mutant is listed as equivalent to the solution
	// (equivalent-mutants.txt); empty: it is not.
	Equivalent string
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
	// Equivalent are the mutants listed as equivalent, with why
	// (LoadEquivalents): scored, but not counted.
	Equivalent map[string]string
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
		// The checks are scored, not the solution's own unit tests, and
		// the first failing check is enough to kill a mutant.
		rep, err := runner.Run(ctx, runner.Options{
			Root: opts.Root, Step: opts.Step, StepDir: dir, Label: m.ID, Checks: opts.Step.Checks,
			FixedSeeds: true, Backend: opts.Backend, Out: io.Discard, GoEnv: env,
			ChecksOnly: true, FailFast: true,
		})
		if err != nil {
			return out, fmt.Errorf("mutant %s: %w", m.ID, err)
		}
		r := Result{Mutant: m, Outcome: outcomeOf(rep), By: failedIn(rep), Clauses: clausesOf(rep, opts.Step),
			Duration: time.Since(start), Equivalent: opts.Equivalent[m.Key]}
		out = append(out, r)
		_ = os.RemoveAll(filepath.Dir(dir))
		if opts.Progress != nil {
			by := strings.Join(r.By, ", ")
			if len(r.Clauses) > 0 {
				by += " (" + strings.Join(r.Clauses, ", ") + ")"
			}
			if r.Equivalent != "" {
				by += "  [listed as equivalent: " + r.Equivalent + "]"
			}
			fmt.Fprintf(opts.Progress, "  %-9s %-62s %5.0fs  %s\n", r.Outcome, m.ID, r.Duration.Seconds(), by)
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

// clausesOf are the contract clauses the first failing check's message
// names, else the clauses that check declares: what the kill proves.
func clausesOf(rep *report.Report, st step.Step) []string {
	for _, c := range rep.Checks {
		if c.Status != report.Fail {
			continue
		}
		var named []string
		text := c.Message + "\n" + strings.Join(c.Causes, "\n")
		for _, cl := range st.Contract {
			if containsWord(text, cl.ID) {
				named = append(named, cl.ID)
			}
		}
		if len(named) > 0 {
			return named
		}
		return c.Clauses
	}
	return nil
}

// containsWord: id occurs in text not as part of a longer clause ID
// (S-NACKED is not named by a text naming only ST-…).
func containsWord(text, id string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], id)
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || !isIDByte(text[j-1])
		end := j + len(id)
		after := end == len(text) || !isIDByte(text[end])
		if before && after {
			return true
		}
		i = j + 1
	}
}

func isIDByte(b byte) bool { return b == '-' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' }

// Summary is the score in one line: killed of the mutants counted, those
// that did not compile and those listed as equivalent left out.
func Summary(rs []Result) string {
	var killed, survived, stillborn, equivalent int
	for _, r := range rs {
		switch {
		case r.Outcome == Stillborn:
			stillborn++
		case r.Equivalent != "":
			equivalent++
		case r.Outcome == Killed:
			killed++
		case r.Outcome == Survived:
			survived++
		}
	}
	counted := killed + survived
	if counted == 0 {
		return fmt.Sprintf("no mutant counted (%d did not compile, %d listed as equivalent)", stillborn, equivalent)
	}
	return fmt.Sprintf("mutation score %d/%d killed (%.0f%%), %d survived, %d listed as equivalent, %d did not compile (neither counted)",
		killed, counted, 100*float64(killed)/float64(counted), survived, equivalent, stillborn)
}

// LoadEquivalents reads a step's list of equivalent mutants: one per line,
// its Key then why no behaviour shows the change ("#" starts a comment). A
// missing file is an empty list.
func LoadEquivalents(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the equivalent mutants: %w", err)
	}
	out := map[string]string{}
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, why, _ := strings.Cut(line, " ")
		why = strings.TrimSpace(why)
		if why == "" {
			return nil, fmt.Errorf("%s:%d: %s says no reason why it is equivalent", path, n+1, id)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", path, n+1, id)
		}
		out[id] = why
	}
	return out, nil
}

// EquivalentsFile is where a step's equivalent mutants are listed.
func EquivalentsFile(root string, st step.Step) string {
	return filepath.Join(root, "harness", "testdata", st.Name, "equivalent-mutants.txt")
}
