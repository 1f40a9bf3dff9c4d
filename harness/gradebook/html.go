package gradebook

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/10xdev/gw10/harness/report"
)

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("gradebook").Parse(pageTemplate))

// maxMessage bounds a check's message shown in a learner's summary (the
// whole message is in the grade's own reports, which the summary links).
const maxMessage = 4000

type pageView struct {
	Rows, Graded, NotGradable, NoGrade int
	Graders                            []string
	Checks                             []Check
	Table                              []rowView
	CheckHeat, ClauseHeat              heatView
}

type rowView struct {
	Anchor, Learner, Repository, Ref string
	Commit, CommitShort              string
	Grader, GraderShort              string
	Points, Total                    string
	PointsSort                       int
	Cells                            []cellView
	Reason, Warning, Headline        string
	Links                            []linkView
	Checks                           []checkView
}

type cellView struct {
	Status, Label, Title string
}

type linkView struct {
	Name string
	Href string
}

type checkView struct {
	ID, Title, Status string
	Points            string
	Message           string
	Causes            []string
}

type heatView struct {
	Kind string
	Cols []heatCol
	Rows []heatRow
}

type heatCol struct {
	ID, Title       string
	Failing, Of     int
	Level           int // 0 (nobody) … 5 (everybody) did not pass it
	FailingFraction string
}

type heatRow struct {
	Anchor, Learner, Points string
	Cells                   []cellView
}

// WriteHTML writes the gradebook page: self-contained (no request leaves
// it: its Content-Security-Policy forbids them), its table sortable by any
// column, a heat map of the checks and one of the contract clauses (the
// columns ordered by how many submissions did not pass them, each cell a
// link to that learner's summary below), and each learner's summary with
// links to their grade's own reports, relative to dir (where the page
// goes).
func (b *Book) WriteHTML(w io.Writer, dir string) error {
	v := pageView{Rows: len(b.Rows), Checks: b.Checks}
	graders := map[string]bool{}
	for i, r := range b.Rows {
		switch {
		case r.Report == nil:
			v.NoGrade++
		case !r.Report.Summary.Gradable:
			v.NotGradable++
			v.Graded++
		default:
			v.Graded++
		}
		if r.GraderCommit != "" && !graders[r.GraderCommit] {
			graders[r.GraderCommit] = true
			v.Graders = append(v.Graders, short(r.GraderCommit))
		}
		v.Table = append(v.Table, b.rowView(i, r, dir))
	}
	sort.Strings(v.Graders)
	v.CheckHeat = b.heat("checks", v.Table, checkCols(b.Checks), func(r Row, id string) report.Status { return r.Status(id) })
	var clauseCols []heatCol
	for _, cl := range b.Clauses {
		clauseCols = append(clauseCols, heatCol{ID: cl, Title: "contract clause " + cl + ", proved by " + strings.Join(b.provers(cl), ", ")})
	}
	v.ClauseHeat = b.heat("clauses", v.Table, clauseCols, func(r Row, id string) report.Status { return r.ClauseStatus(id) })
	if err := page.Execute(w, v); err != nil {
		return fmt.Errorf("rendering the gradebook: %w", err)
	}
	return nil
}

func checkCols(checks []Check) []heatCol {
	var out []heatCol
	for _, c := range checks {
		out = append(out, heatCol{ID: c.ID, Title: c.Title})
	}
	return out
}

// provers are the checks that prove a clause.
func (b *Book) provers(clause string) []string {
	var out []string
	for _, c := range b.Checks {
		for _, cl := range c.Clauses {
			if cl == clause {
				out = append(out, c.ID)
			}
		}
	}
	return out
}

