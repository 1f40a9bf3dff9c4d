package steps

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/region"
	"github.com/10xdev/gw10/harness/step"
)

// checkRefRE finds the checks a TODO names: "(check: a)" or "(checks: a, b,
// c)", possibly across the TODO's lines, or after a contract reference in
// the same parentheses: "(contract: Q-FANOUT; checks: a, b)".
var checkRefRE = regexp.MustCompile(`(?:\(|; )checks?: ([a-z0-9, \-]+)\)`)

// Lint checks that a step's exercise is consistent, in the spirit of
// `rustlings dev check`, both ways: the descriptor is complete, its
// chapter's parts exist, every check has an anchor in its ChecksFile and
// is named by a //gw10:todo (a check no
// TODO leads to is one the learner meets blind), every check a TODO names
// exists, every region is well formed (region.Parse, the one parser of
// the markers: none nested, none unclosed) and region IDs are unique. It
// returns what is wrong, one line each.
func Lint(root string, st step.Step) []string {
	var problems []string
	if err := st.Validate(); err != nil {
		problems = append(problems, err.Error())
	}
	for _, part := range st.ChapterParts() {
		if _, err := os.Stat(filepath.Join(root, part)); err != nil {
			problems = append(problems, fmt.Sprintf("step %s: a part of its chapter: %v", st.Name, err))
		}
	}
	checksDoc, err := os.ReadFile(filepath.Join(root, st.ChecksFile()))
	for _, c := range st.Checks {
		if err == nil && !strings.Contains(string(checksDoc), `id="check-`+c.ID+`"`) {
			problems = append(problems, fmt.Sprintf("%s has no anchor id=\"check-%s\" for check %s", st.ChecksFile(), c.ID, c.ID))
		}
	}
	regions := map[string]string{}
	named := map[string]bool{}
	err = filepath.WalkDir(filepath.Join(root, st.SolutionDir), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		problems = append(problems, lintFile(path, filepath.ToSlash(rel), st.Checks, regions, named)...)
		return nil
	})
	if err != nil {
		problems = append(problems, fmt.Sprintf("step %s: reading its solution: %v", st.Name, err))
	}
	for _, c := range st.Checks {
		if !named[c.ID] {
			problems = append(problems, fmt.Sprintf("step %s: no //gw10:todo of %s names check %s (\"(check: %s)\")", st.Name, st.SolutionDir, c.ID, c.ID))
		}
	}
	return problems
}

// lintFile checks the regions of one solution file and the checks its
// TODOs name, which it adds to named.
func lintFile(path, rel string, all []checks.Check, regions map[string]string, named map[string]bool) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	found, err := region.Parse(rel, string(data))
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, r := range found {
		where := fmt.Sprintf("%s:%d", rel, r.Begin)
		if r.ID == "" {
			problems = append(problems, where+": a region without an ID")
		} else if first, dup := regions[r.ID]; dup {
			problems = append(problems, fmt.Sprintf("%s: region ID %q is used twice (first at %s)", where, r.ID, first))
		} else {
			regions[r.ID] = where
		}
	}
	var todo strings.Builder
	todoLine := 0
	flush := func() {
		for _, m := range checkRefRE.FindAllStringSubmatch(todo.String(), -1) {
			for _, id := range strings.Split(m[1], ",") {
				if id = strings.TrimSpace(id); id == "" {
					continue
				}
				named[id] = true
				if _, ok := checks.Find(all, id); !ok {
					problems = append(problems, fmt.Sprintf("%s:%d: the TODO names check %q, which does not exist (checks: %s)",
						rel, todoLine, id, checks.IDs(all)))
				}
			}
		}
		todo.Reset()
	}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "//gw10:todo") {
			if todo.Len() == 0 {
				todoLine = n + 1
			}
			todo.WriteString(strings.TrimPrefix(line, "//gw10:todo") + " ")
			continue
		}
		flush()
	}
	flush()
	return problems
}
