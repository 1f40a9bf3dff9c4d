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
