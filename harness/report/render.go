package report

import (
	"encoding/xml"
	"fmt"
	"github.com/10xdev/gw10/harness/words"
	"io"
	"strconv"
	"strings"
)

// Headline is the run's verdict in one line. Every rendering states it, so
// the terminal, Markdown, JSON (summary) and JUnit never disagree.
func (r *Report) Headline() string {
	switch {
	case r.Grading.Unsandboxed():
		return unsandboxedHeadline + ": " + r.headline()
	case r.Grading.ForeignGrader():
		return foreignGraderHeadline + ": " + r.headline()
	}
	return r.headline()
}

// foreignGraderHeadline opens every verdict of a grade whose checks were
// not built from the upstream commit it names.
const foreignGraderHeadline = "NOT AN OFFICIAL GRADE (the grader is not the upstream commit's)"

// unsandboxedHeadline opens every verdict of a grade whose learner code ran
// as the grader's own user.
const unsandboxedHeadline = "UNSANDBOXED, NOT AN OFFICIAL GRADE"

func (r *Report) headline() string {
	s := r.Summary
	switch {
	case !s.Gradable:
		return "not gradable: " + r.reason()
	case s.OK && r.Partial:
		return selected(s.Total)
	case s.OK:
		return fmt.Sprintf("all %d checks pass, %d/%d points", s.Total, s.Points, s.TotalPoints)
	}
	h := fmt.Sprintf("%d/%d checks pass, %d/%d points", s.Passed, s.Total, s.Points, s.TotalPoints)
	if s.Skipped > 0 {
		h += fmt.Sprintf(", %d not run", s.Skipped)
	}
	// Checks that ran beside a failed stage (the unit tests, which do not
	// stop the run) earn what they show; the verdict says the stage failed,
	// whatever they earned. (A stage that stopped the run is named by the
	// closing line, with no check run.)
	if failed := r.failedStages(); len(failed) > 0 && s.Passed+s.Failed > 0 {
		joint := ", and the "
		if s.Passed > 0 {
			joint = ", but the "
		}
		h += joint + strings.Join(failed, " and ") + " stage failed"
	}
	if r.Interrupted {
		h = "interrupted: " + h
	}
	return h
}

// selected says that n selected checks pass.
func selected(n int) string {
	if n == 1 {
		return "the selected check passes"
	}
	return fmt.Sprintf("the %d selected checks pass", n)
}

func (r *Report) reason() string {
	if r.Grading == nil || r.Grading.Reason == "" {
		return "no reason given"
	}
	return r.Grading.Reason
}

// gradeLabel names what a grading run produced: a grade, or feedback.
func (r *Report) gradeLabel() string {
	switch {
	case !r.Summary.Gradable:
		return "Grade: none, "
	case r.Grading.Official:
		return "Grade: "
	}
	return "Feedback (not an official grade): "
}

// learnerCodeRan names the submission's code that ran, from the stages
// that ran it: "the unit tests", "the controller", both, or "" (a
// submission refused before it was built).
func (r *Report) learnerCodeRan() string {
	var ran []string
	if !r.Summary.Gradable {
		return ""
	}
	for _, st := range r.Stages {
		switch {
		case st.Status == Skip:
		case st.Name == "unit tests":
			ran = append(ran, "the unit tests")
		case st.Name == "start controller":
			ran = append(ran, "the controller")
		}
	}
	return strings.Join(ran, " and ")
}

// failedStages names the stages that failed, in order.
func (r *Report) failedStages() []string {
	var out []string
	for _, st := range r.Stages {
		if st.Status == Fail {
			out = append(out, st.Name)
		}
	}
	return out
}

// stagePassed says whether the named stage ran and passed.
func (r *Report) stagePassed(name string) bool {
	for _, st := range r.Stages {
		if st.Name == name {
			return st.Status == Pass
		}
	}
	return false
}

// quoting is how a rendering shows what a submission chose: code a value on
// its own (a name), text a line that quotes one (what the sandbox cut off).
type quoting struct{ code, text func(string) string }

var (
	terminalQuoting = quoting{code: Inline, text: Inline}
	markdownQuoting = quoting{code: mdCode, text: mdText}
)

