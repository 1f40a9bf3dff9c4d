package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/progress"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/runner"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
)

// TestProgressIsRememberedForModulesInTheWorkbookOnly: two runs of a module
// inside the workbook say what changed; a module elsewhere (a test's copy)
// leaves the progress file alone.
func TestProgressIsRememberedForModulesInTheWorkbookOnly(t *testing.T) {
	root := t.TempDir()
	rep := func(status report.Status) *report.Report {
		r := &report.Report{Checks: []report.CheckResult{{ID: "self-heal", Points: 10, Status: status}}}
		r.Finish()
		return r
	}
	elsewhere := runner.Options{Root: root, Step: step.Step{Name: "step07"}, StepDir: t.TempDir()}
	if got := remember(elsewhere, progress.Check, rep(report.Fail)); got != "" {
		t.Errorf("a module outside the workbook: %q", got)
	}
	if _, err := os.Stat(progress.Path(root)); !os.IsNotExist(err) {
		t.Fatalf("a module outside the workbook was remembered: %v", err)
	}
	inside := runner.Options{Root: root, Step: step.Step{Name: "step07"}, StepDir: filepath.Join(root, "step07")}
	if got := remember(inside, progress.Check, rep(report.Fail)); got != "" {
		t.Errorf("the first run: %q", got)
	}
	if got, want := remember(inside, progress.Check, rep(report.Pass)), "Since the last make check: self-heal now passes; 1/1, up from 0/1."; got != want {
		t.Errorf("the second run: %q, want %q", got, want)
	}
}

// TestTheREADMEQuotesTheSkeletonsClosingLine: the closing line README.md
// quotes for the pristine skeleton is the one the report prints when every
// check of the default step fails (the runner's skeleton test asserts that
// they all do).
func TestTheREADMEQuotesTheSkeletonsClosingLine(t *testing.T) {
	st := steps.Default()
	rep := &report.Report{Dir: st.Dir, Stages: []report.Stage{{Name: "unit tests", Status: report.Fail}}}
	for _, c := range st.Checks {
		rep.Checks = append(rep.Checks, report.CheckResult{ID: c.ID, Points: c.Points, Status: report.Fail, Hint: c.Hint})
	}
	rep.Finish()
	want := rep.ClosingLine(report.View{})
	readme, err := os.ReadFile(filepath.Join(workbook, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "\n"+want+"\n") {
		t.Errorf("README.md does not quote the pristine skeleton's closing line:\n%s", want)
	}
	if !strings.Contains(string(readme), fmt.Sprintf("All %d checks pass (%d/%d points)", len(st.Checks), rep.Summary.TotalPoints, rep.Summary.TotalPoints)) {
		t.Errorf("README.md does not say what a solved step's closing line says")
	}
}

// TestTheTimelineIsNamedOnlyWhenACheckRan: a failed build runs no check, and
// its timeline would be an empty page.
func TestTheTimelineIsNamedOnlyWhenACheckRan(t *testing.T) {
	rep := func(statuses ...report.Status) *report.Report {
		r := &report.Report{}
		for i, s := range statuses {
			r.Checks = append(r.Checks, report.CheckResult{ID: fmt.Sprint("c", i), Points: 10, Status: s})
		}
		r.Finish()
		return r
	}
	if got := timelineLine(rep(report.Skip, report.Skip), "reports/timeline.html"); got != "" {
		t.Errorf("no check ran, yet: %q", got)
	}
	if got := timelineLine(rep(report.Fail, report.Skip), "reports/timeline.html"); !strings.Contains(got, "reports/timeline.html") {
		t.Errorf("a check ran, yet: %q", got)
	}
	if got := timelineLine(rep(report.Pass), ""); got != "" {
		t.Errorf("no timeline asked for, yet: %q", got)
	}
}
