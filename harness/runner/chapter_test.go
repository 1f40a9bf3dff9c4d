package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/steps"
)

// A chapter's text comes in blocks: paragraphs, list items, headings, each
// with the check whose section it is in ("" outside the checks' sections)
// and whether it is inside a <details> fold. Fenced code is left out.
type block struct {
	text    string
	line    int    // of its first line, 1-based
	section string // the check whose "check-<id>" section holds it
	folded  bool
}

func chapterBlocks(doc string) []block {
	var (
		out      []block
		cur      *block
		fence    bool
		folded   bool
		section  string
		anchorID = regexp.MustCompile(`^<a id="check-([a-z0-9-]+)"></a>$`)
		numbered = regexp.MustCompile(`^\d+\. `)
	)
	end := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for i, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			end()
			fence = !fence
			continue
		case fence:
			continue
		case trimmed == "":
			end()
			continue
		case strings.HasPrefix(trimmed, "<details>"):
			end()
			folded = true
			continue
		case trimmed == "</details>":
			end()
			folded = false
			continue
		case anchorID.MatchString(trimmed):
			end()
			section = anchorID.FindStringSubmatch(trimmed)[1]
			continue
		case strings.HasPrefix(trimmed, "#"):
			end()
			if !strings.HasPrefix(trimmed, "### `"+section+"`") {
				section = ""
			}
			out = append(out, block{text: trimmed, line: i + 1, section: section, folded: folded})
			continue
		case strings.HasPrefix(line, "- ") || numbered.MatchString(line):
			end() // a list item starts a block of its own
		}
		if cur == nil {
			cur = &block{line: i + 1, section: section, folded: folded}
		} else {
			cur.text += "\n"
		}
		cur.text += line
	}
	end()
	return out
}

var (
	annotationRE = regexp.MustCompile(`<!--\s*(mutant|variant):\s*([a-z0-9 -]+?)\s*-->`)
	commentRE    = regexp.MustCompile(`(?s)<!--.*?-->`)
	// A claim that a check catches something: a parenthetical reference
	// "(`check`", "fails `check`", "caught by `check`", "`check` catches";
	// "(stage `name`" for a stage. In a check's own section, "fails here"
	// and "fails it" name that check.
	claimRE     = regexp.MustCompile("(?:\\(|\\bfails?\\s+|\\bcaught by\\s+|\\bcatch(?:es)?\\s+)`([a-z0-9-]+)`|`([a-z0-9-]+)`\\s+(?:catches|kills|fails (?:it|them))")
	stageRE     = regexp.MustCompile("\\(stage `([a-z ]+)`")
	failsHereRE = regexp.MustCompile(`\bfails?\s+(?:here|it)\b`)
)

