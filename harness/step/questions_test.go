package step

import (
	"os"
	"path/filepath"
	"testing"
)

const chapterText = `## Nothing wakes the route

- <a id="q-owns"></a>Which EdgeRoute does Owns() enqueue when the user's
  Service is created? (` + "`self-heal`" + `<!-- mutant: owns-service -->)
- <a id="q-find"></a>How can your controller find the routes?

**Why:** [Nothing wakes the route](step09-answers/nothing-wakes.md), on a page of its own.

## Two timelines

- <a id="q-which"></a>Which run is which?
`

func TestQuestionsAreReadWithTheirAnswerLinkAndNotTheirAnswer(t *testing.T) {
	qs := Questions("docs/step09.md", "docs/step09-answers", chapterText)
	if len(qs) != 3 {
		t.Fatalf("want 3 questions, got %+v", qs)
	}
	want := Question{ID: "q-owns", Doc: "docs/step09.md", Text: "Which EdgeRoute does Owns() enqueue when the user's Service is created? (`self-heal`)",
		Answer: "docs/step09-answers/nothing-wakes.md"}
	if qs[0] != want {
		t.Errorf("got %+v\nwant %+v", qs[0], want)
	}
	if qs[1].Answer != want.Answer || qs[2].Answer != "" || qs[2].Text != "Which run is which?" {
		t.Errorf("the second shares the section's answer, the third (another section) has none: %+v", qs[1:])
	}
	if about := About(qs, "self-heal"); len(about) != 1 || about[0].ID != "q-owns" {
		t.Errorf("About(self-heal) = %+v", about)
	}
}

// TestTheCoursesChaptersAskQuestionsMakeHintFinds: every question of the
// workbook's chapters is found, each with its text.
func TestTheCoursesChaptersAskQuestionsMakeHintFinds(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	found := 0
	for _, d := range docs {
		text, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		rel := filepath.ToSlash(filepath.Join("docs", filepath.Base(d)))
		for _, q := range Questions(rel, AnswersOf(rel), string(text)) {
			found++
			if len(q.Text) < 20 {
				t.Errorf("%s %s: text %q", rel, q.ID, q.Text)
			}
		}
	}
	if found < 10 {
		t.Fatalf("found %d questions in the chapters", found)
	}
}

// TestAChaptersSecondPartLinksTheChaptersAnswers: the questions of a step's
// Further part are read after the chapter's, each with the file that asks
// it, and their answers are among the chapter's.
func TestAChaptersSecondPartLinksTheChaptersAnswers(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	further := "## More\n\n- <a id=\"q-more\"></a>What else could go wrong?\n\n**Why:** [More](step09-answers/more.md).\n"
	for name, text := range map[string]string{"step09.md": chapterText, "step09-further.md": further} {
		if err := os.WriteFile(filepath.Join(root, "docs", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := Step{Chapter: "docs/step09.md", Further: "docs/step09-further.md"}
	qs, err := st.ReadQuestions(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 4 {
		t.Fatalf("want the chapter's 3 questions and the second part's 1, got %+v", qs)
	}
	want := Question{ID: "q-more", Doc: "docs/step09-further.md", Text: "What else could go wrong?", Answer: "docs/step09-answers/more.md"}
	if qs[3] != want {
		t.Errorf("got %+v\nwant %+v", qs[3], want)
	}
	if _, err := (Step{Chapter: "docs/step09.md", Further: "docs/nowhere.md"}).ReadQuestions(root); err == nil {
		t.Error("a missing part read without an error")
	}
}

// TestAnswerPagesListsTheChaptersAnswers: a page per set of questions, in
// name order; a chapter with none is an error, not an empty list.
func TestAnswerPagesListsTheChaptersAnswers(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "docs", "step09-answers")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b.md", "a.md", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("# Why\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pages, err := AnswerPages(root, "docs/step09.md")
	if err != nil || len(pages) != 2 || pages[0] != "docs/step09-answers/a.md" || pages[1] != "docs/step09-answers/b.md" {
		t.Errorf("AnswerPages = %v, %v", pages, err)
	}
	if _, err := AnswerPages(root, "docs/step08.md"); err == nil {
		t.Error("a chapter without answers listed no error")
	}
}
