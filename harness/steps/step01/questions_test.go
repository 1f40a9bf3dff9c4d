package step01

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steptest"
)

// TestEveryUnansweredQuestionSaysWhereItsEvidenceIs: every question of the
// chapter that links no written answer has its own evidence pointer (make
// hint ID=<question> prints it), every pointer belongs to such a question,
// and the chapter anchors a pointer names exist.
func TestEveryUnansweredQuestionSaysWhereItsEvidenceIs(t *testing.T) {
	st := Step()
	root := filepath.Join("..", "..", "..")
	questions, err := st.ReadQuestions(root)
	if err != nil {
		t.Fatal(err)
	}
	var text []byte // every part of the chapter: a pointer's ", #anchor" may be in any
	for _, part := range st.ChapterParts() {
		b, err := os.ReadFile(filepath.Join(root, part))
		if err != nil {
			t.Fatal(err)
		}
		text = append(text, b...)
	}
	var ids []string
	for _, q := range questions {
		ids = append(ids, q.ID)
		where := st.EvidenceFor(q.ID)
		has := where != ""
		switch {
		case q.Answer == "" && !has:
			t.Errorf("%s links no written answer and has no evidence pointer: add one to questionEvidence (harness/steps/step01/questions.go)", q.ID)
		case q.Answer != "" && has:
			t.Errorf("%s has a written answer (%s) and an evidence pointer too: drop the pointer", q.ID, q.Answer)
		case has && len(where) < 40:
			t.Errorf("%s's evidence pointer says too little: %q", q.ID, where)
		}
	}
	seen := map[string]bool{}
	for _, e := range st.Evidence {
		if !slices.Contains(ids, e.Question) {
			t.Errorf("questionEvidence names %s, which %v does not ask", e.Question, st.ChapterParts())
		}
		if seen[e.Question] {
			t.Errorf("questionEvidence names %s twice", e.Question)
		}
		seen[e.Question] = true
	}
	// Every docs/<file>.md#<anchor> a pointer names resolves.
	ref := regexp.MustCompile(`docs/([a-z0-9-]+\.md)(#[a-z0-9-]+)?`)
	for _, e := range st.Evidence {
		id, where := e.Question, e.Where
		for _, m := range ref.FindAllStringSubmatch(where, -1) {
			doc, err := os.ReadFile(filepath.Join(root, "docs", m[1]))
			if err != nil {
				t.Errorf("%s's evidence names docs/%s: %v", id, m[1], err)
				continue
			}
			if m[2] != "" && !steptest.HasAnchor(string(doc), m[2][1:]) {
				t.Errorf("%s's evidence names docs/%s%s, which has no such anchor", id, m[1], m[2])
			}
		}
		for _, a := range regexp.MustCompile(`, (#[a-z0-9-]+)`).FindAllStringSubmatch(where, -1) {
			if !steptest.HasAnchor(string(text), a[1][1:]) {
				t.Errorf("%s's evidence names %s%s, which has no such anchor", id, st.Chapter, a[1])
			}
		}
	}
}

// TestTheChaptersLinksResolve: every link of the chapter and its answers to
// an anchor (in the same file, in another doc, in README) names one that
// exists, so that moving a section (the main path, Going further) breaks no
// "see …" of the text.
func TestTheChaptersLinksResolve(t *testing.T) {
	st := Step()
	root := filepath.Join("..", "..", "..")
	pages, err := step.AnswerPages(root, st.Chapter)
	if err != nil {
		t.Fatal(err)
	}
	broken, links, err := steptest.BrokenLinks(root, append(append(st.ChapterParts(), pages...), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
	if links < 10 {
		t.Errorf("found %d links: has the link syntax changed?", links)
	}
}

// TestEveryCheckHasAQuestionThatLeadsToIt: the chapter's Build it says that
// make hint ID=<check> lists the questions that lead to each check; every
// check of the step has one: a question of the chapter that names it.
func TestEveryCheckHasAQuestionThatLeadsToIt(t *testing.T) {
	st := Step()
	questions, err := st.ReadQuestions(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Checks {
		if len(step.About(questions, c.ID)) == 0 {
			t.Errorf("no question of %v names `%s`: make hint ID=%s would list none", st.ChapterParts(), c.ID, c.ID)
		}
	}
}
