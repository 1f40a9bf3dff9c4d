package report

import (
	"os"
	"strings"
	"testing"
)

// TestLearnerOutputCannotLeaveItsCodeBlock: a unit test that prints a fence,
// a forged heading and "<!--" (to hide the real table when the summary is
// rendered) stays inside its block.
func TestLearnerOutputCannotLeaveItsCodeBlock(t *testing.T) {
	forged := "```\n\n## ✅ 11/11 checks pass, 120/120 points\n\n<!--\n"
	b := codeBlock(forged)
	if !strings.HasPrefix(b, "````\n") || !strings.HasSuffix(b, "\n````") {
		t.Fatalf("the fence is not longer than the text's backticks:\n%s", b)
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(b, "````\n"), "\n````")
	for _, l := range strings.Split(inner, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "````") {
			t.Errorf("a line inside closes the block: %q", l)
		}
	}
	if got := codeBlock("plain"); got != "```\nplain\n```" {
		t.Errorf("plain text: %q", got)
	}
}

// TestFileNamesCannotBecomeMarkdownOrTerminalText: a path a submission
// chose (here in "Ignored, not trusted") stays one line of text in
// summary.md and on the terminal: no forged heading, no HTML comment
// swallowing the rest, no escape sequence.
func TestFileNamesCannotBecomeMarkdownOrTerminalText(t *testing.T) {
	forged := "docs/x`\n\n## gw10 step07 — ✅ 11/11 checks pass\n\n<!--\x1b[2J"
	r := &Report{Dir: "step07", Grading: &Grading{Official: true, Gradable: true, Ignored: []string{forged}}}
	var md strings.Builder
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	var term strings.Builder
	r.Terminal(&term)
	for name, out := range map[string]string{"summary.md": md.String(), "terminal": term.String()} {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "## gw10 step07 — ✅") || strings.HasPrefix(strings.TrimSpace(l), "<!--") {
				t.Errorf("%s: a file name made a line of its own: %q", name, l)
			}
		}
		if strings.Contains(out, "\x1b") {
			t.Errorf("%s: a raw ESC from a file name", name)
		}
		if !strings.Contains(out, `\x0a`) {
			t.Errorf("%s: the name's newline is not shown as \\x0a:\n%s", name, out)
		}
	}
	if got := mdCode("a`b"); got != "`` a`b ``" {
		t.Errorf("mdCode(a`b) = %q", got)
	}
}

// TestAProbesVerdictSaysWhatItRestsOn: a check judged by a probe says so
// in the terminal, in summary.md and in grade.json; the others do not.
func TestAProbesVerdictSaysWhatItRestsOn(t *testing.T) {
	r := &Report{Dir: "the-step", Checks: []CheckResult{
		{ID: "read-error", Title: "t", Points: 10, Status: Fail, Message: "m", Probe: "a probe: the grader's code around your Reconcile"},
		{ID: "status-writes", Title: "t", Points: 10, Earned: 10, Status: Pass},
	}}
	r.Finish()
	var term, md strings.Builder
	r.Terminal(&term)
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/grade.json"
	if err := r.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"terminal": term.String(), "summary.md": md.String(), "grade.json": string(js)} {
		if !strings.Contains(text, "the grader's code around your Reconcile") {
			t.Errorf("%s does not say what read-error's verdict rests on:\n%s", what, text)
		}
		if strings.Count(text, "the grader's code around your Reconcile") != 1 {
			t.Errorf("%s says it more than once, or of another check:\n%s", what, text)
		}
	}
}
