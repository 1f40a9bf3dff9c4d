package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/step"
)

// brokenModule is a module whose controller does not compile: the build
// stage fails at once, before any cluster is needed.
func brokenModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":      "module example.com/broken\n\ngo 1.22\n",
		"cmd/main.go": "package main\n\nfunc main() { undefined() }\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestThePlanDecidesWhatADriveDoes: make check, make watch and the bench
// go through one driver. After a failed stage a plan with checks gives every
// check one skipped row built by NotRun (the step's doc anchor included,
// as every row has), a plan without (the bench) gives none; built hears of
// the build's outcome before any other stage, and the cluster is not waited
// for once a stage before it failed.
func TestThePlanDecidesWhatADriveDoes(t *testing.T) {
	dir := brokenModule(t)
	st := step.Step{Name: "tiny", Chapter: "docs/tiny.md", Checks: []checks.Check{
		{ID: "one", Title: "the first", Points: 2}, {ID: "two", Title: "the second"},
	}}
	for _, withChecks := range []bool{true, false} {
		var out bytes.Buffer
		opts := Options{Root: dir, StepDir: dir, Step: st, Out: &out, GoEnv: []string{"GOWORK=off", "GOFLAGS=-mod=mod"}}.withDefaults()
		r := &run{opts: opts, rep: newReport(opts), dir: t.TempDir()}
		var built []bool
		clusterWaited := false
		ok := r.drive(context.Background(), plan{
			checks:  withChecks,
			built:   func(ok bool) { built = append(built, ok) },
			cluster: func() error { clusterWaited = true; return nil },
		})
		if ok || len(built) != 1 || built[0] || clusterWaited {
			t.Fatalf("checks=%v: a broken build: drive says %v, built heard %v, cluster waited %v\n%s", withChecks, ok, built, clusterWaited, out.String())
		}
		if len(r.rep.Stages) != 1 || r.rep.Stages[0].Name != "build" || r.rep.Stages[0].Status != report.Fail {
			t.Errorf("checks=%v: want the build stage alone, failed: %+v", withChecks, r.rep.Stages)
		}
		if !withChecks {
			if len(r.rep.Checks) != 0 {
				t.Errorf("a plan without checks reported rows: %+v", r.rep.Checks)
			}
			continue
		}
		if len(r.rep.Checks) != 2 {
			t.Fatalf("want a row per check, got %+v", r.rep.Checks)
		}
		for i, c := range r.rep.Checks {
			want := NotRun(st, st.Checks[i], "not run: an earlier stage failed")
			if c.ID != want.ID || c.Status != report.Skip || c.Message != want.Message || c.Doc != "docs/tiny.md#check-"+c.ID || c.Points != st.Checks[i].Points {
				t.Errorf("row %d is %+v, want %+v", i, c, want)
			}
		}
		if strings.Contains(out.String(), "SKIP") {
			t.Errorf("skipped rows are the report's, not progress lines:\n%s", out.String())
		}
	}
}

// TestMakeChecksProgressIsALinePerCheck: the one check loop tells make
// check's progress (lines) of each check's end as the line it always printed.
func TestMakeChecksProgressIsALinePerCheck(t *testing.T) {
	var out bytes.Buffer
	p := newLines(&out)
	p.CheckStarted(0, 1, checks.Check{ID: "one"})
	p.CheckDone(0, 1, report.CheckResult{ID: "one", Title: "the first", Status: report.Pass, Duration: 1.5})
	if got, want := out.String(), "  PASS one                    1.5s  the first\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// While no verdict has printed for a tick, a line says which check the next
// one waits for (in a log or a pipe, nothing else shows that the run is
// alive); a verdict printed within the tick, or no check started, says
// nothing more.
func TestMakeChecksProgressSaysWhichCheckItWaitsFor(t *testing.T) {
	var out bytes.Buffer
	p := newLines(&out)
	start := time.Now()
	p.CheckStarted(0, 3, checks.Check{ID: "one"})
	p.CheckStarted(1, 3, checks.Check{ID: "two"})
	p.CheckDone(0, 3, report.CheckResult{ID: "one", Title: "the first", Status: report.Pass, Duration: 1.5})
	p.still(start.Add(5*time.Second), 10*time.Second) // a verdict within the tick
	p.still(start.Add(12*time.Second), 10*time.Second)
	p.still(start.Add(15*time.Second), 10*time.Second) // said 3 s ago
	p.CheckDone(1, 3, report.CheckResult{ID: "two", Title: "the second", Status: report.Fail, Duration: 14})
	p.still(start.Add(40*time.Second), 10*time.Second) // the third never started
	want := "  PASS one                    1.5s  the first\n" +
		"  … two still running (12s)\n" +
		"  FAIL two                   14.0s  the second\n"
	if got := out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