// TestTheChaptersClaimsAreBackedByMutants keeps true every claim the
// chapter makes about which check (or stage) catches what: each one carries
// an annotation, <!-- mutant: name … -->, naming visible mutants that the
// claimed check kills (their want:; TestEveryMutantFailsItsCheckWithItsCause
// proves the kill), and <!-- variant: name --> names a design the chapter
// says passes. A claim without one, or backed by a mutant of another check,
// fails here: reword the claim, or add the mutant that proves it.
func TestTheChaptersClaimsAreBackedByMutants(t *testing.T) {
	st := steps.Default()
	doc, err := os.ReadFile(filepath.Join(root, st.Chapter))
	if err != nil {
		t.Fatal(err)
	}
	mutants := map[string]mutant{}
	for _, m := range loadMutants(t, filepath.Join("..", "testdata", st.Name, "mutants")) {
		mutants[m.name] = m
	}
	variants := map[string]bool{}
	for _, v := range loadMutants(t, filepath.Join("..", "testdata", st.Name, "variants")) {
		variants[v.name] = true
	}
	isCheck := map[string]bool{}
	for _, c := range st.Checks {
		isCheck[c.ID] = true
	}
	claims, backed := 0, 0
	for _, b := range chapterBlocks(string(doc)) {
		prose := commentRE.ReplaceAllString(b.text, "")
		claimed := map[string]bool{} // check IDs, and "stage <name>"
		for _, m := range claimRE.FindAllStringSubmatch(prose, -1) {
			if id := m[1] + m[2]; isCheck[id] {
				claimed[id] = true
			}
		}
		for _, m := range stageRE.FindAllStringSubmatch(prose, -1) {
			claimed["stage "+m[1]] = true
		}
		if b.section != "" && failsHereRE.MatchString(prose) {
			claimed[b.section] = true
		}
		wanted := map[string]bool{}
		for _, a := range annotationRE.FindAllStringSubmatch(b.text, -1) {
			for _, name := range strings.Fields(a[2]) {
				if a[1] == "variant" {
					if !variants[name] {
						t.Errorf("%s:%d names variant %s, which harness/testdata/%s/variants does not hold", st.Chapter, b.line, name, st.Name)
					}
					continue
				}
				m, ok := mutants[name]
				if !ok {
					t.Errorf("%s:%d names mutant %s, which harness/testdata/%s/mutants does not hold", st.Chapter, b.line, name, st.Name)
					continue
				}
				want := m.wantCheck
				if m.wantStage != "" {
					want = "stage " + m.wantStage
				}
				if !claimed[want] {
					t.Errorf("%s:%d names mutant %s, killed by %s, which the text there does not claim (it claims %v)", st.Chapter, b.line, name, want, keys(claimed))
				}
				wanted[want] = true
			}
		}
		for c := range claimed {
			claims++
			if !wanted[c] {
				t.Errorf("%s:%d claims %s catches something, with no <!-- mutant: … --> that %s kills:\n%s", st.Chapter, b.line, c, c, b.text)
				continue
			}
			backed++
		}
	}
	t.Logf("%d claims, %d backed by a mutant", claims, backed)
	if claims == 0 {
		t.Errorf("%s makes no claim this test recognises: has the annotation syntax changed?", st.Chapter)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var (
	questionAnchorRE = regexp.MustCompile(`<a id="(q-[a-z0-9-]+)"></a>`)
	inlineCodeRE     = regexp.MustCompile("`[^`]*`")
	linkTargetRE     = regexp.MustCompile(`\]\([^)]*\)`)
	questionMarkRE   = regexp.MustCompile(`\?(?:\s|$|[)"*])`)
)

// TestEveryChapterQuestionHasAnAnswer: every question the chapter asks (a
// sentence ending in "?" outside code and folds) carries an anchor
// <a id="q-…"></a>, and docs/instructors.md answers each one, in the
// chapter's order, under "**[q-…](<chapter>.md#q-…)**"; an answer to a
// question the chapter no longer asks fails too.
func TestEveryChapterQuestionHasAnAnswer(t *testing.T) {
	st := steps.Default()
	doc, err := os.ReadFile(filepath.Join(root, st.Chapter))
	if err != nil {
		t.Fatal(err)
	}
	answerRE := regexp.MustCompile(`\*\*\[(q-[a-z0-9-]+)\]\(` + regexp.QuoteMeta(filepath.Base(st.Chapter)) + `#(q-[a-z0-9-]+)\)\*\*`)
	var questions []string
	for _, b := range chapterBlocks(string(doc)) {
		ids := questionAnchorRE.FindAllStringSubmatch(b.text, -1)
		for _, id := range ids {
			if slices.Contains(questions, id[1]) {
				t.Errorf("%s:%d: question %s is anchored twice", st.Chapter, b.line, id[1])
			}
			questions = append(questions, id[1])
		}
		prose := linkTargetRE.ReplaceAllString(inlineCodeRE.ReplaceAllString(commentRE.ReplaceAllString(b.text, ""), "``"), "]")
		if !b.folded && len(ids) == 0 && questionMarkRE.MatchString(prose) {
			t.Errorf("%s:%d asks a question with no <a id=\"q-…\"></a> anchor (and so no answer in docs/instructors.md):\n%s", st.Chapter, b.line, b.text)
		}
	}
	if len(questions) == 0 {
		t.Fatalf("%s anchors no question", st.Chapter)
	}
	guide, err := os.ReadFile(filepath.Join(root, "docs", "instructors.md"))
	if err != nil {
		t.Fatal(err)
	}
	var answered []string
	for _, b := range chapterBlocks(string(guide)) {
		m := answerRE.FindStringSubmatch(b.text)
		if m == nil {
			continue
		}
		if m[1] != m[2] {
			t.Errorf("docs/instructors.md: the answer labelled %s links to %s", m[1], m[2])
		}
		answer := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(b.text), m[0]))
		if len(answer) < 80 {
			t.Errorf("docs/instructors.md: the answer to %s is %d characters: %q", m[1], len(answer), answer)
		}
		answered = append(answered, m[1])
	}
	for _, q := range questions {
		if !slices.Contains(answered, q) {
			t.Errorf("docs/instructors.md has no answer to %s (%s#%s)", q, st.Chapter, q)
		}
	}
	var order []string
	for _, a := range answered {
		if !slices.Contains(questions, a) {
			t.Errorf("docs/instructors.md answers %s, which %s does not ask", a, st.Chapter)
			continue
		}
		order = append(order, a)
	}
	if fmt.Sprint(order) != fmt.Sprint(questions) && len(order) == len(questions) {
		t.Errorf("docs/instructors.md answers in another order than the chapter asks:\n  chapter: %v\n  answers: %v", questions, order)
	}
}

