package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/gradebook"
	"github.com/10xdev/gw10/harness/steps"
)

// hostileLearner is a learner's name that a spreadsheet would run and a
// page would render.
const hostileLearner = `=HYPERLINK("http://evil.example","x") <img src=x onerror=alert(1)>`

// TestAGradebookOfRealSubmissionsMatchesTheirGrades grades a roster of
// three real submissions with a real gw10 binary, as `make gradebook` does:
// the solution, a second learner's repository at the same commit, and a
// submission that is not gradable under a hostile name. Every row of the
// CSV is what its grade.json says; a second run grades nothing and writes
// the same gradebook; the not-gradable submission graded as the cohort
// workflow grades it (a bundle, submission.json beside the reports) merges
// with the local grades into the same gradebook.
func TestAGradebookOfRealSubmissionsMatchesTheirGrades(t *testing.T) {
	if testing.Short() {
		t.Skip("grades a submission on envtest")
	}
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	head := git(t, workbook, "rev-parse", "HEAD")
	bin := buildGw10(t, head)
	cohort := t.TempDir()
	solved := filepath.Join(cohort, "solved")
	git(t, cohort, "clone", "-q", workbook, solved)
	learnerStep01(t, solved, "solution")
	git(t, solved, "add", "-A")
	git(t, solved, "commit", "-qm", "solved")
	twin := filepath.Join(cohort, "twin")
	git(t, cohort, "clone", "-q", solved, twin)
	nomod := submission(t, map[string]string{steps.Default().Dir + "/go.mod": ""})
	roster := filepath.Join(cohort, "roster.csv")
	var lines bytes.Buffer
	w := csv.NewWriter(&lines)
	_ = w.WriteAll([][]string{{"repository", "ref", "learner"}, {solved, "", "Ada"}, {twin, "HEAD", "Ada's twin"}, {nomod, "", hostileLearner}})
	if err := os.WriteFile(roster, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(cohort, "book")
	run := func() string {
		t.Helper()
		cmd := exec.Command(bin, "gradebook", "--root", workbook, "--upstream-ref", head, "--roster", roster, "--out", out, "--jobs", "2")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gw10 gradebook: %v\n%s", err, b)
		}
		return string(b)
	}
	first := run()
	for _, want := range []string{
		"3 submissions, 0 graded before by this grader, 3 to grade, 2 at a time",
		"line 2 (Ada): grading ", "[1/3]", "[3/3]",
		"line 3 (Ada's twin): the same commit was graded for another repository: its grade, copied:",
		"not gradable: the submission has no " + steps.Default().Dir + "/go.mod",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("the run does not say %q:\n%s", want, first)
		}
	}
	book := mustRead(t, filepath.Join(out, "gradebook.csv"))
	rowsMatchGrades(t, out, 3)

	second := run()
	if !strings.Contains(second, "3 graded before by this grader, 0 to grade") || strings.Contains(second, "grading ") {
		t.Errorf("the second run graded again:\n%s", second)
	}
	if again := mustRead(t, filepath.Join(out, "gradebook.csv")); again != book {
		t.Errorf("the same submissions at the same commits gave another gradebook:\n%s\n---\n%s", again, book)
	}
	html := mustRead(t, filepath.Join(out, "gradebook.html"))
	for _, want := range []string{`data-heatmap="checks"`, `data-heatmap="clauses"`, `data-col="crd-schema"`, "&lt;img src=x onerror=alert(1)&gt;"} {
		if !strings.Contains(html, want) {
			t.Errorf("gradebook.html lacks %s", want)
		}
	}

	// The workflow's way: a bundle of the one ref refs/heads/submission,
	// the roster's line in submission.json, make grade into the artifact.
	ci := filepath.Join(cohort, "artifacts")
	artifact := filepath.Join(ci, "grade-4242-3")
	if err := os.MkdirAll(artifact, 0o755); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(cohort, "submission.bundle")
	git(t, nomod, "branch", "submission")
	git(t, nomod, "bundle", "create", bundle, "refs/heads/submission")
	if err := gradebook.WriteSubmission(artifact, gradebook.Submission{Learner: hostileLearner, Repository: nomod}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "grade", "--root", workbook, "--upstream-ref", head, "--submission", bundle, "--submission-ref", "refs/heads/submission", "--out", artifact)
	if b, err := cmd.CombinedOutput(); !strings.Contains(string(b), "not gradable") {
		t.Fatalf("gw10 grade of the bundle: %v\n%s", err, b)
	}
	merged := filepath.Join(cohort, "merged")
	for _, dirs := range [][]string{{filepath.Join(out, gradebook.GradesDir), ci}, {ci, filepath.Join(out, gradebook.GradesDir)}} {
		args := append([]string{"gradebook", "merge", "--out", merged}, dirs...)
		if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("gw10 gradebook merge: %v\n%s", err, b)
		}
		if got := mustRead(t, filepath.Join(merged, "gradebook.csv")); got != book {
			t.Errorf("the merge of %v is not the local gradebook:\n%s\n---\n%s", dirs, got, book)
		}
	}
	if b, err := exec.Command(bin, "gradebook", "merge", "--out", merged, ci).CombinedOutput(); err != nil {
		t.Fatalf("gw10 gradebook merge: %v\n%s", err, b)
	}
	fromCI := strings.Split(strings.TrimSpace(mustRead(t, filepath.Join(merged, "gradebook.csv"))), "\n")
	if len(fromCI) != 2 || !strings.Contains(book, fromCI[1]) {
		t.Errorf("the workflow's grade is not the local run's row:\n%s\n---\n%s", fromCI, book)
	}
}

