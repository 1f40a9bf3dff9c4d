package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/10xdev/gw10/harness/progress"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/runner"
	"github.com/10xdev/gw10/harness/step"
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
	if got := remember(elsewhere, rep(report.Fail)); got != "" {
		t.Errorf("a module outside the workbook: %q", got)
	}
	if _, err := os.Stat(progress.Path(root)); !os.IsNotExist(err) {
		t.Fatalf("a module outside the workbook was remembered: %v", err)
	}
	inside := runner.Options{Root: root, Step: step.Step{Name: "step07"}, StepDir: filepath.Join(root, "step07")}
	if got := remember(inside, rep(report.Fail)); got != "" {
		t.Errorf("the first run: %q", got)
	}
	if got, want := remember(inside, rep(report.Pass)), "Since the last run: self-heal now passes; 1/1, up from 0/1."; got != want {
		t.Errorf("the second run: %q, want %q", got, want)
	}
}
