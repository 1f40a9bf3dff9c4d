package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/grade"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
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
			if !strings.HasPrefix(strings.TrimLeft(trimmed, "# "), "`"+section+"`") {
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
	commentRE = regexp.MustCompile(`(?s)<!--.*?-->`)
	anchorRE  = regexp.MustCompile(`<a id="[^"]*"></a>`)
	// A claim that a check catches something: a parenthetical reference
	// "(`check`", "fails `check`", "caught by `check`", "`check` catches";
	// "(stage `name`" for a stage. In a check's own section, "fails here"
	// and "fails it" name that check.
	claimRE     = regexp.MustCompile("(?:\\(|\\bfails?\\s+|\\bcaught by\\s+|\\bcatch(?:es)?\\s+)`([a-z0-9-]+)`|`([a-z0-9-]+)`\\s+(?:catches|kills|fails (?:it|them))")
	stageRE     = regexp.MustCompile("\\(stage `([a-z ]+)`")
	failsHereRE = regexp.MustCompile(`\bfails?\s+(?:here|it)\b`)
	listMarkRE  = regexp.MustCompile(`^(?:- |\d+\. )`)
)

// A backing says which mutants (and variants) back the claims of one block
// of a chapter's text: the block whose prose holds phrase.
type backing struct {
	file, phrase      string
	mutants, variants []string
	line              int // in the claims file
	matched           int // blocks whose prose holds phrase
}

// loadBackings reads a step's claims file (harness/testdata/<step>/claims.txt):
// one backing a line, "<file> | <phrase> | mutant <names…>; variant <names…>".
// It lives with the mutants, out of the chapter, so that a reader of the
// chapter meets no annotations and a learner's copy holds neither.
func loadBackings(t *testing.T, path string) []*backing {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*backing
	for i, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 3 {
			t.Errorf("%s:%d: want <file> | <phrase> | mutant …; variant …, got %q", path, i+1, line)
			continue
		}
		b := &backing{file: strings.TrimSpace(f[0]), phrase: strings.TrimSpace(f[1]), line: i + 1}
		for _, group := range strings.Split(f[2], ";") {
			kind, names, _ := strings.Cut(strings.TrimSpace(group), " ")
			switch kind {
			case "mutant":
				b.mutants = append(b.mutants, strings.Fields(names)...)
			case "variant":
				b.variants = append(b.variants, strings.Fields(names)...)
			default:
				t.Errorf("%s:%d: %q is neither mutant nor variant", path, i+1, kind)
			}
		}
		out = append(out, b)
	}
	return out
}

// prose is a block's text as a claims file quotes it: comments, anchors and
// its list marker left out, whitespace collapsed.
func prose(text string) string {
	return listMarkRE.ReplaceAllString(strings.Join(strings.Fields(anchorRE.ReplaceAllString(commentRE.ReplaceAllString(text, ""), "")), " "), "")
}

