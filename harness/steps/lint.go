package steps

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/step"
)

// checkRefRE finds the checks a TODO names: "(check: a)" or "(checks: a, b,
// c)", possibly across the TODO's lines.
var checkRefRE = regexp.MustCompile(`\(checks?: ([a-z0-9, \-]+)\)`)

// Lint checks that a step's exercise is consistent, in the spirit of
// `rustlings dev check`: the descriptor is complete, every check has an
// anchor in the chapter, every check a //gw10:todo names exists, and region
// IDs are unique. It returns what is wrong, one line each.
func Lint(root string, st step.Step) []string {
	var problems []string
	if err := st.Validate(); err != nil {
		problems = append(problems, err.Error())
	}
	chapter, err := os.ReadFile(filepath.Join(root, st.Chapter))
	if err != nil {
		problems = append(problems, fmt.Sprintf("step %s: reading its chapter: %v", st.Name, err))
	}
	for _, c := range st.Checks {
		if chapter != nil && !strings.Contains(string(chapter), `id="check-`+c.ID+`"`) {
			problems = append(problems, fmt.Sprintf("%s has no anchor id=\"check-%s\" for check %s", st.Chapter, c.ID, c.ID))
		}
	}
	regions := map[string]string{}
	err = filepath.WalkDir(filepath.Join(root, st.SolutionDir), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		problems = append(problems, lintFile(path, rel, st.Checks, regions)...)
		return nil
	})
	if err != nil {
		problems = append(problems, fmt.Sprintf("step %s: reading its solution: %v", st.Name, err))
	}
	return problems
}

// lintFile checks the regions of one solution file.
func lintFile(path, rel string, all []checks.Check, regions map[string]string) []string {
	f, err := os.Open(path)
	if err != nil {
		return []string{err.Error()}
	}
	defer f.Close()
	var problems []string
	var todo strings.Builder
	todoLine := 0
	flush := func() {
		for _, m := range checkRefRE.FindAllStringSubmatch(todo.String(), -1) {
			for _, id := range strings.Split(m[1], ",") {
				if id = strings.TrimSpace(id); id == "" {
					continue
				}
				if _, ok := checks.Find(all, id); !ok {
					problems = append(problems, fmt.Sprintf("%s:%d: the TODO names check %q, which does not exist (checks: %s)",
						rel, todoLine, id, checks.IDs(all)))
				}
			}
		}
		todo.Reset()
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "//gw10:todo"):
			if todo.Len() == 0 {
				todoLine = n
			}
			todo.WriteString(strings.TrimPrefix(line, "//gw10:todo") + " ")
			continue
		case strings.HasPrefix(line, "//gw10:begin"):
			id := strings.TrimSpace(strings.TrimPrefix(line, "//gw10:begin"))
			where := fmt.Sprintf("%s:%d", rel, n)
			if id == "" {
				problems = append(problems, where+": a region without an ID")
			} else if first, dup := regions[id]; dup {
				problems = append(problems, fmt.Sprintf("%s: region ID %q is used twice (first at %s)", where, id, first))
			} else {
				regions[id] = where
			}
		}
		flush()
	}
	flush()
	return problems
}
