package step

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// A Question is one question a chapter asks the learner, under its anchor
// (<a id="q-…"></a>), for make hint ID=q-… to print without its answer.
type Question struct {
	ID   string
	Doc  string // the chapter's file that asks it, relative to the root
	Text string // the question as the chapter asks it, comments and anchor left out
	// Answer is the page of the chapter's answers that explains it
	// ("docs/step01-answers/nothing-wakes-the-route.md"); "" when the
	// chapter links none after it (the learner's own run or timeline
	// answers it).
	Answer string
}

var (
	questionRE = regexp.MustCompile(`<a id="(q-[a-z0-9-]+)"></a>`)
	commentRE  = regexp.MustCompile(`<!--.*?-->`)
)

// AnswersOf is the directory a chapter's answers live in, relative to the
// root, a page for each set of questions so that reading one answer shows
// no other: docs/step07.md's are in docs/step07-answers/.
func AnswersOf(chapter string) string {
	return strings.TrimSuffix(chapter, ".md") + "-answers"
}

// AnswerPages lists the pages of the chapter's answers, relative to the
// root, in name order.
func AnswerPages(root, chapter string) ([]string, error) {
	dir := AnswersOf(chapter)
	matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "*.md"))
	if err != nil {
		return nil, fmt.Errorf("listing the chapter's answers: %w", err)
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("the chapter's answers: no page in %s", dir)
	}
	pages := make([]string, 0, len(matches))
	for _, m := range matches {
		pages = append(pages, dir+"/"+filepath.Base(m))
	}
	return pages, nil
}

// Questions reads the questions of one part of a chapter; part is its path
// relative to the workbook root, answers the directory of the chapter's
// answers (AnswersOf the chapter's first part).
func Questions(part, answers, text string) []Question {
	linkRE := regexp.MustCompile(`\]\(` + regexp.QuoteMeta(relativeTo(part, answers)) + `/([a-z0-9-]+\.md)\)`)
	lines := strings.Split(text, "\n")
	var out []Question
	for i := 0; i < len(lines); i++ {
		m := questionRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		q := Question{ID: m[1], Doc: part}
		body := []string{strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), "- "))}
		j := i + 1
		for ; j < len(lines); j++ {
			t := strings.TrimSpace(lines[j])
			if t == "" || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "#") {
				break
			}
			body = append(body, t)
		}
		q.Text = strings.TrimSpace(commentRE.ReplaceAllString(questionRE.ReplaceAllString(strings.Join(body, " "), ""), ""))
		// Its answer is the first link into the answers before the next
		// heading.
		for k := j; k < len(lines) && !strings.HasPrefix(lines[k], "#"); k++ {
			if l := linkRE.FindStringSubmatch(lines[k]); l != nil {
				q.Answer = filepath.ToSlash(answers) + "/" + l[1]
				break
			}
		}
		out = append(out, q)
		i = j - 1
	}
	return out
}

// About lists the questions whose text names the check (as `id`).
func About(qs []Question, check string) []Question {
	var out []Question
	for _, q := range qs {
		if strings.Contains(q.Text, "`"+check+"`") {
			out = append(out, q)
		}
	}
	return out
}

// relativeTo is target's path as a link from the file from writes it.
func relativeTo(from, target string) string {
	rel, err := filepath.Rel(filepath.Dir(from), target)
	if err != nil {
		return filepath.Base(target)
	}
	return filepath.ToSlash(rel)
}

// ReadQuestions reads the questions of every part of the step's chapter,
// in reading order, from the workbook at root.
func (s Step) ReadQuestions(root string) ([]Question, error) {
	var out []Question
	for _, part := range s.ChapterParts() {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(part)))
		if err != nil {
			return nil, fmt.Errorf("reading the chapter's questions: %w", err)
		}
		out = append(out, Questions(part, AnswersOf(s.Chapter), string(text))...)
	}
	return out, nil
}
