package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// workbook is the real workbook root, seen from harness/cmd/gw10: the
// upstream every grading test grades in (at its HEAD).
var workbook, _ = filepath.Abs(filepath.Join("..", "..", ".."))

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// submission clones the workbook as a learner's fork, applies edits (path →
// content; "" removes the file) and commits them.
func submission(t *testing.T, edits map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fork")
	git(t, filepath.Dir(dir), "clone", "-q", workbook, dir)
	for name, body := range edits {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if body == "" {
			git(t, dir, "rm", "-q", "-r", name)
			continue
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "the learner's work")
	return dir
}

// staleReports leaves reports as a previous run would have.
func staleReports(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	for _, name := range []string{"grade.json", "junit.xml", "summary.md"} {
		if err := os.WriteFile(filepath.Join(out, name), []byte("STALE: 9/9 checks pass"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

type reports struct {
	json  report.Report
	junit struct {
		Failures   int `xml:"failures,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
	}
	markdown string
}

func (r reports) property(name string) string {
	for _, p := range r.junit.Properties {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

func readReports(t *testing.T, dir string) reports {
	t.Helper()
	var r reports
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(string(b), "STALE") {
			t.Fatalf("%s is the previous run's", name)
		}
		return b
	}
	if err := json.Unmarshal(read("grade.json"), &r.json); err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(read("junit.xml"), &r.junit); err != nil {
		t.Fatal(err)
	}
	r.markdown = string(read("summary.md"))
	return r
}

func wantExit(t *testing.T, err error, code int) {
	t.Helper()
	var ee exitError
	if !errors.As(err, &ee) || ee.code != code {
		t.Fatalf("runGrade: %v, want exit status %d", err, code)
	}
}

// TestANotGradableSubmissionSaysSoInEveryReport: no check runs, and the
// JSON, JUnit and Markdown agree: not gradable, 0 points, with both commits.
func TestANotGradableSubmissionSaysSoInEveryReport(t *testing.T) {
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	sub := submission(t, map[string]string{steps.Default().Dir + "/go.mod": ""})
	out := staleReports(t)
	// Pinned: others may commit to the workbook while the test runs.
	upHead := git(t, workbook, "rev-parse", "HEAD")
	// A grader built from that commit (as gradeCommand's clean build is).
	err := runGradeAs(context.Background(), []string{"--root", workbook, "--upstream-ref", upHead, "--submission", sub, "--out", out}, upHead)
	wantExit(t, err, 1)

	r := readReports(t, out)
	g, s := r.json.Grading, r.json.Summary
	if g == nil || s.Gradable || s.OK || s.Points != 0 || g.Gradable || !strings.Contains(g.Reason, steps.Default().Dir+"/go.mod") {
		t.Fatalf("JSON: summary %+v, grading %+v", s, g)
	}
	head := git(t, sub, "rev-parse", "HEAD")
	if g.Submission.Commit != head || g.Upstream.Commit != upHead || g.Upstream.Ref != upHead || !g.Official {
		t.Errorf("JSON revisions: %+v %+v", g.Submission, g.Upstream)
	}
	if r.junit.Failures == 0 || r.property("gradable") != "false" || r.property("points") != "0" ||
		r.property("submission.commit") != head || r.property("upstream.commit") != upHead {
		t.Errorf("JUnit: %+v", r.junit)
	}
	if !strings.Contains(r.markdown, "❌ not gradable") || !strings.Contains(r.markdown, head[:12]) ||
		strings.Contains(r.markdown, "checks pass") || !strings.Contains(r.markdown, "Grader: built from a clean export of the upstream at `"+upHead[:12]+"`") {
		t.Errorf("Markdown:\n%s", r.markdown)
	}
}

// TestARunThatCannotStartLeavesNoReports: a bad ref is an error, and the
// previous run's reports are gone rather than looking like this run's.
func TestARunThatCannotStartLeavesNoReports(t *testing.T) {
	out := staleReports(t)
	err := runGrade(context.Background(), []string{"--root", workbook, "--submission", workbook, "--submission-ref", "no-such-ref", "--out", out})
	if err == nil || !strings.Contains(err.Error(), "no-such-ref") {
		t.Fatalf("runGrade: %v", err)
	}
	left, _ := os.ReadDir(out)
	if len(left) != 0 {
		t.Fatalf("reports left behind: %v", left)
	}
}

// TestATamperedSubmissionGetsItsOwnGrade grades, on a real API server, the
// pristine skeleton in a fork whose grader, Makefile and workflow were
// edited to give full marks and whose committed ClusterRole grants
// everything: the grade is the skeleton's, the edits are listed as ignored,
// the role as drift, and the fork's files are untouched.
func TestATamperedSubmissionGetsItsOwnGrade(t *testing.T) {
	testenv.Needs(t, testenv.Cluster) // a full grading run
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	readFile := func(name string) string {
		b, err := os.ReadFile(filepath.Join(workbook, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	roleFile := steps.Default().Dir + "/config/rbac/role.yaml"
	role := readFile(roleFile) + "- apiGroups: ['*']\n  resources: ['*']\n  verbs: ['*']\n"
	sub := submission(t, map[string]string{
		"harness/report/report.go":    readFile("harness/report/report.go") + "\nfunc init() { /* every check passes */ }\n",
		"Makefile":                    "grade:\n\t@echo 'All 9 checks pass (100/100 points)'\n",
		".github/workflows/grade.yml": "name: grade\non: push\njobs: {}\n",
		roleFile:                      role,
	})
	out := staleReports(t)
	// runGrade: a grader built from a working tree (this test binary).
	err := runGrade(context.Background(), []string{"--root", workbook, "--submission", sub, "--out", out})
	wantExit(t, err, 1)

	r := readReports(t, out)
	g, s := r.json.Grading, r.json.Summary
	if g == nil || g.Grader == nil || g.Grader.Reason == "" || !strings.HasPrefix(r.json.Warning, "NOT AN OFFICIAL GRADE (the grader is not the upstream commit's)") {
		t.Errorf("a grader built from a working tree is not named: %+v, warning %q", g, r.json.Warning)
	}
	if g == nil || !g.Official || !s.Gradable || s.OK || s.Passed == s.Total || s.Points == s.TotalPoints {
		t.Fatalf("the skeleton got a passing grade: summary %+v, grading %+v", s, g)
	}
	for _, f := range []string{"harness/report/report.go", "Makefile", ".github/workflows/grade.yml"} {
		if !slices.Contains(g.Ignored, f) {
			t.Errorf("%s is not listed as ignored: %v", f, g.Ignored)
		}
	}
	if !slices.Equal(g.GeneratedDrift, []string{roleFile}) {
		t.Errorf("generated drift %v, want the role", g.GeneratedDrift)
	}
	if st := git(t, sub, "status", "--porcelain"); st != "" {
		t.Errorf("grading changed the submission:\n%s", st)
	}
	if r.property("points") != strconv.Itoa(s.Points) || r.junit.Failures == 0 {
		t.Errorf("JUnit: points %q and %d failures; JSON: %d points", r.property("points"), r.junit.Failures, s.Points)
	}
}

// TestAGradesFirstLineSaysUncommittedChangesAreGraded: a learner's feedback
// run grades the working tree; its first line says so, not only its last.
func TestAGradesFirstLineSaysUncommittedChangesAreGraded(t *testing.T) {
	g := report.Grading{
		Submission: report.Revision{Repository: "/tmp/learner", Ref: "HEAD", Commit: "d51964570ef1aa", Uncommitted: true},
		Upstream:   report.Revision{Ref: "HEAD", Commit: "d51964570ef1aa"},
	}
	if got := gradingHeader("stepX", g); !strings.Contains(got, "at HEAD (d51964570ef1), with its uncommitted changes, in the upstream") {
		t.Errorf("first line of a grade of a working tree with edits: %q", got)
	}
	g.Submission.Uncommitted = false
	if got := gradingHeader("stepX", g); strings.Contains(got, "uncommitted") {
		t.Errorf("first line of a grade of a clean tree: %q", got)
	}
}
