package grade

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTheThreatModelNamesTestsThatExist: every row of docs/instructors.md's
// threat model names what proves it, every test function and hostile
// submission it names exists (a renamed or deleted test cannot leave the
// table claiming a proof that is gone), and every hostile submission has a
// row.
func TestTheThreatModelNamesTestsThatExist(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "instructors.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "### The threat model")
	if start < 0 {
		t.Fatal(`docs/instructors.md has no "### The threat model" section`)
	}
	section := text[start:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}

	funcs := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err = filepath.WalkDir(filepath.Join(root, "harness"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			funcs[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	testName := regexp.MustCompile("`(Test\\w+)`")
	attackFile := regexp.MustCompile("`([\\w.-]+\\.txtar)`")
	rows := 0
	lines := strings.Split(section, "\n")
	for i, line := range lines {
		header := i+1 < len(lines) && strings.HasPrefix(lines[i+1], "|---")
		if !strings.HasPrefix(line, "| ") || header {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		proof := cells[len(cells)-1]
		rows++
		tests := testName.FindAllStringSubmatch(proof, -1)
		attacks := attackFile.FindAllStringSubmatch(proof, -1)
		if len(tests)+len(attacks) == 0 {
			t.Errorf("a threat with no proof named: %s", line)
		}
		for _, m := range tests {
			if !funcs[m[1]] {
				t.Errorf("the threat model names %s, which no _test.go under harness/ declares", m[1])
			}
		}
		for _, m := range attacks {
			if _, err := os.Stat(filepath.Join(root, "harness", "testdata", "hostile", m[1])); err != nil {
				t.Errorf("the threat model names %s, which is not in harness/testdata/hostile: %v", m[1], err)
			}
		}
		if len(attacks) > 0 && !funcs["TestHostileSubmissions"] {
			t.Errorf("%s names hostile submissions, but TestHostileSubmissions, which grades them, is gone", line)
		}
	}
	// And every attack of the suite has its row.
	suite, err := filepath.Glob(filepath.Join(root, "harness", "testdata", "hostile", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range suite {
		if !strings.Contains(section, "`"+filepath.Base(p)+"`") {
			t.Errorf("the hostile submission %s is in no row of the threat model", filepath.Base(p))
		}
	}
	if rows < 10 {
		t.Errorf("the threat model has %d rows; the attacks of issues 18 and 24 alone are more", rows)
	}
}
