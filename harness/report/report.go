// Package report is the result of a harness run and its renderings: the
// terminal summary, JSON (schema in docs/harness.md), JUnit XML and Markdown.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/10xdev/gw10/harness/evidence"
)

// SchemaVersion of the JSON report; bump it on incompatible changes.
// Version 2 replaced the merge-base "integrity" section with "grading" and
// added summary.gradable.
const SchemaVersion = 2

// Status of a stage or a check.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip" // not run: an earlier stage failed, or --run left it out
)

// Report is one harness run.
type Report struct {
	// Warning, first in the JSON, says the grade is not official because
	// learner code ran unsandboxed (set by Finish).
	Warning       string `json:"warning,omitempty"`
	SchemaVersion int    `json:"schemaVersion"`
	// Dir is the checked module's directory as the run names it
	// (solutions/step01, a learner's step01); its JSON key stays "step",
	// which every report read so far carries.
	Dir      string        `json:"step"`
	Cluster  string        `json:"cluster"`
	Started  time.Time     `json:"started"`
	Duration Seconds       `json:"durationSeconds"`
	Stages   []Stage       `json:"stages"`
	Checks   []CheckResult `json:"checks"`
	Summary  Summary       `json:"summary"`
	Partial  bool          `json:"partial"` // only some checks were selected (--run)
	// Interrupted is true when the run was stopped (Ctrl-C, SIGTERM) before
	// it ended: its verdict is no verdict.
	Interrupted bool     `json:"interrupted,omitempty"`
	Grading     *Grading `json:"grading,omitempty"` // gw10 grade only
}

// Stage is one step of the pipeline before the checks (generate, build, ...).
type Stage struct {
	Name     string  `json:"name"`
	Status   Status  `json:"status"`
	Duration Seconds `json:"durationSeconds"`
	Detail   string  `json:"detail,omitempty"` // on failure: what went wrong, e.g. compiler output
	// Notes are what the stage noted whatever its status: a grant the
	// role's markers asked for and the step never gives, say.
	Notes []string `json:"notes,omitempty"`
	// Harness says the stage is the harness's own (the control plane, the
	// controller's identity, the proxy stand-in): its failure says nothing
	// of the submission, so an official grade gives none. The runner sets
	// it where it defines the stage.
	Harness bool `json:"harness,omitempty"`
}

// CheckResult is the outcome of one check.
type CheckResult struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	SeedRef  string   `json:"seedRef"`
	Clauses  []string `json:"clauses,omitempty"` // the contract clauses it proves (docs/contract.md)
	Points   int      `json:"points"`
	Earned   int      `json:"earned"`
	Status   Status   `json:"status"`
	Duration Seconds  `json:"durationSeconds"`
	Message  string   `json:"message,omitempty"` // expected / observed
	Causes   []string `json:"causes,omitempty"`  // what the harness diagnosed: panic, exit, RBAC, hang
	Hint     string   `json:"hint,omitempty"`
	Doc      string   `json:"doc,omitempty"`
	// Notes are what a check says of a run whatever its verdict (the
	// sequences' seeds and what they covered).
	Notes []string `json:"notes,omitempty"`
	// Probe, when set, says the verdict rests on a probe, not on the
	// running controller: what ran and where it was judged.
	Probe string   `json:"probe,omitempty"`
	Logs  []string `json:"logs,omitempty"` // the controller's log lines about the check, else its last lines
	// LogsAboutCheck says Logs are the lines about the check's objects in
	// its time window; false: the run's last lines at the time it failed.
	LogsAboutCheck bool `json:"-"`
	// Evidence is everything the harness saw during the check, in time
	// order: for the causes and the timeline (not in the JSON report).
	Evidence []evidence.Event `json:"-"`
}

// Summary counts the results.
type Summary struct {
	Passed      int `json:"passed"`
	Failed      int `json:"failed"`
	Skipped     int `json:"skipped"`
	Total       int `json:"total"`
	Points      int `json:"points"`
	TotalPoints int `json:"totalPoints"`
	// OK: every stage passed, every selected check ran and passed, and the
	// run was not interrupted.
	OK bool `json:"ok"`
	// Gradable is false only when grading refused the submission; Points is
	// then 0 and no check ran.
	Gradable bool `json:"gradable"`
}

