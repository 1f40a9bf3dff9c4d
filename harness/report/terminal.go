package report

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/10xdev/gw10/harness/words"
)

// View says how much the terminal shows.
type View struct {
	// All shows every failure in full (--all, -v), and every note of a
	// passing check. Otherwise only the first failure is: the first failing
	// check in the step's order (the order to fix them in), or the first
	// failed stage when no check failed; every other failure takes one
	// line, and a passing check's notes their first.
	All bool
	// Progress says what changed since the last run (package progress); it
	// is printed just before the closing line.
	Progress string
	// Command is what runs the checks (default make check, make grade when
	// grading); Again is how to run them again (default "run <Command>
	// again"). gw10 watch: make watch, and "save again".
	Command, Again string
}

func (v View) command(r *Report) string {
	if v.Command != "" {
		return v.Command
	}
	return r.command()
}

func (v View) again(r *Report) string {
	if v.Again != "" {
		return v.Again
	}
	return "run " + v.command(r) + " again"
}

// Terminal writes the focused view: the first failure in full, the others
// in short, and the closing line.
func (r *Report) Terminal(w io.Writer) { r.TerminalView(w, View{}) }

// TerminalView writes, for a person, what failed and why, and a closing line
// that says what to do next. The per-check pass/fail lines are printed as
// the checks run (see the runner). No controller log line is printed twice.
func (r *Report) TerminalView(w io.Writer, v View) {
	w = plainText{w} // learner text (logs, test output) reaches the terminal as text only
	first := r.firstFailure()
	printed := map[string]bool{} // log lines already shown
	var short []string           // the one-line failures
	for i, st := range r.Stages {
		if st.Status != Fail {
			continue
		}
		if v.All || first == stageFailure(i) {
			fmt.Fprintf(w, "\nFAIL stage %s (%s)\n%s\n", st.Name, st.Duration, indent(st.Detail, "    "))
			continue
		}
		short = append(short, fmt.Sprintf("  FAIL stage %s: %s", st.Name, stageLine(st.Detail)))
	}
	var tail []string // the run's last log lines, from the latest failure that had none of its own
	for i, c := range r.Checks {
		if c.Status != Fail {
			continue
		}
		if !c.LogsAboutCheck && len(c.Logs) > 0 {
			tail = c.Logs
		}
		if !v.All && first != i {
			short = append(short, fmt.Sprintf("  FAIL %s: %s", c.ID, oneLine(c)))
			// What the harness saw, which the hint (what the check
			// requires) does not say: the line to start from.
			switch obs := observedLine(c.Message); {
			case len(c.Causes) > 0:
				short = append(short, "       cause: "+firstLine(c.Causes[0]))
			case obs != "":
				short = append(short, "       "+obs)
			case c.Message != "" && firstLine(c.Message) != oneLine(c):
				// A failure with neither: its message's first line says
				// what was seen (the status written one condition at a time).
				short = append(short, "       observed: "+leadLine(c.Message))
			}
			continue
		}
		fmt.Fprintf(w, "\nFAIL %s: %s\n%s\n", c.ID, c.Title, indent(failureText(c), "     "))
		switch own := unprinted(c.Logs, printed); {
		case len(c.Logs) == 0 && !c.LogsAboutCheck:
			// No log applies (a probe check: the grader's test called the code).
		case !c.LogsAboutCheck:
			fmt.Fprintln(w, "     controller log: no line names this check's objects (the run's last lines are below)")
		case len(own) > 0:
			fmt.Fprintf(w, "     controller log, the lines about this check's objects (%d):\n", len(own))
			printLog(w, own, printed, "       | ")
		}
	}
	if fresh := unprinted(tail, printed); len(fresh) > 0 {
		fmt.Fprintf(w, "\ncontroller log, the run's last %d lines:\n", len(fresh))
		printLog(w, fresh, printed, "  | ")
	}
	if len(short) > 0 {
		fmt.Fprintf(w, "\nAlso failing, in short: the hint, and the first cause (or what was observed) (%s CHECK_FLAGS=--all shows them in full):\n%s\n", v.command(r), strings.Join(short, "\n"))
	}
	fmt.Fprintln(w)
	cut := 0 // the notes of passing checks cut to their first
	for _, c := range r.Checks {
		if c.Probe != "" && c.Status != Skip {
			fmt.Fprintf(w, "%s: the verdict rests on %s\n", c.ID, c.Probe)
		}
		notes := c.Notes
		if !v.All && c.Status != Fail && len(notes) > 1 {
			// A passing check's notes are its evidence at length: the
			// first stands for them, the timeline and --all hold the rest.
			notes = []string{notes[0] + fmt.Sprintf(" (+%d more)", len(c.Notes)-1)}
			cut += len(c.Notes) - 1
		}
		for _, n := range notes {
			fmt.Fprintf(w, "%s: %s\n", c.ID, Inline(n))
		}
	}
	if cut > 0 {
		fmt.Fprintf(w, "(%s in all, marked \"+n more\" above: the rest of what those checks measured, in the timeline and in %s CHECK_FLAGS=--all)\n",
			words.Count(cut, "note more", "notes more"), v.command(r))
	}
	for _, l := range r.gradingLines(terminalQuoting) {
		fmt.Fprintln(w, l)
	}
	if v.Progress != "" {
		fmt.Fprintln(w, v.Progress)
	}
	// A reason of several lines (the go.mod lines refused) goes on indented:
	// none of its lines, which quote the submission, starts a line of the
	// report.
	closing, more, _ := strings.Cut(r.ClosingLine(v), "\n")
	fmt.Fprintln(w, closing)
	if more != "" {
		fmt.Fprintln(w, indent(more, "    "))
	}
}

