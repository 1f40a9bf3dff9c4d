package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// Terminal writes, for a person, what failed and why, and the summary. The
// per-check pass/fail lines are printed as the checks run (see the runner).
func (r *Report) Terminal(w io.Writer) {
	for _, st := range r.Stages {
		if st.Status == Fail {
			fmt.Fprintf(w, "\nFAIL stage %s (%s)\n%s\n", st.Name, st.Duration, indent(st.Detail, "    "))
		}
	}
	for _, c := range r.Checks {
		if c.Status == Fail {
			fmt.Fprintf(w, "\nFAIL %s: %s\n", c.ID, c.Title)
			r.failureDetail(w, c)
		}
	}
	s := r.Summary
	fmt.Fprintln(w)
	if s.OK && r.Partial {
		fmt.Fprintf(w, "The %d selected checks pass. Run make check without --run for the whole step.\n", s.Total)
		return
	}
	if s.OK {
		fmt.Fprintf(w, "All %d checks pass (%d/%d points). %s is done: the seed's acceptance holds on a real API server.\n",
			s.Total, s.Points, s.TotalPoints, r.Step)
		return
	}
	fmt.Fprintf(w, "%d/%d checks pass (%d/%d points).", s.Passed, s.Total, s.Points, s.TotalPoints)
	if s.Skipped > 0 {
		fmt.Fprintf(w, " %d not run.", s.Skipped)
	}
	fmt.Fprintln(w, " Fix the first failure above and run make check again; make hint ID=<check> says more.")
}

func (r *Report) failureDetail(w io.Writer, c CheckResult) {
	if c.Message != "" {
		fmt.Fprintln(w, indent(c.Message, "     "))
	}
	for _, cause := range c.Causes {
		fmt.Fprintf(w, "     cause: %s\n", cause)
	}
	if c.Hint != "" {
		fmt.Fprintf(w, "     hint:  %s\n", c.Hint)
	}
	if c.Doc != "" {
		fmt.Fprintf(w, "     docs:  %s   (more: make hint ID=%s)\n", c.Doc, c.ID)
	}
	if len(c.Logs) > 0 {
		fmt.Fprintf(w, "     controller log (last %d lines):\n", len(c.Logs))
		for _, l := range c.Logs {
			fmt.Fprintf(w, "       | %s\n", l)
		}
	}
	fmt.Fprintln(w)
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// JUnit renders the report as JUnit XML: one testsuite per run, one testcase
// per check, with stages as testcases of their own when they failed.
func (r *Report) JUnit(w io.Writer) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	type skipped struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Skipped   *skipped `xml:"skipped,omitempty"`
		SystemOut string   `xml:"system-out,omitempty"`
	}
	type testsuite struct {
		XMLName   xml.Name   `xml:"testsuite"`
		Name      string     `xml:"name,attr"`
		Tests     int        `xml:"tests,attr"`
		Failures  int        `xml:"failures,attr"`
		Skipped   int        `xml:"skipped,attr"`
		Time      string     `xml:"time,attr"`
		Timestamp string     `xml:"timestamp,attr"`
		Cases     []testcase `xml:"testcase"`
	}
	suite := testsuite{
		Name:      "gw10." + strings.ReplaceAll(r.Step, "/", "."),
		Time:      fmt.Sprintf("%.3f", float64(r.Duration)),
		Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05"),
	}
	for _, st := range r.Stages {
		if st.Status != Fail {
			continue
		}
		suite.Cases = append(suite.Cases, testcase{
			Name: "stage " + st.Name, Classname: suite.Name + ".stages", Time: fmt.Sprintf("%.3f", float64(st.Duration)),
			Failure: &failure{Message: "stage " + st.Name + " failed", Type: "stage", Text: st.Detail},
		})
		suite.Failures++
	}
	for _, c := range r.Checks {
		tc := testcase{Name: c.ID, Classname: suite.Name + ".checks", Time: fmt.Sprintf("%.3f", float64(c.Duration))}
		switch c.Status {
		case Fail:
			var b strings.Builder
			b.WriteString(c.Message)
			for _, cause := range c.Causes {
				b.WriteString("\ncause: " + cause)
			}
			if c.Hint != "" {
				b.WriteString("\nhint: " + c.Hint)
			}
			tc.Failure = &failure{Message: c.Title, Type: "check", Text: b.String()}
			tc.SystemOut = strings.Join(c.Logs, "\n")
			suite.Failures++
		case Skip:
			tc.Skipped = &skipped{Message: c.Message}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, tc)
	}
	suite.Tests = len(suite.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(suite); err != nil {
		return fmt.Errorf("encoding JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteJUnit writes the JUnit XML to path.
func (r *Report) WriteJUnit(path string) error { return writeFile(path, r.JUnit) }

// Markdown renders a summary for a CI job page or a pull request.
func (r *Report) Markdown(w io.Writer) error {
	s := r.Summary
	verdict := "❌"
	if s.OK {
		verdict = "✅"
	}
	fmt.Fprintf(w, "## gw10 %s — %s %d/%d checks, %d/%d points\n\n", r.Step, verdict, s.Passed, s.Total, s.Points, s.TotalPoints)
	fmt.Fprintf(w, "Cluster: `%s` · duration %s\n\n", r.Cluster, r.Duration)
	if r.Integrity != nil {
		if r.Integrity.Gradable {
			fmt.Fprintf(w, "Integrity: clean (base `%s`", short(r.Integrity.Base))
			if len(r.Integrity.Changed) > 0 {
				fmt.Fprintf(w, "; changed outside step01/ but allowed: %s", codeList(r.Integrity.Changed))
			}
			fmt.Fprintln(w, ").")
		} else {
			fmt.Fprintf(w, "**Integrity: NOT GRADABLE** — files the grade depends on were changed since `%s`: %s\n",
				short(r.Integrity.Base), codeList(r.Integrity.Forbidden))
		}
		fmt.Fprintln(w)
	}
	for _, st := range r.Stages {
		if st.Status == Fail {
			fmt.Fprintf(w, "**Stage `%s` failed:**\n\n```\n%s\n```\n\n", st.Name, st.Detail)
		}
	}
	fmt.Fprintln(w, "| check | result | points | time | proves |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, c := range r.Checks {
		mark := map[Status]string{Pass: "✅ pass", Fail: "❌ fail", Skip: "⏭ skip"}[c.Status]
		fmt.Fprintf(w, "| `%s` | %s | %d/%d | %s | %s |\n", c.ID, mark, c.Earned, c.Points, c.Duration, c.SeedRef)
	}
	for _, c := range r.Checks {
		if c.Status != Fail {
			continue
		}
		fmt.Fprintf(w, "\n<details><summary><code>%s</code>: %s</summary>\n\n```\n%s\n```\n", c.ID, c.Title, c.Message)
		for _, cause := range c.Causes {
			fmt.Fprintf(w, "\n- cause: %s", cause)
		}
		fmt.Fprintf(w, "\n- hint: %s (see `%s`)\n\n</details>\n", c.Hint, c.Doc)
	}
	return nil
}

// WriteMarkdown writes the Markdown summary to path.
func (r *Report) WriteMarkdown(path string) error { return writeFile(path, r.Markdown) }

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func codeList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = "`" + s + "`"
	}
	return strings.Join(quoted, ", ")
}
