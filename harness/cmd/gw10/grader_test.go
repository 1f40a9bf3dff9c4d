package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/grade"
	"github.com/10xdev/gw10/harness/report"
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

// TestAGraderNotTheUpstreamCommitsIsNotOfficial: a grader built from a
// working tree, or from another commit, makes every report say the grade is
// not official; one built from the upstream commit says where it came from.
func TestAGraderNotTheUpstreamCommitsIsNotOfficial(t *testing.T) {
	const up = "0123456789abcdef0123456789abcdef01234567"
	for _, c := range []struct{ built, want string }{
		{"", "built from a working tree"},
		{"fedcba9876543210fedcba9876543210fedcba98", "built from fedcba987654, not from the upstream commit 0123456789ab"},
		{up, ""},
	} {
		g := graderOf(c.built, up)
		if c.want == "" && g.Reason != "" || !strings.Contains(g.Reason, c.want) {
			t.Errorf("grader built from %q: reason %q, want %q", c.built, g.Reason, c.want)
		}
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

// TestAGradeTheHarnessCouldNotRunIsNoGrade: a control plane that did not
// start (a busy machine) is not a zero for the submission; a failed build is.
func TestAGradeTheHarnessCouldNotRunIsNoGrade(t *testing.T) {
	for _, c := range []struct {
		stage report.Stage
		want  string
	}{
		{report.Stage{Name: "cluster", Status: report.Fail, Harness: true}, "cluster"},
		{report.Stage{Name: "proxy stand-in", Status: report.Fail, Harness: true}, "proxy stand-in"},
		{report.Stage{Name: "cluster", Status: report.Pass, Harness: true}, ""},
		{report.Stage{Name: "build", Status: report.Fail}, ""},
		{report.Stage{Name: "start controller", Status: report.Fail}, ""},
	} {
		rep := &report.Report{Stages: []report.Stage{{Name: "build", Status: report.Pass}, c.stage}}
		if got := harnessFailure(rep); got != c.want {
			t.Errorf("stage %+v: %q, want %q", c.stage, got, c.want)
		}
	}
}
