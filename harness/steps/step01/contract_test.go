package step01

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// contractDoc is docs/contract.md, seen from this package.
var contractDoc = filepath.Join("..", "..", "..", "docs", "contract.md")

// designsDoc is the answers page that names the designs that must pass.
var designsDoc = filepath.Join("..", "..", "..", "docs", "step01-answers", "designs-and-defects.md")

var backticked = regexp.MustCompile("`([^`]+)`")

// section returns the text of docs/contract.md between the heading that
// starts with title and the next heading of any level.
func section(t *testing.T, doc, title string) string {
	t.Helper()
	i := strings.Index(doc, "\n#")
	for i >= 0 {
		line := doc[i+1:]
		if nl := strings.IndexByte(line, '\n'); nl >= 0 {
			line = line[:nl]
		}
		if strings.HasPrefix(strings.TrimLeft(line, "# "), title) {
			rest := doc[i+1+len(line):]
			if j := strings.Index(rest, "\n#"); j >= 0 {
				rest = rest[:j]
			}
			return rest
		}
		next := strings.Index(doc[i+1:], "\n#")
		if next < 0 {
			break
		}
		i += 1 + next
	}
	t.Fatalf("docs/contract.md has no section %q", title)
	return ""
}

// firstCells returns the backticked word of each table row's first cell.
func firstCells(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if m := backticked.FindStringSubmatch(cells[1]); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// TestTheContractPageMatchesTheCode keeps docs/contract.md, contract.go and
// the checks' Clauses in step: the same clause IDs, the same check → clause
// table, and the "not yet proved" list exactly the clauses no check names.
func TestTheContractPageMatchesTheCode(t *testing.T) {
	data, err := os.ReadFile(contractDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	var inDoc []string
	for _, title := range []string{"Situations", "Status", "Any sequence", "The API"} {
		inDoc = append(inDoc, firstCells(section(t, doc, title))...)
	}
	var inCode []string
	for _, c := range Contract() {
		inCode = append(inCode, c.ID)
	}
	sort.Strings(inDoc)
	sort.Strings(inCode)
	if strings.Join(inDoc, " ") != strings.Join(inCode, " ") {
		t.Errorf("docs/contract.md's clauses %v are not contract.go's %v", inDoc, inCode)
	}

	proved := map[string]bool{}
	table := map[string]string{}
	for _, line := range strings.Split(section(t, doc, "Which check proves which clause"), "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		var ids []string
		for _, m := range backticked.FindAllStringSubmatch(cells[2], -1) {
			ids = append(ids, m[1])
		}
		table[strings.Trim(strings.TrimSpace(cells[1]), "`")] = strings.Join(ids, " ")
	}
	for _, c := range Step().Checks {
		if len(c.Clauses) == 0 {
			t.Errorf("check %s names no clause of the contract", c.ID)
		}
		for _, id := range c.Clauses {
			proved[id] = true
		}
		if got, want := table[c.ID], strings.Join(c.Clauses, " "); got != want {
			t.Errorf("docs/contract.md says %s proves %q; the check says %q", c.ID, got, want)
		}
		delete(table, c.ID)
	}
	for id := range table {
		t.Errorf("docs/contract.md names check %s, which step 01 does not have", id)
	}

	var unproved []string
	for _, line := range strings.Split(section(t, doc, "Not yet proved"), "\n") {
		if m := backticked.FindStringSubmatch(line); strings.HasPrefix(line, "- `") && m != nil {
			unproved = append(unproved, m[1])
		}
	}
	var want []string
	for _, c := range Contract() {
		if !proved[c.ID] {
			want = append(want, c.ID)
		}
	}
	if strings.Join(unproved, " ") != strings.Join(want, " ") {
		t.Errorf("docs/contract.md lists %v as not yet proved; the checks leave %v unproved", unproved, want)
	}
}

// TestTheContractPageListsEveryVariant: the designs that must pass, on the
// answers page the contract links, are the variants make test runs.
func TestTheContractPageListsEveryVariant(t *testing.T) {
	data, err := os.ReadFile(designsDoc)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(section(t, string(data), "Designs that must pass"), "\n") {
		if m := backticked.FindStringSubmatch(line); strings.HasPrefix(line, "- `") && m != nil {
			listed = append(listed, m[1])
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "step01", "variants", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, f := range files {
		have = append(have, strings.TrimSuffix(filepath.Base(f), ".txtar"))
	}
	sort.Strings(listed)
	if strings.Join(listed, " ") != strings.Join(have, " ") {
		t.Errorf("%s lists the designs %v; the variants are %v", designsDoc, listed, have)
	}
}

// TestNothingPointsOutsideTheRepository: the workbook is complete on its
// own; no doc or code names the course's files it does not contain.
func TestNothingPointsOutsideTheRepository(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	outside := regexp.MustCompile(`steering repo|shared/seeds|shared/design|design\.md|\.\./shared/`)
	var bad []string
	for _, dir := range []string{"docs", "harness", "solutions", "step01", "scripts", ".github"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" && strings.Contains(path, "gotool") {
					return filepath.SkipDir
				}
				return nil
			}
			switch filepath.Ext(path) {
			case ".go", ".md", ".yml", ".yaml", ".sh", ".txtar", ".txt":
			default:
				return nil
			}
			if filepath.Base(path) == "contract_test.go" {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if loc := outside.FindIndex(data); loc != nil {
				bad = append(bad, path+": "+string(data[loc[0]:loc[1]]))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"README.md", "Makefile"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if loc := outside.FindIndex(data); loc != nil {
			bad = append(bad, f+": "+string(data[loc[0]:loc[1]]))
		}
	}
	for _, b := range bad {
		t.Errorf("points outside the repository: %s", b)
	}
}

// TestTheContractPageListsEveryInvariant keeps the table of "Checked at
// every event" the step's invariants.
func TestTheContractPageListsEveryInvariant(t *testing.T) {
	data, err := os.ReadFile(contractDoc)
	if err != nil {
		t.Fatal(err)
	}
	inDoc := firstCells(section(t, string(data), "Checked at every event"))
	var inCode []string
	for _, inv := range invariants() {
		inCode = append(inCode, inv.Clause)
	}
	if strings.Join(inDoc, " ") != strings.Join(inCode, " ") {
		t.Errorf("docs/contract.md's \"Checked at every event\" lists %v; the step's invariants are %v", inDoc, inCode)
	}
}

// TestTheContractPageSaysEveryClauseInShort: docs/contract.md's "In short"
// table is each clause's Plain, in contract.go's order, and every clause has one.
func TestTheContractPageSaysEveryClauseInShort(t *testing.T) {
	data, err := os.ReadFile(contractDoc)
	if err != nil {
		t.Fatal(err)
	}
	short := section(t, string(data), "In short")
	var want []string
	for _, c := range Contract() {
		if c.Plain == "" {
			t.Errorf("clause %s has no Plain sentence", c.ID)
		}
		want = append(want, fmt.Sprintf("| `%s` | %s |", c.ID, c.Plain))
	}
	var got []string
	for _, l := range strings.Split(short, "\n") {
		if strings.HasPrefix(l, "| `") {
			got = append(got, l)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/contract.md's \"In short\" table is not contract.go's clauses' Plain sentences; want:\n%s", strings.Join(want, "\n"))
	}
}
