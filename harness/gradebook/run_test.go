package gradebook

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/report"
)

const graderCommit = "9999999999999999999999999999999999999999"

// fixtureChecks are the checks of a stand-in step: ID, clauses, points.
var fixtureChecks = []struct {
	id      string
	clauses []string
	points  int
}{
	{"crd-schema", []string{"A-SCHEMA"}, 10},
	{"self-heal", []string{"S-MISSING", "Q-NO-POLL"}, 20},
	{"quiescent", []string{"ST-NO-CHURN", "Q-NO-POLL"}, 10},
}

// fixtureReport is a grade as gw10 grade writes it: statuses are the
// checks' verdicts in fixtureChecks' order; none: not gradable.
func fixtureReport(repository, ref, commit, grader, message string, statuses ...report.Status) *report.Report {
	rep := &report.Report{Dir: "lesson1", Cluster: "envtest", Started: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)}
	g := &report.Grading{Official: true, Gradable: len(statuses) > 0,
		Upstream:   report.Revision{Repository: "/up", Ref: grader, Commit: grader},
		Submission: report.Revision{Repository: repository, Ref: ref, Commit: commit},
		Sandbox:    &report.Sandbox{Enforced: true, User: "gw10-sandbox0"},
		Grader:     &report.Grader{Commit: grader}}
	if !g.Gradable {
		g.Reason = "the submission has no lesson1/go.mod"
	}
	for i, c := range fixtureChecks {
		st := report.Skip
		if g.Gradable {
			st = statuses[i]
		}
		r := report.CheckResult{ID: c.id, Title: "the " + c.id + " check", Clauses: c.clauses, Points: c.points, Status: st}
		if st == report.Pass {
			r.Earned = c.points
		} else if st == report.Fail {
			r.Message = message
		}
		rep.Checks = append(rep.Checks, r)
	}
	rep.Grading = g
	rep.Finish()
	return rep
}

// standIn is a Grader and a Resolver for submissions that say what they
// earn: behaviour[repository] is "pass", "fail", "not gradable", "error"
// or "busy" (the harness fails once, then the grade passes).
type standIn struct {
	commits   map[string]string
	behaviour map[string]string
	message   string

	mu                  sync.Mutex
	graded              []string
	running, maxRunning atomic.Int32
	busy                map[string]bool
}

func (s *standIn) resolve(_ context.Context, e Entry) (string, error) {
	c, ok := s.commits[e.Repository]
	if !ok {
		return "", fmt.Errorf("cloning the submission: %s does not exist", e.Repository)
	}
	return c, nil
}

func (s *standIn) grade(_ context.Context, job Job) error {
	n := s.running.Add(1)
	defer s.running.Add(-1)
	for {
		m := s.maxRunning.Load()
		if n <= m || s.maxRunning.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(30 * time.Millisecond)
	s.mu.Lock()
	s.graded = append(s.graded, job.Entry.Repository)
	first := !s.busy[job.Entry.Repository]
	if s.busy == nil {
		s.busy = map[string]bool{}
	}
	s.busy[job.Entry.Repository] = true
	s.mu.Unlock()
	fmt.Fprintf(job.Log, "grading %s\n", job.Entry.Repository)
	var statuses []report.Status
	switch s.behaviour[job.Entry.Repository] {
	case "pass":
		statuses = []report.Status{report.Pass, report.Pass, report.Pass}
	case "fail":
		statuses = []report.Status{report.Pass, report.Fail, report.Fail}
	case "not gradable":
	case "busy":
		if first {
			return fmt.Errorf("%w (a busy machine)", ErrHarness)
		}
		statuses = []report.Status{report.Pass, report.Pass, report.Fail}
	default:
		return errors.New("gw10 grade: exit status 1")
	}
	rep := fixtureReport(job.Entry.Repository, orHEAD(job.Entry.Ref), s.commits[job.Entry.Repository], graderCommit, s.message, statuses...)
	return rep.WriteJSON(filepath.Join(job.Out, GradeFile))
}

func (s *standIn) gradedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.graded)
}

func sampleCohort() ([]Entry, *standIn) {
	entries := []Entry{
		{Line: 1, Repository: "/c/ada", Ref: "main", Learner: "Ada"},
		{Line: 2, Repository: "/c/bob", Learner: "Bob"},
		{Line: 3, Repository: "/c/ada-twin", Learner: "Ada's twin"},
		{Line: 4, Repository: "/c/ivan", Learner: "Ivan"},
		{Line: 5, Repository: "/c/judy", Learner: "Judy"},
		{Line: 6, Repository: "/c/gone", Learner: "Gone"},
		{Line: 7, Repository: "/c/crash", Learner: "Crash"},
		{Line: 8, Repository: "/c/ada", Ref: "refs/heads/main", Learner: "Ada again"},
	}
	s := &standIn{
		commits: map[string]string{
			"/c/ada": strings.Repeat("a", 40), "/c/ada-twin": strings.Repeat("a", 40), "/c/bob": strings.Repeat("b", 40),
			"/c/ivan": strings.Repeat("1", 40), "/c/judy": strings.Repeat("2", 40), "/c/crash": strings.Repeat("3", 40),
		},
		behaviour: map[string]string{"/c/ada": "pass", "/c/bob": "fail", "/c/ivan": "not gradable", "/c/judy": "busy", "/c/crash": "error"},
		message:   "expected a reconcile\nobserved none",
	}
	return entries, s
}