// TestTheChaptersClaimsAreBackedByMutants keeps true every claim the
// chapter makes about which check (or stage) catches what: the step's claims
// file backs each block that makes one with visible mutants the claimed
// check kills (their want:; TestEveryMutantFailsItsCheckWithItsCause proves
// the kill), and names the variants (designs the chapter says pass) it
// speaks of. A claim without a backing, a backing of a mutant of another
// check, or one whose phrase is in no block (or in several) fails here:
// reword the claim, or add the mutant that proves it.
func TestTheChaptersClaimsAreBackedByMutants(t *testing.T) {
	st := steps.Default()
	// The chapter and its answers (pages of their own, so that a reader
	// meets no answer before its question) make claims alike.
	var docs []chapterDoc
	for _, name := range append(st.ChapterParts(), answerPages(t, st)...) {
		text, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(text), "<!-- mutant:") || strings.Contains(string(text), "<!-- variant:") {
			t.Errorf("%s annotates a claim in its text: back it in harness/testdata/%s/claims.txt instead", name, st.Name)
		}
		docs = append(docs, chapterDoc{name, string(text)})
	}
	testdata := filepath.Join("..", "testdata", st.Name)
	backings := loadBackings(t, filepath.Join(testdata, "claims.txt"))
	mutants := map[string]mutant{}
	for _, m := range loadMutants(t, filepath.Join(testdata, "mutants")) {
		mutants[m.name] = m
	}
	variants := map[string]bool{}
	for _, v := range loadMutants(t, filepath.Join(testdata, "variants")) {
		variants[v.name] = true
	}
	isCheck := map[string]bool{}
	for _, c := range st.Checks {
		isCheck[c.ID] = true
	}
	claims, backed := 0, 0
	for _, d := range docs {
		for _, b := range chapterBlocks(d.text) {
			text := prose(b.text)
			claimed := map[string]bool{} // check IDs, and "stage <name>"
			for _, m := range claimRE.FindAllStringSubmatch(text, -1) {
				if id := m[1] + m[2]; isCheck[id] {
					claimed[id] = true
				}
			}
			for _, m := range stageRE.FindAllStringSubmatch(text, -1) {
				claimed["stage "+m[1]] = true
			}
			if b.section != "" && failsHereRE.MatchString(text) {
				claimed[b.section] = true
			}
			wanted := map[string]bool{}
			for _, k := range backings {
				if k.file != d.name || !strings.Contains(text, k.phrase) {
					continue
				}
				k.matched++
				for _, name := range k.variants {
					if !variants[name] {
						t.Errorf("claims.txt:%d names variant %s, which harness/testdata/%s/variants does not hold", k.line, name, st.Name)
					}
				}
				for _, name := range k.mutants {
					m, ok := mutants[name]
					if !ok {
						t.Errorf("claims.txt:%d names mutant %s, which harness/testdata/%s/mutants does not hold", k.line, name, st.Name)
						continue
					}
					want := m.wantCheck
					if m.wantStage != "" {
						want = "stage " + m.wantStage
					}
					if !claimed[want] {
						t.Errorf("claims.txt:%d backs %s:%d with mutant %s, killed by %s, which the text there does not claim (it claims %v)", k.line, d.name, b.line, name, want, keys(claimed))
					}
					wanted[want] = true
				}
			}
			for c := range claimed {
				claims++
				if !wanted[c] {
					t.Errorf("%s:%d claims %s catches something, and no line of harness/testdata/%s/claims.txt backs it with a mutant %s kills:\n%s", d.name, b.line, c, st.Name, c, b.text)
					continue
				}
				backed++
			}
		}
	}
	for _, k := range backings {
		if k.matched != 1 {
			t.Errorf("claims.txt:%d: the phrase %q is in %d blocks of %s, want exactly one", k.line, k.phrase, k.matched, k.file)
		}
	}
	t.Logf("%d claims, %d backed by a mutant", claims, backed)
	if claims == 0 {
		t.Errorf("%s makes no claim this test recognises: has the claim syntax changed?", st.Chapter)
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
	var questions []string
	where := map[string]string{} // question -> the part that asks it
	for _, part := range st.ChapterParts() {
		doc, err := os.ReadFile(filepath.Join(root, part))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range chapterBlocks(string(doc)) {
			ids := questionAnchorRE.FindAllStringSubmatch(b.text, -1)
			for _, id := range ids {
				if slices.Contains(questions, id[1]) {
					t.Errorf("%s:%d: question %s is anchored twice", part, b.line, id[1])
				}
				questions = append(questions, id[1])
				where[id[1]] = filepath.Base(part)
			}
			prose := linkTargetRE.ReplaceAllString(inlineCodeRE.ReplaceAllString(commentRE.ReplaceAllString(b.text, ""), "``"), "]")
			if !b.folded && len(ids) == 0 && questionMarkRE.MatchString(prose) {
				t.Errorf("%s:%d asks a question with no <a id=\"q-…\"></a> anchor (and so no answer in docs/instructors.md):\n%s", part, b.line, b.text)
			}
		}
	}
	if len(questions) == 0 {
		t.Fatalf("%s anchors no question", st.Chapter)
	}
	answerRE := regexp.MustCompile(`\*\*\[(q-[a-z0-9-]+)\]\(([a-z0-9-]+\.md)#(q-[a-z0-9-]+)\)\*\*`)
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
		if m[1] != m[3] {
			t.Errorf("docs/instructors.md: the answer labelled %s links to %s", m[1], m[3])
		}
		if w, ok := where[m[1]]; ok && m[2] != w {
			t.Errorf("docs/instructors.md: the answer to %s links to %s, but %s asks it", m[1], m[2], w)
		}
		answer := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(b.text), m[0]))
		if len(answer) < 80 {
			t.Errorf("docs/instructors.md: the answer to %s is %d characters: %q", m[1], len(answer), answer)
		}
		answered = append(answered, m[1])
	}
	for _, q := range questions {
		if !slices.Contains(answered, q) {
			t.Errorf("docs/instructors.md has no answer to %s (%s#%s)", q, where[q], q)
		}
	}
	var order []string
	for _, a := range answered {
		if !slices.Contains(questions, a) {
			t.Errorf("docs/instructors.md answers %s, which %v does not ask", a, st.ChapterParts())
			continue
		}
		order = append(order, a)
	}
	if fmt.Sprint(order) != fmt.Sprint(questions) && len(order) == len(questions) {
		t.Errorf("docs/instructors.md answers in another order than the chapter asks:\n  chapter: %v\n  answers: %v", questions, order)
	}
}