// gradingLines say what was graded, from where, and what was left out, each
// string a submission chose quoted as q says.
func (r *Report) gradingLines(q quoting) []string {
	code := q.code
	g := r.Grading
	if g == nil {
		return nil
	}
	step := strings.TrimSuffix(r.Dir, "/") + "/"
	sub := fmt.Sprintf("Graded: %s of %s", code(step), revision(g.Submission, code))
	if g.Submission.Uncommitted {
		sub += ", with its uncommitted changes"
	}
	lines := []string{sub, "Harness, checks and build files: " + revision(g.Upstream, code)}
	if g.Official {
		lines = append(lines, fmt.Sprintf("Official: only %s came from the submission; everything else is the upstream's.", code(step)))
	} else {
		lines = append(lines, fmt.Sprintf("Not an official grade: this checkout's own harness ran the checks. "+
			"Your instructor grades your %s with their own checkout (make grade SUBMISSION=<your repository>), as committed and pushed: uncommitted work is not graded.", code(step)))
	}
	if sb := g.Sandbox; sb != nil {
		ran := r.learnerCodeRan()
		switch {
		case sb.Enforced && ran == "":
			lines = append(lines, fmt.Sprintf("Sandbox: %s was ready; none of the submission's code ran.", code(sb.User)))
		case sb.Enforced:
			line := fmt.Sprintf("Sandbox: %s ran as %s, under limits, and every process they left was killed before this report", ran, code(sb.User))
			if len(sb.CutOff) > 0 {
				line += "; it cut off: " + list(sb.CutOff, q.text)
			}
			lines = append(lines, line+".")
		case ran == "":
			lines = append(lines, fmt.Sprintf("UNSANDBOXED (%s); none of the submission's code ran.", q.text(sb.Reason)))
		default:
			lines = append(lines, fmt.Sprintf("UNSANDBOXED: %s ran as the grader's own user (%s): they could have changed this grade, so it is not official.", ran, q.text(sb.Reason)))
		}
	}
	if gr := g.Grader; gr != nil {
		if gr.Reason != "" {
			lines = append(lines, "NOT OFFICIAL: "+q.text(gr.Reason)+".")
		} else {
			lines = append(lines, fmt.Sprintf("Grader: built from a clean export of the upstream at %s.", code(words.ShortCommit(gr.Commit))))
		}
	}
	if len(g.GeneratedDrift) > 0 {
		used := "the grade used the generated ones"
		if !r.stagePassed("generate") {
			used = "the generate stage did not produce them, so nothing generated was graded"
		}
		lines = append(lines, fmt.Sprintf("Generated files differ from what the markers generate (%s; "+
			"run make manifests generate in %s and commit): %s", used, code(step), list(g.GeneratedDrift, code)))
	}
	if len(g.Ignored) > 0 {
		lines = append(lines, fmt.Sprintf("Ignored, not trusted (changed by the submission outside %s; the upstream's were used): %s", code(step), list(byDirectory(g.Ignored, code), plain)))
	}
	return lines
}

func revision(v Revision, code func(string) string) string {
	s := code(v.Repository)
	if v.Ref != "" {
		s += " at " + code(v.Ref)
	}
	if v.Commit != "" {
		s += " (" + code(words.ShortCommit(v.Commit)) + ")"
	}
	return s
}

// byDirectory folds the paths under one top-level directory into "dir/ (N
// files)" once there are more than three: a learner who removed solutions/
// (or added a tool's directory) changed one thing, not forty. The JSON keeps
// every path.
func byDirectory(paths []string, code func(string) string) []string {
	const fold = 3
	count := map[string]int{}
	for _, p := range paths {
		if dir, _, ok := strings.Cut(p, "/"); ok {
			count[dir]++
		}
	}
	var out []string
	done := map[string]bool{}
	for _, p := range paths {
		dir, _, ok := strings.Cut(p, "/")
		switch {
		case !ok || count[dir] <= fold:
			out = append(out, code(p))
		case !done[dir]:
			done[dir] = true
			out = append(out, fmt.Sprintf("%s (%d files)", code(dir+"/"), count[dir]))
		}
	}
	return out
}

func plain(s string) string { return s }

// list quotes at most 20 items; a submission may differ from the upstream
// in many files.
func list(items []string, code func(string) string) string { return listOf(items, 20, code) }

