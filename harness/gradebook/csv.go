package gradebook

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CSVHeader is the gradebook's first line: the fixed columns, one column
// per check (its ID) between points and the reasons.
func (b *Book) CSVHeader() []string {
	h := []string{"learner", "repository", "ref", "commit", "grader commit", "points", "total points"}
	for _, c := range b.Checks {
		h = append(h, c.ID)
	}
	return append(h, "not gradable", "not official")
}

// CSVRecord is a row's cells, in CSVHeader's order: a check's cell is
// pass, fail or skip (not run), empty when the row's grade has no such
// check; points are empty when there is no grade.
func (b *Book) CSVRecord(r Row) []string {
	rec := []string{r.Learner, r.Repository, r.Ref, r.Commit, r.GraderCommit}
	if r.Report != nil {
		rec = append(rec, strconv.Itoa(r.Report.Summary.Points), strconv.Itoa(r.Report.Summary.TotalPoints))
	} else {
		rec = append(rec, "", "")
	}
	for _, c := range b.Checks {
		rec = append(rec, string(r.Status(c.ID)))
	}
	warning := ""
	if r.Report != nil {
		warning = r.Report.Warning
	}
	return append(rec, r.Reason(), warning)
}

// WriteCSV writes the gradebook as CSV (RFC 4180, through encoding/csv).
// Every cell is data: one that a spreadsheet would read as a formula (it
// starts with = + - @, a tab or a carriage return) is prefixed with a
// single quote, so a learner named "=HYPERLINK(…)" is shown, never run.
func (b *Book) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(neutralise(b.CSVHeader())); err != nil {
		return fmt.Errorf("writing the gradebook's CSV: %w", err)
	}
	for _, r := range b.Rows {
		if err := cw.Write(neutralise(b.CSVRecord(r))); err != nil {
			return fmt.Errorf("writing the gradebook's CSV: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing the gradebook's CSV: %w", err)
	}
	return nil
}

func neutralise(rec []string) []string {
	out := make([]string, len(rec))
	for i, cell := range rec {
		out[i] = NeutraliseCell(cell)
	}
	return out
}

// NeutraliseCell makes a cell that a spreadsheet would evaluate (OWASP's
// CSV injection: it starts with = + - @, a tab or a carriage return) plain
// text, by a leading single quote.
func NeutraliseCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
