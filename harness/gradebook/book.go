package gradebook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/10xdev/gw10/harness/report"
)

// SubmissionFile is the file beside a grade's reports that says which
// roster line the grade is for: the learner, and the repository and ref as
// the roster gave them (a workflow grades a bundle; the roster names the
// URL). Whoever runs the grade writes it before any learner code runs.
const SubmissionFile = "submission.json"

// GradeFile is the grade's JSON report (package report), which every grade
// directory holds.
const GradeFile = "grade.json"

// Submission is the content of SubmissionFile.
type Submission struct {
	Learner    string `json:"learner"`
	Repository string `json:"repository"`
	Ref        string `json:"ref"`
}

// Graded is one grade's directory: its report, and the submission it is for.
type Graded struct {
	Dir        string
	Report     *report.Report
	Submission Submission
}

// LoadGraded reads a grade's directory: its grade.json, and its
// submission.json when it has one (a `make grade` directory has none: the
// report's own repository and ref stand in).
func LoadGraded(dir string) (Graded, error) {
	g := Graded{Dir: dir}
	data, err := os.ReadFile(filepath.Join(dir, GradeFile))
	if err != nil {
		return g, err
	}
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return g, fmt.Errorf("%s: not a grade report: %w", filepath.Join(dir, GradeFile), err)
	}
	if rep.Grading == nil || !rep.Grading.Official {
		return g, fmt.Errorf("%s: not a grade of a submission (gw10 grade --submission)", filepath.Join(dir, GradeFile))
	}
	g.Report = &rep
	g.Submission = Submission{Repository: rep.Grading.Submission.Repository, Ref: rep.Grading.Submission.Ref}
	data, err = os.ReadFile(filepath.Join(dir, SubmissionFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return g, err
	default:
		var s Submission
		if err := json.Unmarshal(data, &s); err != nil {
			return g, fmt.Errorf("%s: %w", filepath.Join(dir, SubmissionFile), err)
		}
		if s.Repository != "" {
			g.Submission = s
		}
	}
	return g, nil
}

// WriteSubmission writes dir's SubmissionFile.
func WriteSubmission(dir string, s Submission) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, SubmissionFile), append(data, '\n'), 0o644)
}

// FindGraded walks each root for grade directories (those holding a
// grade.json), skipping hidden directories (a grade still running writes
// into one). What could not be read is returned beside what could.
func FindGraded(roots []string) ([]Graded, []error) {
	var out []Graded
	var errs []error
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if d.IsDir() || d.Name() != GradeFile {
				return nil
			}
			g, err := LoadGraded(filepath.Dir(p))
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			out = append(out, g)
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("reading %s: %w", root, err))
		}
	}
	return out, errs
}

// Row is one submission of the gradebook.
type Row struct {
	Learner, Repository, Ref string
	// Commit is the submission's commit; GraderCommit the one the grader
	// was built from. Both empty when there is no grade.
	Commit, GraderCommit string
	// Report is the grade (nil: none could be made, and NoGrade says why).
	Report *report.Report
	// Dir is the grade's directory.
	Dir     string
	NoGrade string
}

// RowOf is the row of a graded submission.
func RowOf(g Graded) Row {
	r := Row{Learner: g.Submission.Learner, Repository: g.Submission.Repository, Ref: g.Submission.Ref, Report: g.Report, Dir: g.Dir}
	if gr := g.Report.Grading; gr != nil {
		r.Commit = gr.Submission.Commit
		if gr.Grader != nil {
			r.GraderCommit = gr.Grader.Commit
		}
	}
	return r
}

// Gradable says whether the row has a grade of a gradable submission.
func (r Row) Gradable() bool { return r.Report != nil && r.Report.Summary.Gradable }

// Reason is why the row has no points: the submission is not gradable, or
// no grade could be made.
func (r Row) Reason() string {
	switch {
	case r.Report == nil:
		return "no grade: " + r.NoGrade
	case !r.Report.Summary.Gradable && r.Report.Grading != nil:
		return r.Report.Grading.Reason
	}
	return ""
}

// Status is the row's verdict on a check ("" when its grade has no such
// check, or there is no grade).
func (r Row) Status(check string) report.Status {
	if r.Report == nil {
		return ""
	}
	for _, c := range r.Report.Checks {
		if c.ID == check {
			return c.Status
		}
	}
	return ""
}

// ClauseStatus is the row's verdict on a contract clause: fail when a
// check that proves it failed, skip when one did not run, pass when every
// check that proves it passed, "" when none of its checks proves it.
func (r Row) ClauseStatus(clause string) report.Status {
	if r.Report == nil {
		return ""
	}
	var st report.Status
	for _, c := range r.Report.Checks {
		if !slices.Contains(c.Clauses, clause) {
			continue
		}
		switch {
		case c.Status == report.Fail:
			return report.Fail
		case c.Status == report.Skip:
			st = report.Skip
		case st == "":
			st = report.Pass
		}
	}
	return st
}

// Check is a column of the gradebook: a check as the grades name it.
type Check struct {
	ID, Title string
	Points    int
	Clauses   []string
}

// Book is a gradebook: its rows in order, and its columns.
type Book struct {
	Rows    []Row
	Checks  []Check
	Clauses []string
}

// NewBook orders rows (by learner, repository, commit) and takes the
// columns from their grades: every check in the order the grades list them,
// every clause in the order the checks name them.
func NewBook(rows []Row) *Book {
	b := &Book{Rows: slices.Clone(rows)}
	sort.SliceStable(b.Rows, func(i, j int) bool {
		x, y := b.Rows[i], b.Rows[j]
		if x.Learner != y.Learner {
			return x.Learner < y.Learner
		}
		if x.Repository != y.Repository {
			return x.Repository < y.Repository
		}
		if x.Commit != y.Commit {
			return x.Commit < y.Commit
		}
		return x.GraderCommit < y.GraderCommit
	})
	seen := map[string]bool{}
	seenClause := map[string]bool{}
	for _, r := range b.Rows {
		if r.Report == nil {
			continue
		}
		for _, c := range r.Report.Checks {
			if !seen[c.ID] {
				seen[c.ID] = true
				b.Checks = append(b.Checks, Check{ID: c.ID, Title: c.Title, Points: c.Points, Clauses: c.Clauses})
			}
			for _, cl := range c.Clauses {
				if !seenClause[cl] {
					seenClause[cl] = true
					b.Clauses = append(b.Clauses, cl)
				}
			}
		}
	}
	return b
}

// Merge is the gradebook of every grade found under roots (FindGraded): one
// row per repository, commit and grader commit, however many directories
// hold a grade of it (a grade made here and the same one made by the
// workflow are one row; the first directory in lexical order is kept).
func Merge(roots []string) (*Book, []error) {
	found, errs := FindGraded(roots)
	sort.Slice(found, func(i, j int) bool { return found[i].Dir < found[j].Dir })
	seen := map[[3]string]bool{}
	var rows []Row
	for _, g := range found {
		r := RowOf(g)
		key := [3]string{r.Repository, r.Commit, r.GraderCommit}
		if seen[key] {
			continue
		}
		seen[key] = true
		rows = append(rows, r)
	}
	return NewBook(rows), errs
}