// InlineList names at most most of items, each on one line (Inline), and
// how many more there are: a reason or a note that lists what a submission
// chose (its file names, its processes).
func InlineList(items []string, most int) string { return listOf(items, most, Inline) }

func listOf(items []string, most int, code func(string) string) string {
	var quoted []string
	for i, s := range items {
		if i == most {
			quoted = append(quoted, fmt.Sprintf("and %d more", len(items)-most))
			break
		}
		quoted = append(quoted, code(s))
	}
	return strings.Join(quoted, ", ")
}

// failureText is what a failed check says, in every rendering: expected and
// observed, the diagnosed causes, the hint and where to read more.
func failureText(c CheckResult) string {
	var b strings.Builder
	if c.Message != "" {
		b.WriteString(strings.TrimRight(c.Message, "\n") + "\n")
	}
	for _, cause := range c.Causes {
		fmt.Fprintf(&b, "cause: %s\n", cause)
	}
	if c.Hint != "" {
		fmt.Fprintf(&b, "hint:  %s\n", c.Hint)
	}
	if c.Doc != "" {
		fmt.Fprintf(&b, "docs:  %s   (more: make hint ID=%s)\n", c.Doc, c.ID)
	}
	if len(c.Clauses) > 0 {
		fmt.Fprintf(&b, "contract: %s   (docs/contract.md; make hint ID=<clause>)\n", strings.Join(c.Clauses, ", "))
	}
	return strings.TrimRight(b.String(), "\n")
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// properties are the run's verdict and provenance as name/value pairs, for
// the JUnit report.
func (r *Report) properties() [][2]string {
	s := r.Summary
	p := [][2]string{
		{"verdict", r.Headline()},
		{"gradable", strconv.FormatBool(s.Gradable)},
		{"ok", strconv.FormatBool(s.OK)},
		{"points", strconv.Itoa(s.Points)},
		{"totalPoints", strconv.Itoa(s.TotalPoints)},
		{"cluster", r.Cluster},
	}
	if g := r.Grading; g != nil {
		p = append(p,
			[2]string{"official", strconv.FormatBool(g.Official)},
			[2]string{"submission.repository", g.Submission.Repository},
			[2]string{"submission.ref", g.Submission.Ref},
			[2]string{"submission.commit", g.Submission.Commit},
			[2]string{"submission.uncommitted", strconv.FormatBool(g.Submission.Uncommitted)},
			[2]string{"upstream.repository", g.Upstream.Repository},
			[2]string{"upstream.ref", g.Upstream.Ref},
			[2]string{"upstream.commit", g.Upstream.Commit},
			[2]string{"ignoredOutsideStep", strings.Join(g.Ignored, " ")},
			[2]string{"generatedDrift", strings.Join(g.GeneratedDrift, " ")},
		)
	}
	return p
}

// JUnit renders the report as JUnit XML: one testsuite per run with the
// verdict, provenance and stages as properties, one testcase per check (the
// tests counted are the checks), a failed stage's output in <system-err>,
// and a not gradable submission as a failed "grading" testcase.
func (r *Report) JUnit(w io.Writer) error {
	type property struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
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
		XMLName    xml.Name   `xml:"testsuite"`
		Name       string     `xml:"name,attr"`
		Tests      int        `xml:"tests,attr"`
		Failures   int        `xml:"failures,attr"`
		Skipped    int        `xml:"skipped,attr"`
		Time       string     `xml:"time,attr"`
		Timestamp  string     `xml:"timestamp,attr"`
		Properties []property `xml:"properties>property"`
		Cases      []testcase `xml:"testcase"`
		SystemErr  string     `xml:"system-err,omitempty"`
	}
	suite := testsuite{
		Name:      "gw10." + strings.ReplaceAll(r.Dir, "/", "."),
		Time:      fmt.Sprintf("%.3f", float64(r.Duration)),
		Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05"),
	}
	for _, p := range r.properties() {
		suite.Properties = append(suite.Properties, property{Name: p[0], Value: p[1]})
	}
	if !r.Summary.Gradable {
		suite.Cases = append(suite.Cases, testcase{
			Name: "gradable", Classname: suite.Name + ".grading", Time: "0.000",
			Failure: &failure{Message: "the submission is not gradable", Type: "grading", Text: r.reason()},
		})
	}
	// Stages are not tests: each is a property (every stage, so a passing one
	// shows too), and a failed stage's output goes to <system-err>; the
	// checks it kept from running are skipped testcases that say so.
	var stageErr []string
	for _, st := range r.Stages {
		v := string(st.Status)
		if st.Status == Fail {
			v += ": " + firstLine(st.Detail)
			stageErr = append(stageErr, "stage "+st.Name+" failed:\n"+st.Detail)
		}
		suite.Properties = append(suite.Properties, property{Name: "stage." + st.Name, Value: v})
	}
	suite.SystemErr = strings.Join(stageErr, "\n\n")
	for _, c := range r.Checks {
		tc := testcase{Name: c.ID, Classname: suite.Name + ".checks", Time: fmt.Sprintf("%.3f", float64(c.Duration))}
		switch c.Status {
		case Fail:
			tc.Failure = &failure{Message: c.Title, Type: "check", Text: failureText(c)}
			tc.SystemOut = strings.Join(c.Logs, "\n")
		case Skip:
			tc.Skipped = &skipped{Message: c.Message}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	for _, tc := range suite.Cases {
		if tc.Failure != nil {
			suite.Failures++
		}
		if tc.Skipped != nil {
			suite.Skipped++
		}
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
	verdict := "❌"
	if r.Summary.OK {
		verdict = "✅"
	}
	// The verdict's first line is the heading; a reason of several lines
	// (the go.mod lines refused) follows it in a block.
	headline, more, _ := strings.Cut(r.Headline(), "\n")
	heading := fmt.Sprintf("## gw10 %s — %s %s", mdText(r.Dir), verdict, mdText(headline))
	if r.Grading != nil && !r.Grading.Official {
		heading += " (feedback, not an official grade)"
	}
	fmt.Fprintf(w, "%s\n\n", heading)
	if more != "" {
		fmt.Fprintf(w, "%s\n\n", codeBlock(more))
	}
	fmt.Fprintf(w, "Cluster: `%s` · duration %s\n\n", r.Cluster, r.Duration)
	for _, l := range r.gradingLines(markdownQuoting) {
		fmt.Fprintf(w, "- %s\n", l)
	}
	if r.Grading != nil {
		fmt.Fprintln(w)
	}
	for _, st := range r.Stages {
		if st.Status == Fail {
			fmt.Fprintf(w, "**Stage `%s` failed:**\n\n%s\n\n", st.Name, codeBlock(st.Detail))
		}
		if len(st.Notes) > 0 {
			fmt.Fprintf(w, "**Stage `%s` noted:**\n\n%s\n\n", st.Name, codeBlock(inlineLines(st.Notes)))
		}
	}
	if len(r.Checks) > 0 {
		fmt.Fprintln(w, "| check | result | points | time | proves |")
		fmt.Fprintln(w, "|---|---|---|---|---|")
	}
	for _, c := range r.Checks {
		mark := map[Status]string{Pass: "✅ pass", Fail: "❌ fail", Skip: "⏭ skip"}[c.Status]
		proves := c.SeedRef
		if len(c.Clauses) > 0 {
			proves += " (" + strings.Join(c.Clauses, ", ") + ")"
		}
		fmt.Fprintf(w, "| `%s` | %s | %d/%d | %s | %s |\n", c.ID, mark, c.Earned, c.Points, c.Duration, proves)
	}
	for _, c := range r.Checks {
		if c.Probe != "" && c.Status != Skip {
			fmt.Fprintf(w, "\n`%s`: the verdict rests on %s.\n", c.ID, c.Probe)
		}
	}
	for _, c := range r.Checks {
		if c.Status == Fail {
			fmt.Fprintf(w, "\n<details><summary><code>%s</code>: %s</summary>\n\n%s\n\n</details>\n", c.ID, c.Title, codeBlock(failureText(c)))
		}
	}
	return nil
}

// WriteMarkdown writes the Markdown summary to path.
func (r *Report) WriteMarkdown(path string) error { return writeFile(path, r.Markdown) }

// inlineLines are notes one to a line: a note that holds a newline (a
// process's command line) cannot pass for two.
func inlineLines(notes []string) string {
	lines := make([]string, len(notes))
	for i, n := range notes {
		lines[i] = Inline(n)
	}
	return strings.Join(lines, "\n")
}