// chapterDoc is one Markdown file of a chapter: its name and text.
type chapterDoc struct{ name, text string }

// answerPages lists the pages of the step's answers, relative to the root.
func answerPages(t *testing.T, st step.Step) []string {
	t.Helper()
	pages, err := step.AnswerPages(root, st.Chapter)
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// TestTheChaptersAnswersAreLinkedNotPrinted: the chapter's explanations live
// on pages of their own, one for each set of questions, so that a reader of
// the chapter in a terminal (where an HTML fold prints in full) meets each
// question before its answer, and reading one answer shows no other. The
// chapter holds no fold; each of its links into the answers names a page
// there, and every page is linked from the chapter.
func TestTheChaptersAnswersAreLinkedNotPrinted(t *testing.T) {
	st := steps.Default()
	anchors := map[string]bool{} // the pages, by name
	for _, p := range answerPages(t, st) {
		anchors[filepath.Base(p)] = true
	}
	linkRE := regexp.MustCompile(`\]\(` + regexp.QuoteMeta(filepath.Base(step.AnswersOf(st.Chapter))) + `/([a-z0-9-]+\.md)\)`)
	linked := map[string]bool{}
	for _, part := range st.ChapterParts() {
		doc, err := os.ReadFile(filepath.Join(root, part))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(doc), -1) {
			linked[m[1]] = true
			if !anchors[m[1]] {
				t.Errorf("%s links to %s/%s, which is no page", part, step.AnswersOf(st.Chapter), m[1])
			}
		}
	}
	// No page a learner's copy holds folds an answer away: the chapter, the
	// contract, the checks' page, the harness's guide (every doc but those
	// make template leaves out).
	omitted := map[string]bool{}
	for _, o := range grade.LearnerCopyOmits(steps.All()) {
		omitted[o.Path] = true
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(pages, filepath.Join(root, "README.md")) {
		if rel, _ := filepath.Rel(root, p); omitted[filepath.ToSlash(rel)] {
			continue
		}
		doc, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(doc), "<details") {
			t.Errorf("%s holds a fold: a learner reading it in a terminal meets what it hides; put answers in %s", p, step.AnswersOf(st.Chapter))
		}
	}
	for a := range anchors {
		if !linked[a] {
			t.Errorf("%s/%s is linked from nowhere in %v", step.AnswersOf(st.Chapter), a, st.ChapterParts())
		}
	}
}

// goDocRE finds a `go doc …` command in inline code (markdown may break it
// across lines) or on a line of its own in a fenced block, before any
// shell comment.
var goDocRE = regexp.MustCompile("`go doc\\s+([^`]+)`|(?m)^go doc\\s+([^#\n]+)")

// TestTheChaptersGoDocCommandsResolve runs every `go doc` command the
// chapter, its answers and its questions' evidence (make hint) print, where the chapter says to run them (the
// learner's module: its go.mod requires controller-runtime), so that a
// renamed or moved symbol (Builder.Owns became TypedBuilder's) is found here
// and not by a learner at "cannot find package".
func TestTheChaptersGoDocCommandsResolve(t *testing.T) {
	testenv.Long(t, "runs go doc")
	st := steps.Default()
	seen := 0
	for _, name := range append(st.ChapterParts(), answerPages(t, st)...) {
		text, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goDocRE.FindAllStringSubmatch(string(text), -1) {
			args := strings.Fields(m[1] + m[2])
			seen++
			cmd := exec.Command("go", append([]string{"doc"}, args...)...)
			cmd.Dir = filepath.Join(root, st.Dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s prints `go doc %s`; run in %s it fails (%v):\n%s", name, strings.Join(args, " "), st.Dir, err, out)
			}
		}
	}
	// make hint ID=q-… prints the evidence of a question with no written
	// answer, go doc commands included.
	// So does a check's direction (make hint ID=<check> MORE=1).
	hinted := map[string]string{}
	for _, e := range st.Evidence {
		hinted[e.Question] = e.Where
	}
	for _, c := range st.Checks {
		hinted[c.ID] = c.Direction
	}
	for id, where := range hinted {
		for _, m := range regexp.MustCompile(`go doc ((?:-u )?[^\s,;)]+)`).FindAllStringSubmatch(where, -1) {
			seen++
			cmd := exec.Command("go", append([]string{"doc"}, strings.Fields(m[1])...)...)
			cmd.Dir = filepath.Join(root, st.Dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("make hint ID=%s prints `go doc %s`; run in %s it fails (%v):\n%s", id, m[1], st.Dir, err, out)
			}
		}
	}
	t.Logf("%d go doc commands resolve", seen)
	if seen == 0 {
		t.Fatalf("%s prints no `go doc` command: the test looks for none, or the pattern is stale", st.Chapter)
	}
}