// Grading says what was graded, from where, and with whose harness.
type Grading struct {
	// Official is true when the submission's step was graded inside a
	// pristine tree of the upstream (gw10 grade --submission); false for
	// feedback on a local checkout, which runs that checkout's own harness.
	Official bool `json:"official"`
	Gradable bool `json:"gradable"`
	// Reason says why the submission is not gradable.
	Reason     string   `json:"reason,omitempty"`
	Upstream   Revision `json:"upstream"`
	Submission Revision `json:"submission"`
	// Ignored are the files outside the step that the submission changed
	// (content the upstream never had, or a file it removed): not used, not
	// trusted.
	Ignored []string `json:"ignoredOutsideStep"`
	// GeneratedDrift are the submission's committed generated files (CRD,
	// ClusterRole, deepcopy) that differ from what its markers generate; the
	// grade uses the generated ones.
	GeneratedDrift []string `json:"generatedDrift"`
	// Sandbox says where learner code ran, and what the sandbox refused or
	// cut off.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// Grader says which commit the grader (its checks) was built from.
	Grader *Grader `json:"grader,omitempty"`
}

// Grader is the source of the binary that graded: an official grade's
// checks are the upstream commit's, built from a clean export of it.
type Grader struct {
	// Commit is the commit the grader was built from; empty when it was
	// built from a working tree.
	Commit string `json:"commit"`
	// Reason says why the grader is not the upstream commit's: the grade
	// is then not official.
	Reason string `json:"reason,omitempty"`
}

// ForeignGrader says whether the grader was built from anything but the
// upstream commit it graded in.
func (g *Grading) ForeignGrader() bool { return g != nil && g.Grader != nil && g.Grader.Reason != "" }

// Sandbox is where a grade ran learner code (see package sandbox).
type Sandbox struct {
	// Enforced: the unit tests and the controller ran as User, under
	// limits, and every process they left was killed before the reports.
	Enforced bool   `json:"enforced"`
	User     string `json:"user,omitempty"`
	// Reason says why learner code ran unsandboxed: the grade is then not
	// official.
	Reason string `json:"reason,omitempty"`
	// CutOff is what the sandbox refused or cut off, in order.
	CutOff []string `json:"cutOff"`
}

// Unsandboxed says whether a grade ran learner code outside a sandbox.
func (g *Grading) Unsandboxed() bool { return g != nil && g.Sandbox != nil && !g.Sandbox.Enforced }

// Revision is one side of a grading: a repository at a commit.
type Revision struct {
	Repository string `json:"repository"`
	Ref        string `json:"ref"`
	Commit     string `json:"commit"`
	// Uncommitted is true when the working tree's uncommitted changes were
	// graded too (feedback on a local checkout).
	Uncommitted bool `json:"uncommitted,omitempty"`
}

// Seconds is a duration rendered as fractional seconds.
type Seconds float64

// Since returns the seconds elapsed since t.
func Since(t time.Time) Seconds { return Seconds(time.Since(t).Seconds()) }

func (s Seconds) String() string { return fmt.Sprintf("%.1fs", float64(s)) }

// Finish computes the summary.
func (r *Report) Finish() {
	r.SchemaVersion = SchemaVersion
	if r.Stages == nil {
		r.Stages = []Stage{} // [] rather than null in JSON
	}
	if r.Checks == nil {
		r.Checks = []CheckResult{}
	}
	s := Summary{OK: true}
	for _, st := range r.Stages {
		if st.Status == Fail {
			s.OK = false
		}
	}
	for _, c := range r.Checks {
		s.Total++
		s.TotalPoints += c.Points
		s.Points += c.Earned
		switch c.Status {
		case Pass:
			s.Passed++
		case Fail:
			s.Failed++
			s.OK = false
		case Skip:
			s.Skipped++
			s.OK = false // a check that did not run proves nothing
		}
	}
	if s.Passed == 0 || r.Interrupted {
		s.OK = false
	}
	if r.Grading != nil {
		if r.Grading.Ignored == nil {
			r.Grading.Ignored = []string{}
		}
		if r.Grading.GeneratedDrift == nil {
			r.Grading.GeneratedDrift = []string{}
		}
		if sb := r.Grading.Sandbox; sb != nil && sb.CutOff == nil {
			sb.CutOff = []string{}
		}
		r.Warning = ""
		switch {
		case r.Grading.Unsandboxed():
			r.Warning = unsandboxedHeadline + ": " + r.Grading.Sandbox.Reason
		case r.Grading.ForeignGrader():
			r.Warning = foreignGraderHeadline + ": " + r.Grading.Grader.Reason
		}
	}
	s.Gradable = r.Grading == nil || r.Grading.Gradable
	if !s.Gradable {
		s.OK, s.Points = false, 0
	}
	r.Summary = s
}

// WriteJSON writes the report to path.
func (r *Report) WriteJSON(path string) error {
	return writeFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	})
}

// RemoveReports removes report files a previous run left, so that a run
// that stops early never leaves them looking like its own.
func RemoveReports(paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("removing the previous report %s: %w", p, err)
		}
	}
	return nil
}

func writeFile(path string, write func(io.Writer) error) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
