package report

import (
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
// swallowing the rest, no escape sequence (red-team round 4).
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
