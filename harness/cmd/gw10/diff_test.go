package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/steps"
)

// TestDiffWithoutTheSolutionSaysWhereToRunIt: a learner's copy has no
// solutions/; make diff says so instead of failing on a missing path.
func TestDiffWithoutTheSolutionSaysWhereToRunIt(t *testing.T) {
	st := steps.Default()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, st.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	err := runDiff(context.Background(), []string{"--root", root, "--step", st.Dir})
	if err == nil || !strings.Contains(err.Error(), "which this checkout does not have") {
		t.Fatalf("want the missing solution explained, got %v", err)
	}
}

// TestDiffTakesAnAbsoluteLearnerPath: an instructor diffs a submission
// checked out elsewhere with STEP=/path/to/its/module.
func TestDiffTakesAnAbsoluteLearnerPath(t *testing.T) {
	st := steps.Default()
	abs, err := filepath.Abs(filepath.Join(workbook, st.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := runDiff(context.Background(), []string{"--root", workbook, "--step", abs}); err != nil {
		t.Fatalf("diff of %s: %v", abs, err)
	}
	if err := runDiff(context.Background(), []string{"--root", workbook, "--step", filepath.Join(t.TempDir(), "missing")}); err == nil ||
		!strings.Contains(err.Error(), "no learner module to diff") {
		t.Fatalf("a missing learner module: %v", err)
	}
}
