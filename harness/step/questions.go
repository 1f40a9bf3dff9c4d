package step

import (
	"path/filepath"
	"regexp"
	"strings"
)

// A Question is one question a chapter asks the learner, under its anchor
// (<a id="q-…"></a>), for make hint ID=q-… to print without its answer.
type Question struct {
	ID   string
	Text string // the question as the chapter asks it, comments and anchor left out
	// Answer is where the chapter's answers file explains it
	// ("docs/step01-answers.md#why-…"); "" when the chapter links none
	// after it (the learner's own run or timeline answers it).
	Answer string
}

var (
	questionRE = regexp.MustCompile(`<a id="(q-[a-z0-9-]+)"></a>`)
	commentRE  = regexp.MustCompile(`<!--.*?-->`)
)

// Questions reads the questions of a chapter's text; chapter is its path
// relative to the workbook root (its answers are in <chapter>-answers.md).
func Questions(chapter, text string) []Question {
	answersFile := filepath.Base(strings.TrimSuffix(chapter, ".md") + "-answers.md")
	linkRE := regexp.MustCompile(`\]\(` + regexp.QuoteMeta(answersFile) + `#([a-z0-9-]+)\)`)
	lines := strings.Split(text, "\n")
	var out []Question
	for i := 0; i < len(lines); i++ {
		m := questionRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		q := Question{ID: m[1]}
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
		// Its answer is the first link into the answers file before the
		// next heading.
		for k := j; k < len(lines) && !strings.HasPrefix(lines[k], "#"); k++ {
			if l := linkRE.FindStringSubmatch(lines[k]); l != nil {
				q.Answer = filepath.ToSlash(filepath.Join(filepath.Dir(chapter), answersFile)) + "#" + l[1]
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
