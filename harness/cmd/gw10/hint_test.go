package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
)

// TestAHintTeachesTheDesignOnlyWhenAskedThrice: make hint ID=<check> says
// what the check requires and which questions lead to it; MORE=1 says where
// to look (the Direction), never the design; MORE=2 gives the design (the
// LongHint). A question prints without its answer, and says where the
// answer is.
func TestAHintTeachesTheDesignOnlyWhenAskedThrice(t *testing.T) {
	st := step.Step{Chapter: "docs/step09.md"}
	c := checks.Check{ID: "self-heal", Title: "flips", Hint: "creating a Service must flip the route",
		Direction: "Read the handlers controller-runtime offers", LongHint: "Watch Services with a map function"}
	qs := []step.Question{
		{ID: "q-owns", Doc: "docs/step09.md", Text: "Which EdgeRoute does Owns() enqueue? (`self-heal`)", Answer: "docs/step09-answers/why.md"},
		{ID: "q-later", Doc: "docs/step09-further.md", Text: "And after the checks pass? (`self-heal`)", Answer: "docs/step09-answers/why.md"},
	}
	first := checkHint(st, c, qs, 0)
	// A question the chapter's second part asks says so: the learner would look for it in the chapter.
	if !strings.Contains(first, "docs/step09-further.md#q-later") || strings.Contains(first, "docs/step09.md#q-owns") {
		t.Errorf("the first hint must say where a question outside the chapter is asked, and only that one:\n%s", first)
	}
	if strings.Contains(first, c.LongHint) || strings.Contains(first, c.Direction) || !strings.Contains(first, c.Hint) ||
		!strings.Contains(first, "q-owns") || !strings.Contains(first, "make hint ID=self-heal MORE=1") {
		t.Errorf("the first hint must give the requirement and the questions, and neither the direction nor the design:\n%s", first)
	}
	if more := checkHint(st, c, qs, 1); !strings.Contains(more, c.Direction) || strings.Contains(more, c.LongHint) ||
		!strings.Contains(more, "make hint ID=self-heal MORE=2") {
		t.Errorf("MORE=1 must say where to look, and not give the design:\n%s", more)
	}
	if more := checkHint(st, c, qs, 2); !strings.Contains(more, c.LongHint) {
		t.Errorf("MORE=2 must give the design:\n%s", more)
	}
	q := questionHint(st, qs[0])
	if !strings.Contains(q, qs[0].Text) || !strings.Contains(q, "docs/step09-answers/why.md") || !strings.Contains(q, "Write your answer down first") {
		t.Errorf("a question's hint:\n%s", q)
	}
}

// TestAQuestionWithNoWrittenAnswerSaysWhereItsEvidenceIs: make hint
// ID=q-… for a question the answers file does not answer prints that
// question's own evidence pointer, not a stock sentence; a question the
// step names no evidence for points at its place in the chapter.
func TestAQuestionWithNoWrittenAnswerSaysWhereItsEvidenceIs(t *testing.T) {
	st := step.Step{Chapter: "docs/step09.md", Evidence: []step.QuestionEvidence{
		{Question: "q-twice", Where: "task 4's run: your controller's log around the one spec change"},
	}}
	twice := questionHint(st, step.Question{ID: "q-twice", Text: "How many pushes for one change, and why?"})
	if !strings.Contains(twice, "task 4's run: your controller's log around the one spec change") || strings.Contains(twice, "timeline") {
		t.Errorf("q-twice's hint must give its own evidence:\n%s", twice)
	}
	other := questionHint(st, step.Question{ID: "q-other", Doc: "docs/step09.md", Text: "Why does watching the referenced Service matter?"})
	if !strings.Contains(other, "docs/step09.md#q-other") {
		t.Errorf("a question with no evidence named must point at its place in the chapter:\n%s", other)
	}
	further := questionHint(st, step.Question{ID: "q-far", Doc: "docs/step09-further.md", Text: "What does a resync replay?"})
	if !strings.Contains(further, "docs/step09-further.md#q-far") {
		t.Errorf("a question of the chapter's second part must point at its place there:\n%s", further)
	}
}

// TestEveryQuestionOfTheWorkbooksChapterGetsItsOwnHint: make hint for each
// question of the default step's chapter names either its written answer or
// its own evidence, never the chapter's place alone.
func TestEveryQuestionOfTheWorkbooksChapterGetsItsOwnHint(t *testing.T) {
	st := steps.Default()
	qs, err := st.ReadQuestions(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 10 {
		t.Fatalf("%s asks %d questions", st.Chapter, len(qs))
	}
	for _, q := range qs {
		h := questionHint(st, q)
		if q.Answer == "" && !strings.Contains(h, st.EvidenceFor(q.ID)) || st.EvidenceFor(q.ID) == "" && q.Answer == "" {
			t.Errorf("%s: no answer and no evidence of its own:\n%s", q.ID, h)
		}
	}
}

// TestAClauseHintSaysItPlainlyThenInFull: make hint ID=<clause> opens with
// the clause in a few words, then the rule as the checks hold it, then the
// checks that prove it.
func TestAClauseHintSaysItPlainlyThenInFull(t *testing.T) {
	st := step.Step{Checks: []checks.Check{{ID: "quiescent", Clauses: []string{"Q-QUIET"}}}}
	got := clauseHint(st, step.Clause{ID: "Q-QUIET", Plain: "Once everything matches, nothing happens.", Rule: "a converged controller writes nothing"})
	plain, full, proved := strings.Index(got, "Once everything matches"), strings.Index(got, "In full: a converged controller"), strings.Index(got, "Proved by: quiescent")
	if plain < 0 || full < plain || proved < full {
		t.Errorf("a clause's hint must say it plainly, then in full, then which checks prove it:\n%s", got)
	}
}