func runCohort(t *testing.T, out string, entries []Entry, s *standIn, jobs int) (Summary, string) {
	t.Helper()
	var progress bytes.Buffer
	sum, err := Run(context.Background(), Options{Entries: entries, Out: out, Jobs: jobs, GraderCommit: graderCommit,
		Resolve: s.resolve, Grade: s.grade, Progress: &progress})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress.String())
	}
	return sum, progress.String()
}

// TestACohortIsGradedOnceAtMostJobsAtATime: each commit is graded once (a
// twin repository at the same commit gets a copy, the same repository
// named twice one row), at most Jobs at a time, with a line per
// submission; a grade the harness could not make is made once more; a run
// again grades only what got no grade.
func TestACohortIsGradedOnceAtMostJobsAtATime(t *testing.T) {
	entries, s := sampleCohort()
	out := t.TempDir()
	sum, progress := runCohort(t, out, entries, s, 2)
	if m := s.maxRunning.Load(); m > 2 {
		t.Errorf("%d grades ran at once, Jobs is 2", m)
	}
	// ada, bob, ivan, judy twice, crash: the twin is copied, "gone" never resolves.
	if got := s.gradedCount(); got != 6 {
		t.Errorf("%d grades made, want 6: %v", got, s.graded)
	}
	if sum.Graded != 4 || sum.Reused != 1 || sum.NoGrade != 2 {
		t.Errorf("summary %+v, want 4 graded, 1 copied, 2 without a grade\n%s", sum, progress)
	}
	for _, want := range []string{
		"line 1 (Ada): grading /c/ada at main (aaaaaaaaaaaa) ...",
		"line 3 (Ada's twin): the same commit was graded for another repository: its grade, copied: all 3 checks pass, 40/40 points",
		"line 8 (Ada again): the same repository and commit as line 1: one row for both",
		"line 5 (Judy): no grade: the harness's own stage failed (a busy machine); grading it once more",
		"line 5 (Judy): 2/3 checks pass, 30/40 points",
		"line 6 (Gone): no grade: cloning the submission: /c/gone does not exist",
		"line 7 (Crash): no grade: gw10 grade: exit status 1 (its output: ",
		"line 4 (Ivan): not gradable: the submission has no lesson1/go.mod",
		"[6/6]",
	} {
		if !strings.Contains(progress, want) {
			t.Errorf("the progress does not say %q:\n%s", want, progress)
		}
	}
	rows := sum.Book.Rows
	if len(rows) != 7 {
		t.Fatalf("%d rows, want 7 (the same repository and commit twice is one row)", len(rows))
	}
	checkRowsMatchTheirGrades(t, sum.Book)

	before := s.gradedCount()
	sum2, progress2 := runCohort(t, out, entries, s, 2)
	if s.gradedCount() != before+1 { // crash, again
		t.Errorf("the second run graded %v, want only the submission without a grade", s.graded[before:])
	}
	if !strings.Contains(progress2, "5 graded before by this grader, 1 to grade") || !strings.Contains(progress2, "line 1 (Ada): graded before: all 3 checks pass") {
		t.Errorf("the second run's progress:\n%s", progress2)
	}
	if a, b := csvOf(t, sum.Book), csvOf(t, sum2.Book); a != b {
		t.Errorf("the same submissions at the same commits gave other rows:\n%s\n---\n%s", a, b)
	}
	if left, _ := filepath.Glob(filepath.Join(out, GradesDir, ".grading-*")); len(left) != 0 {
		t.Errorf("grades in progress left behind: %v", left)
	}
}