// stageFailure encodes the index of a failed stage for firstFailure, which
// returns check indexes as they are.
func stageFailure(i int) int { return -2 - i }

// firstFailure is the failure shown in full: the index of the first failing
// check, else stageFailure(i) of the stage that stopped the run, else -1.
// Stages run in order and the run stops at the first one that blocks; one
// that does not block (the unit tests) may have failed before it, so the
// blocker is the last failed stage.
func (r *Report) firstFailure() int {
	for i, c := range r.Checks {
		if c.Status == Fail {
			return i
		}
	}
	for i := len(r.Stages) - 1; i >= 0; i-- {
		if r.Stages[i].Status == Fail {
			return stageFailure(i)
		}
	}
	return -1
}

// ClosingLine is the terminal's last line: the verdict and what to do next.
// It claims success only when the summary does (summary.ok), and never for
// an interrupted run, a skipped check or a failed stage.
func (r *Report) ClosingLine(v View) string {
	s := r.Summary
	first := r.firstFailure()
	next := ""
	switch {
	case first >= 0:
		id := r.Checks[first].ID
		next = fmt.Sprintf("Fix %s first, then %s; make hint ID=%s says more", id, v.again(r), id)
		if !v.All && r.failures() > 1 {
			next += fmt.Sprintf("; %s CHECK_FLAGS=--all shows every failure in full", v.command(r))
		}
		next += "."
	case first < -1:
		next = fmt.Sprintf("Fix the %s stage (above), then %s.", r.Stages[-2-first].Name, v.again(r))
	}
	if r.Grading != nil {
		line := r.gradeLabel() + r.Headline() + "."
		switch {
		case r.Grading.Official && s.Gradable && !s.OK && first >= 0:
			// Worded for the instructor: what the submission got wrong
			// first, not what to do next.
			line += fmt.Sprintf(" The first failure is %s (above; make hint ID=%s explains it).", r.Checks[first].ID, r.Checks[first].ID)
		case r.Grading.Official && s.Gradable && !s.OK && first < -1 && s.Passed+s.Failed == 0:
			line += fmt.Sprintf(" The %s stage failed (above), so no check ran.", r.Stages[-2-first].Name)
		case r.Grading.Official && s.Gradable && !s.OK && first < -1:
			line += fmt.Sprintf(" The %s stage failed (above); the checks ran, and earned what they show.", r.Stages[-2-first].Name)
		case s.Gradable && !s.OK && next != "":
			line += " " + next
		}
		return line
	}
	switch {
	case r.Interrupted:
		return fmt.Sprintf("%s. No verdict: the run was stopped before it ended (everything it started has been stopped); "+
			"%s.", capitalize(r.Headline()), v.again(r))
	case s.OK && r.Partial:
		return capitalize(selected(s.Total)) + ". Run " + v.command(r) + " without --run for the whole step."
	case s.OK:
		return fmt.Sprintf("All %d checks pass (%d/%d points). %s is done: the card's acceptance holds on a real API server.",
			s.Total, s.Points, s.TotalPoints, r.Dir)
	case first < -1 && s.Passed+s.Failed == 0:
		return fmt.Sprintf("%s: no check ran, as the %s stage failed. %s", capitalize(r.Headline()), r.Stages[-2-first].Name, next)
	case first < -1:
		return fmt.Sprintf("%s. %s", capitalize(r.Headline()), next)
	case first == -1 && s.Skipped > 0:
		return fmt.Sprintf("%s: %s. %s.", capitalize(r.Headline()), r.firstSkip(), capitalize(v.again(r)))
	case next == "":
		return capitalize(r.Headline()) + ". " + capitalize(v.again(r)) + "."
	}
	return capitalize(r.Headline()) + ". " + next
}