// buildGw10 builds this command as the grader of commit (stamped as the
// clean build of it is: the test grades at that commit).
func buildGw10(t *testing.T, commit string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gw10")
	cmd := exec.Command("go", "build", "-ldflags", "-X main.sourceCommit="+commit, "-o", bin, ".")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return bin
}

// rowsMatchGrades: out's gradebook.csv has n rows, and each is what the
// grade.json of its repository's commit says, the learner's name a text
// cell.
func rowsMatchGrades(t *testing.T, out string, n int) {
	t.Helper()
	book := mustRead(t, filepath.Join(out, "gradebook.csv"))
	recs, err := csv.NewReader(strings.NewReader(book)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n+1 {
		t.Fatalf("%d rows, want %d:\n%s", len(recs)-1, n, book)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	found, errs := gradebook.FindGraded([]string{filepath.Join(out, gradebook.GradesDir)})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	grades := map[[2]string]gradebook.Graded{}
	for _, g := range found {
		grades[[2]string{g.Submission.Repository, g.Report.Grading.Submission.Commit}] = g
	}
	hostileSeen := false
	for _, rec := range recs[1:] {
		g, ok := grades[[2]string{rec[col["repository"]], rec[col["commit"]]}]
		if !ok {
			t.Errorf("no grade of the row %q", rec)
			continue
		}
		rep := g.Report
		want := map[string]string{
			"learner": gradebook.NeutraliseCell(g.Submission.Learner), "grader commit": rep.Grading.Grader.Commit,
			"points": fmt.Sprint(rep.Summary.Points), "total points": fmt.Sprint(rep.Summary.TotalPoints),
			"not gradable": gradebook.NeutraliseCell(rep.Grading.Reason), "not official": gradebook.NeutraliseCell(rep.Warning),
		}
		for _, c := range rep.Checks {
			want[c.ID] = string(c.Status)
		}
		for name, v := range want {
			if rec[col[name]] != v {
				t.Errorf("row %q: %s is %q, its grade.json (%s) says %q", rec[0], name, rec[col[name]], g.Dir, v)
			}
		}
		if rec[col["learner"]] == "'"+hostileLearner {
			hostileSeen = true
		}
	}
	if !hostileSeen {
		t.Errorf("the hostile learner's name is not a text cell:\n%s", book)
	}
}

// TestThePlanIsTheRosterAsAMatrix: the cohort workflow's matrix is the
// roster's URLs, refs (HEAD when none) and learners, numbered; a path, which
// no runner reaches, and a roster past a matrix's limit are refused.
func TestThePlanIsTheRosterAsAMatrix(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "roster.txt")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var out bytes.Buffer
	roster := write("# c\nhttps://github.com/ada/gw10.git main Ada Lovelace\ngit@github.com:bob/gw10.git\n")
	if err := runGradebookPlan([]string{"--roster", roster}, &out); err != nil {
		t.Fatal(err)
	}
	want := `[{"id":"1","line":2,"learner":"Ada Lovelace","repository":"https://github.com/ada/gw10.git","ref":"main"},` +
		`{"id":"2","line":3,"learner":"","repository":"git@github.com:bob/gw10.git","ref":"HEAD"}]` + "\n"
	if out.String() != want {
		t.Errorf("plan:\n%s\nwant\n%s", out.String(), want)
	}
	err := runGradebookPlan([]string{"--roster", write("https://github.com/ada/gw10.git\n../carol main\n")}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "line 2:") || !strings.Contains(err.Error(), "not a git URL") {
		t.Errorf("a path in the plan: %v", err)
	}
	var many strings.Builder
	for i := range maxMatrix + 1 {
		fmt.Fprintf(&many, "https://github.com/l%d/gw10.git\n", i)
	}
	if err := runGradebookPlan([]string{"--roster", write(many.String())}, io.Discard); err == nil || !strings.Contains(err.Error(), "at most 256") {
		t.Errorf("a roster past the matrix's limit: %v", err)
	}
}