// checkRowsMatchTheirGrades: every cell of every row with a grade is what
// its grade.json says.
func checkRowsMatchTheirGrades(t *testing.T, b *Book) {
	t.Helper()
	var buf bytes.Buffer
	if err := b.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := recs[0]
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for i, r := range b.Rows {
		rec := recs[i+1]
		if r.Report == nil {
			if !strings.HasPrefix(rec[col["not gradable"]], "no grade: ") || rec[col["points"]] != "" {
				t.Errorf("row %d has no grade but reads %q", i, rec)
			}
			continue
		}
		g, err := LoadGraded(r.Dir)
		if err != nil {
			t.Fatal(err)
		}
		rep := g.Report
		if rec[col["commit"]] != rep.Grading.Submission.Commit || rec[col["grader commit"]] != rep.Grading.Grader.Commit ||
			rec[col["points"]] != fmt.Sprint(rep.Summary.Points) || rec[col["total points"]] != fmt.Sprint(rep.Summary.TotalPoints) ||
			rec[col["repository"]] != NeutraliseCell(g.Submission.Repository) || rec[col["learner"]] != NeutraliseCell(g.Submission.Learner) {
			t.Errorf("row %d %q does not match its grade %s", i, rec, r.Dir)
		}
		for _, c := range rep.Checks {
			if rec[col[c.ID]] != string(c.Status) {
				t.Errorf("row %d: %s is %q, its grade says %q", i, c.ID, rec[col[c.ID]], c.Status)
			}
		}
		if want := NeutraliseCell(rep.Grading.Reason); rec[col["not gradable"]] != want {
			t.Errorf("row %d: reason %q, want %q", i, rec[col["not gradable"]], want)
		}
	}
}

func csvOf(t *testing.T, b *Book) string {
	t.Helper()
	var buf bytes.Buffer
	if err := b.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestTheMergeOfLocalAndWorkflowGradesIsTheSameBook: the workflow's
// artifacts (one directory per submission: grade.json and submission.json,
// which names the URL the bundle came from) and a local run's directory
// merge into the rows a local run gives, and the same grade found in both
// is one row.
func TestTheMergeOfLocalAndWorkflowGradesIsTheSameBook(t *testing.T) {
	entries, s := sampleCohort()
	local := t.TempDir()
	sum, _ := runCohort(t, local, entries, s, 2)
	var graded []Row
	for _, r := range sum.Book.Rows {
		if r.Report != nil {
			graded = append(graded, r)
		}
	}
	want := csvOf(t, NewBook(graded))

	merged, errs := Merge([]string{local})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := csvOf(t, merged); got != want {
		t.Errorf("the merge of the local run:\n%s\nwant\n%s", got, want)
	}

	// The workflow's shape: artifacts grade-<run>-<id>/, a bundle graded at
	// refs/heads/submission, the roster's URL and ref in submission.json.
	ci := t.TempDir()
	for i, r := range graded {
		dir := filepath.Join(ci, fmt.Sprintf("grade-4242-%d", i+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		rep := *r.Report
		grading := *rep.Grading
		grading.Submission = report.Revision{Repository: "/home/runner/work/_temp/in/submission.bundle", Ref: "refs/heads/submission", Commit: r.Commit}
		rep.Grading = &grading
		if err := rep.WriteJSON(filepath.Join(dir, GradeFile)); err != nil {
			t.Fatal(err)
		}
		if err := WriteSubmission(dir, Submission{Learner: r.Learner, Repository: r.Repository, Ref: r.Ref}); err != nil {
			t.Fatal(err)
		}
	}
	fromCI, errs := Merge([]string{ci})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := csvOf(t, fromCI); got != want {
		t.Errorf("the merge of the workflow's artifacts:\n%s\nwant\n%s", got, want)
	}
	both, errs := Merge([]string{local, ci})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := csvOf(t, both); got != want {
		t.Errorf("the merge of both:\n%s\nwant\n%s", got, want)
	}

	// A directory that is not a grade is named, and the others merged.
	bad := filepath.Join(ci, "grade-4242-99")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, GradeFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, errs := Merge([]string{ci})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "grade-4242-99") || len(again.Rows) != len(graded) {
		t.Errorf("a broken grade.json: errors %v, %d rows", errs, len(again.Rows))
	}
}

// TestCSVCellsAreNeverFormulas: a learner's name, repository, ref or a
// check's output that a spreadsheet would run is text, and the CSV reads
// back as the same data.
func TestCSVCellsAreNeverFormulas(t *testing.T) {
	hostile := []string{`=HYPERLINK("http://evil.example","x")`, "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)", "\t=1", "\r=1"}
	var rows []Row
	for i, h := range hostile {
		rep := fixtureReport(h, h, fmt.Sprintf("%040d", i), graderCommit, h, report.Pass, report.Fail, report.Skip)
		rows = append(rows, Row{Learner: h, Repository: h, Ref: h, Commit: rep.Grading.Submission.Commit, GraderCommit: graderCommit, Report: rep})
	}
	rows = append(rows, Row{Learner: "Nobody", Repository: "/c/x", NoGrade: "=cmd|' /C calc'!A0"})
	b := NewBook(rows)
	recs, err := csv.NewReader(strings.NewReader(csvOf(t, b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		for _, cell := range rec {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("a cell a spreadsheet would run: %q", cell)
			}
		}
	}
	learners := map[string]bool{}
	for _, rec := range recs[1:] {
		learners[rec[0]] = true
	}
	for _, h := range hostile {
		if !learners["'"+h] {
			t.Errorf("no learner cell %q: %v", "'"+h, learners)
		}
	}
}