// command is what runs the checks again.
func (r *Report) command() string {
	if r.Grading != nil {
		return "make grade"
	}
	return "make check"
}

// failures counts the failed stages and checks.
func (r *Report) failures() int {
	n := 0
	for _, st := range r.Stages {
		if st.Status == Fail {
			n++
		}
	}
	return n + r.Summary.Failed
}

// firstSkip says why the first skipped check did not run.
func (r *Report) firstSkip() string {
	for _, c := range r.Checks {
		if c.Status == Skip && c.Message != "" {
			return c.ID + " " + strings.TrimPrefix(c.Message, "not run: ")
		}
	}
	return "some checks did not run"
}

// oneLine is a failing check in one line: its hint, else the first line of
// what it observed.
func oneLine(c CheckResult) string {
	if c.Hint != "" {
		return c.Hint
	}
	return firstLine(c.Message)
}

// observedLine is the first "observed:" line of a failure's message, what
// it saw, trimmed; "" when it has none.
func observedLine(msg string) string {
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "observed:") {
			return l
		}
	}
	return ""
}

// stageLine is a failed stage in one line: its hint when its detail has one
// (the start controller stage's names the missing RBAC marker), else the
// line that says most.
func stageLine(detail string) string {
	for _, l := range strings.Split(detail, "\n") {
		if h, ok := strings.CutPrefix(strings.TrimSpace(l), "hint:"); ok && strings.TrimSpace(h) != "" {
			return strings.TrimSpace(h)
		}
	}
	return firstLine(detail)
}

// leadLine is firstLine, with the line after it when it ends with a colon
// (what the colon announces: the first of a list of versions, say), in one line.
func leadLine(text string) string {
	l := firstLine(text)
	if !strings.HasSuffix(l, ":") {
		return l
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i, x := range lines {
		if strings.TrimSpace(x) != l || i+1 >= len(lines) {
			continue
		}
		if next := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i+1]), "- ")); next != "" {
			return l + " " + next
		}
	}
	return strings.TrimSuffix(l, ":")
}

var fileLineRE = regexp.MustCompile(`\.go:\d+`)

// firstLine is the line of a failure's text that says most: the first one
// naming a file and line (a compiler's or go test's message), else the
// first line.
func firstLine(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for _, l := range lines {
		if fileLineRE.MatchString(l) && !strings.HasPrefix(strings.TrimSpace(l), "---") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[0])
}

func printLog(w io.Writer, lines []string, printed map[string]bool, prefix string) {
	for _, l := range lines {
		printed[l] = true
		fmt.Fprintf(w, "%s%s\n", prefix, l)
	}
}

func unprinted(lines []string, printed map[string]bool) []string {
	var out []string
	for _, l := range lines {
		if !printed[l] {
			out = append(out, l)
		}
	}
	return out
}
