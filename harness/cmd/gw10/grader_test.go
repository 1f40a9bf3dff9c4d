package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/grade"
	"github.com/10xdev/gw10/harness/testenv"
)

// TestTheGraderIsBuiltFromTheCommitItNames: a file planted in a checkout's
// harness/ (uncommitted, as learner code or a careless edit would leave it)
// is not in the grader built for the checkout's HEAD; the binary is stamped
// with that commit, kept by commit, and runs.
func TestTheGraderIsBuiltFromTheCommitItNames(t *testing.T) {
	testenv.Long(t, "builds the harness")
	up := filepath.Join(t.TempDir(), "upstream")
	git(t, filepath.Dir(up), "clone", "-q", workbook, up)
	planted := filepath.Join(up, "harness", "cmd", "gw10", "planted.go")
	if err := os.WriteFile(planted, []byte("package main\n\nfunc init() { panic(\"PLANTED\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, graders := context.Background(), t.TempDir()
	head, err := grade.Resolve(ctx, up, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := cleanGrader(ctx, up, head, graders)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(bin, head) {
		t.Errorf("the grader %s is not kept by its commit %s", bin, head)
	}
	out, err := exec.Command(bin, "hint", "crd-schema").CombinedOutput()
	if err != nil || strings.Contains(string(out), "PLANTED") {
		t.Fatalf("the clean grader does not run (or runs the planted file): %v\n%s", err, out)
	}
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(info), "main.sourceCommit="+head) {
		t.Errorf("the grader is not stamped with %s:\n%s", head, info)
	}
	again, err := cleanGrader(ctx, up, head, graders)
	if err != nil || again != bin {
		t.Errorf("the second call built again: %s, %v", again, err)
	}
}

// TestGradeTargetsReadTheFlagsTheFlagSetReads: both spellings of a flag.
func TestGradeTargetsReadTheFlagsTheFlagSetReads(t *testing.T) {
	sub, root, ref := gradeTargets([]string{"--root", "/up", "-submission=../alice", "--upstream-ref", "v1", "--out", "r"})
	if sub != "../alice" || root != "/up" || ref != "v1" {
		t.Errorf("got %q %q %q", sub, root, ref)
	}
	if sub, root, ref := gradeTargets(nil); sub != "" || root != "." || ref != "HEAD" {
		t.Errorf("defaults: got %q %q %q", sub, root, ref)
	}
}
