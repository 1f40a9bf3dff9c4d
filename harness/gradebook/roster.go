// Package gradebook grades a cohort: a roster of submissions, each graded
// exactly as `gw10 grade --submission` grades one (Run hands every grade to
// that command), a store of the grades keyed by the submission's commit and
// the grader's (so a run grades only what it has not graded before), and
// the gradebook itself: one row per submission, as CSV and as one
// self-contained HTML page with the table and a heat map of the checks and
// contract clauses the cohort did not pass.
//
// Every string a learner chose (a name, a URL, a ref, a check's output) is
// data here: the CSV neutralises cells a spreadsheet would run as formulas,
// the HTML is escaped by html/template, and the terminal shows them on one
// line with control characters spelled out (report.Inline).
package gradebook

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Entry is one submission of a roster.
type Entry struct {
	// Line is the roster's line it was read from (1-based).
	Line int `json:"line"`
	// Repository is a git URL, or an absolute path of a repository or a git
	// bundle (a relative path in the roster is taken from the roster's
	// directory).
	Repository string `json:"repository"`
	// Ref is the commit, branch or tag to grade ("" in the roster: HEAD).
	Ref string `json:"ref"`
	// Learner names whoever submitted it; may be empty.
	Learner string `json:"learner"`
}

// rosterColumns are the header names a CSV roster may use for each field
// (GitHub Classroom's export among them), lower case.
var rosterColumns = map[string][]string{
	"repository": {"repository", "repo", "submission", "url", "path", "student_repository_url"},
	"ref":        {"ref", "commit", "branch", "sha"},
	"learner":    {"learner", "name", "student", "github_username", "roster_identifier"},
}

// ParseRoster reads a roster: one submission a line. A line is either
// whitespace-separated — the repository, then optionally the ref, then
// optionally the learner's name (the rest of the line, spaces and all) — or,
// when it holds a comma, one CSV record: repository, ref, learner, or the
// columns a header line names (repository/url, ref/commit, learner/name,
// GitHub Classroom's student_repository_url and github_username among
// them). A ref of "" or "-" is HEAD. Blank lines and lines starting with #
// are ignored. Relative paths are taken from base (the roster's
// directory). Every malformed line is named, with its number, in one error.
func ParseRoster(r io.Reader, base string) ([]Entry, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading the roster: %w", err)
	}
	var (
		out    []Entry
		errs   []error
		header map[string]int // CSV column of each field, once a header was read
		seen   = map[[2]string]int{}
	)
	for i, raw := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		n := i + 1
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var e Entry
		if strings.Contains(line, ",") {
			rec, err := csvRecord(line)
			if err != nil {
				errs = append(errs, fmt.Errorf("line %d: not a CSV record: %w", n, err))
				continue
			}
			if header == nil && len(out) == 0 && isHeader(rec) {
				if header, err = headerColumns(rec); err != nil {
					errs = append(errs, fmt.Errorf("line %d: %w", n, err))
				}
				continue
			}
			if e, err = fromRecord(rec, header); err != nil {
				errs = append(errs, fmt.Errorf("line %d: %w", n, err))
				continue
			}
		} else {
			f := strings.Fields(line)
			e.Repository = f[0]
			if len(f) > 1 {
				e.Ref = f[1]
			}
			if len(f) > 2 {
				e.Learner = strings.Join(f[2:], " ")
			}
		}
		e.Line = n
		if e.Ref == "-" {
			e.Ref = ""
		}
		if err := e.check(); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", n, err))
			continue
		}
		e.Repository = resolvePath(e.Repository, base)
		key := [2]string{e.Repository, e.Ref}
		if first, ok := seen[key]; ok {
			errs = append(errs, fmt.Errorf("line %d: the same repository and ref as line %d", n, first))
			continue
		}
		seen[key] = n
		out = append(out, e)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("the roster has malformed lines:\n%w", errors.Join(errs...))
	}
	if len(out) == 0 {
		return nil, errors.New("the roster names no submission")
	}
	return out, nil
}

func csvRecord(line string) ([]string, error) {
	r := csv.NewReader(strings.NewReader(line))
	r.FieldsPerRecord = -1
	rec, err := r.Read()
	if err != nil {
		return nil, err
	}
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	return rec, nil
}

// isHeader says whether a first record names columns rather than a
// submission: one of its fields is a name of the repository column.
func isHeader(rec []string) bool {
	for _, f := range rec {
		for _, n := range rosterColumns["repository"] {
			if strings.ToLower(f) == n {
				return true
			}
		}
	}
	return false
}

func headerColumns(rec []string) (map[string]int, error) {
	cols := map[string]int{}
	for i, name := range rec {
		for field, names := range rosterColumns {
			for _, n := range names {
				if _, taken := cols[field]; !taken && strings.ToLower(name) == n {
					cols[field] = i
				}
			}
		}
	}
	if _, ok := cols["repository"]; !ok {
		return nil, fmt.Errorf("the header names no repository column (one of %s)", strings.Join(rosterColumns["repository"], ", "))
	}
	return cols, nil
}

func fromRecord(rec []string, header map[string]int) (Entry, error) {
	if header == nil {
		if len(rec) > 3 {
			return Entry{}, fmt.Errorf("%d fields; a record is repository, ref, learner (or give a header line)", len(rec))
		}
		header = map[string]int{"repository": 0, "ref": 1, "learner": 2}
	}
	field := func(name string) string {
		if i, ok := header[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	return Entry{Repository: field("repository"), Ref: field("ref"), Learner: field("learner")}, nil
}

// check refuses what git would read as an option, and control characters
// in what is passed to git.
func (e Entry) check() error {
	switch {
	case e.Repository == "":
		return errors.New("no repository")
	case strings.HasPrefix(e.Repository, "-"):
		return fmt.Errorf("the repository %q starts with '-'", e.Repository)
	case strings.HasPrefix(e.Ref, "-"):
		return fmt.Errorf("the ref %q starts with '-'", e.Ref)
	case strings.ContainsFunc(e.Repository+e.Ref, isControl):
		return errors.New("a control character in the repository or the ref")
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// IsURL says whether git reads s as a URL (scheme://… or the scp-like
// host:path) rather than a local path.
func IsURL(s string) bool {
	if strings.Contains(s, "://") {
		return true
	}
	colon := strings.Index(s, ":")
	slash := strings.Index(s, "/")
	return colon > 0 && (slash < 0 || colon < slash)
}

func resolvePath(repo, base string) string {
	if IsURL(repo) || filepath.IsAbs(repo) {
		return repo
	}
	return filepath.Join(base, repo)
}