// TestTheChaptersFoldsRenderOnGitHub keeps every fold of the chapter one
// that GitHub (and an editor's Markdown preview) renders closed, with its
// Markdown inside rendered: <details><summary>…</summary> on a line of its
// own with a blank line after it, </details> on a line of its own with a
// blank line before it, none nested, none in a code fence, each with
// something in it. In a plain terminal a fold prints in full; the chapter
// says so, and tells the reader to skip it until they have answered.
func TestTheChaptersFoldsRenderOnGitHub(t *testing.T) {
	st := steps.Default()
	b, err := os.ReadFile(filepath.Join(root, st.Chapter))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if !strings.Contains(strings.Join(strings.Fields(doc), " "), "In a plain terminal they print in full: skip them until you have answered.") {
		t.Errorf("%s no longer tells a terminal reader that its folds print in full there", st.Chapter)
	}
	summaryRE := regexp.MustCompile(`^<details><summary>[^<>]+</summary>$`)
	lines := strings.Split(doc, "\n")
	blank := func(i int) bool { return i < 0 || i >= len(lines) || strings.TrimSpace(lines[i]) == "" }
	fence, open, folds := false, -1, 0
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			fence = !fence
		case fence && strings.Contains(trimmed, "details>"):
			t.Errorf("%s:%d: a fold inside a code fence", st.Chapter, i+1)
		case fence:
		case strings.HasPrefix(trimmed, "<details"):
			if open >= 0 {
				t.Errorf("%s:%d: a fold inside the fold of line %d", st.Chapter, i+1, open+1)
			}
			if !summaryRE.MatchString(line) {
				t.Errorf("%s:%d: a fold opens as <details><summary>text</summary> on a line of its own: %q", st.Chapter, i+1, line)
			}
			if !blank(i-1) || !blank(i+1) {
				t.Errorf("%s:%d: a fold needs a blank line before and after its <summary> line, or GitHub shows its Markdown raw", st.Chapter, i+1)
			}
			open = i
		case strings.Contains(trimmed, "details>"):
			if trimmed != "</details>" || open < 0 {
				t.Errorf("%s:%d: %q closes no fold (a fold closes with </details> on a line of its own)", st.Chapter, i+1, line)
				continue
			}
			if !blank(i-1) || !blank(i+1) {
				t.Errorf("%s:%d: </details> needs a blank line before and after it", st.Chapter, i+1)
			}
			if i-open < 3 {
				t.Errorf("%s:%d: an empty fold", st.Chapter, open+1)
			}
			open = -1
			folds++
		}
	}
	if open >= 0 {
		t.Errorf("%s:%d: a fold never closed", st.Chapter, open+1)
	}
	if folds == 0 {
		t.Errorf("%s has no fold: the chapter's explanations sit in folds", st.Chapter)
	}
}
