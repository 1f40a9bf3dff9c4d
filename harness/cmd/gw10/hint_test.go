package main

import (
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/step"
)

// TestAHintTeachesTheDesignOnlyWhenAskedTwice: make hint ID=<check> says
// what the check requires and which questions lead to it, never its design
// advice (the LongHint); MORE=1 gives that. A question prints without its
// answer, and says where the answer is.
func TestAHintTeachesTheDesignOnlyWhenAskedTwice(t *testing.T) {
	st := step.Step{Chapter: "docs/step09.md"}
	c := checks.Check{ID: "self-heal", Title: "flips", Hint: "creating a Service must flip the route", LongHint: "Watch Services with a map function"}
	qs := []step.Question{{ID: "q-owns", Text: "Which EdgeRoute does Owns() enqueue? (`self-heal`)", Answer: "docs/step09-answers.md#why"}}
	first := checkHint(st, c, qs, false)
	if strings.Contains(first, c.LongHint) || !strings.Contains(first, c.Hint) || !strings.Contains(first, "q-owns") ||
		!strings.Contains(first, "make hint ID=self-heal MORE=1") {
		t.Errorf("the first hint must give the requirement and the questions, and not the design:\n%s", first)
	}
	if more := checkHint(st, c, qs, true); !strings.Contains(more, c.LongHint) {
		t.Errorf("MORE=1 must give the design:\n%s", more)
	}
	q := questionHint(st, qs[0])
	if !strings.Contains(q, qs[0].Text) || !strings.Contains(q, "docs/step09-answers.md#why") || !strings.Contains(q, "Write your answer down first") {
		t.Errorf("a question's hint:\n%s", q)
	}
}