func (b *Book) rowView(i int, r Row, dir string) rowView {
	rv := rowView{
		Anchor: fmt.Sprintf("learner-%d", i+1), Learner: visible(r.Learner), Repository: visible(r.Repository), Ref: visible(r.Ref),
		Commit: r.Commit, CommitShort: short(r.Commit), Grader: r.GraderCommit, GraderShort: short(r.GraderCommit),
		Reason: visible(r.Reason()), PointsSort: -1,
	}
	if rv.Ref == "" {
		rv.Ref = "HEAD"
	}
	if r.Report != nil {
		s := r.Report.Summary
		rv.Points, rv.Total, rv.PointsSort = fmt.Sprint(s.Points), fmt.Sprint(s.TotalPoints), s.Points
		rv.Warning, rv.Headline = visible(r.Report.Warning), visible(r.Report.Headline())
		for _, c := range r.Report.Checks {
			msg := c.Message
			if len(msg) > maxMessage {
				msg = msg[:maxMessage] + "\n… (cut; the whole message is in the grade's reports)"
			}
			var causes []string
			for _, cause := range c.Causes {
				causes = append(causes, visible(cause))
			}
			rv.Checks = append(rv.Checks, checkView{ID: c.ID, Title: c.Title, Status: string(c.Status),
				Points: fmt.Sprintf("%d/%d", c.Earned, c.Points), Message: visible(msg), Causes: causes})
		}
		for _, name := range []string{"summary.md", "timeline.html", GradeFile, "junit.xml", "grade.log"} {
			if href, ok := relLink(dir, filepath.Join(r.Dir, name)); ok {
				rv.Links = append(rv.Links, linkView{Name: name, Href: href})
			}
		}
	} else {
		rv.Headline = rv.Reason
	}
	for _, c := range b.Checks {
		st := r.Status(c.ID)
		rv.Cells = append(rv.Cells, cellView{Status: statusClass(st), Label: statusLabel(st), Title: c.ID + ": " + statusWord(st)})
	}
	return rv
}

// heat is a heat map: one column per item (check or clause), ordered by
// how many rows with a grade did not pass it (most first), one row per
// gradebook row.
func (b *Book) heat(kind string, rows []rowView, cols []heatCol, status func(Row, string) report.Status) heatView {
	h := heatView{Kind: kind}
	for i := range cols {
		for _, r := range b.Rows {
			if r.Report == nil {
				continue
			}
			cols[i].Of++
			if st := status(r, cols[i].ID); st != report.Pass {
				cols[i].Failing++
			}
		}
		if cols[i].Of > 0 {
			cols[i].Level = (cols[i].Failing*5 + cols[i].Of - 1) / cols[i].Of
			cols[i].FailingFraction = fmt.Sprintf("%d/%d", cols[i].Failing, cols[i].Of)
		}
	}
	sort.SliceStable(cols, func(i, j int) bool { return cols[i].Failing > cols[j].Failing })
	h.Cols = cols
	for i, r := range b.Rows {
		hr := heatRow{Anchor: rows[i].Anchor, Learner: rows[i].Learner, Points: rows[i].Points}
		if hr.Learner == "" {
			hr.Learner = rows[i].Repository
		}
		for _, c := range cols {
			st := status(r, c.ID)
			hr.Cells = append(hr.Cells, cellView{Status: statusClass(st), Label: statusLabel(st), Title: c.ID + ": " + statusWord(st)})
		}
		h.Rows = append(h.Rows, hr)
	}
	return h
}

// visible spells out the characters of a learner's string that would
// change how the page reads rather than show: control characters (but
// newlines and tabs) as \x.., and the bidirectional overrides and
// isolates (a name that turns the rest of its line around) as \u.....
// html/template escapes the markup.
func visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e || r == 0x200f || r == 0x061c:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func statusClass(st report.Status) string {
	if st == "" {
		return "none"
	}
	return string(st)
}

func statusLabel(st report.Status) string {
	switch st {
	case report.Pass:
		return "✓"
	case report.Fail:
		return "✗"
	case report.Skip:
		return "–"
	}
	return ""
}

func statusWord(st report.Status) string {
	switch st {
	case report.Pass:
		return "passed"
	case report.Fail:
		return "failed"
	case report.Skip:
		return "not run"
	}
	return "no grade"
}

// relLink is the link from a page in dir to the file at target, when the
// file exists: a relative URL, each segment escaped.
func relLink(dir, target string) (string, bool) {
	if _, err := os.Stat(target); err != nil {
		return "", false
	}
	absDir, err1 := filepath.Abs(dir)
	absTarget, err2 := filepath.Abs(target)
	if err1 != nil || err2 != nil {
		return "", false
	}
	rel, err := filepath.Rel(absDir, absTarget)
	if err != nil {
		return "", false
	}
	segs := strings.Split(filepath.ToSlash(rel), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/"), true
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Write writes gradebook.csv and gradebook.html into dir.
func (b *Book) Write(dir string) (csvPath, htmlPath string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("creating %s: %w", dir, err)
	}
	csvPath, htmlPath = filepath.Join(dir, "gradebook.csv"), filepath.Join(dir, "gradebook.html")
	if err := writeAtomically(csvPath, b.WriteCSV); err != nil {
		return "", "", err
	}
	if err := writeAtomically(htmlPath, func(w io.Writer) error { return b.WriteHTML(w, dir) }); err != nil {
		return "", "", err
	}
	return csvPath, htmlPath, nil
}

// writeAtomically writes path through a temporary file renamed over it: a
// reader never sees half a gradebook.
func writeAtomically(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(f.Name(), path)
}
