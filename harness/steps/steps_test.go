package steps

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/checks"
)

var root, _ = filepath.Abs(filepath.Join("..", ".."))

func TestEveryStepIsConsistent(t *testing.T) {
	for _, st := range All() {
		t.Run(st.Name, func(t *testing.T) {
			for _, p := range Lint(root, st) {
				t.Error(p)
			}
		})
	}
}

// TestLintFindsATodoNamingAnUnknownCheck: the consistency check is not a
// check that cannot fail.
func TestLintFindsATodoNamingAnUnknownCheck(t *testing.T) {
	st := Default()
	tmp := t.TempDir()
	src := filepath.Join(root, st.SolutionDir)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tmp, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range st.ChapterParts() {
		text, err := os.ReadFile(filepath.Join(root, part))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tmp, part)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, part), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if p := Lint(tmp, st); len(p) > 0 {
		t.Fatalf("the copy is not clean before the edit: %v", p)
	}
	bad := filepath.Join(tmp, st.SolutionDir, "internal", "controller", "bad.go")
	body := "package controller\n\n//gw10:begin bogus\n//gw10:todo Do something (checks: self-heal, no-such-check).\n//gw10:end\n"
	if err := os.WriteFile(bad, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	problems := strings.Join(Lint(tmp, st), "\n")
	if !strings.Contains(problems, `names check "no-such-check"`) || strings.Contains(problems, `"self-heal"`) {
		t.Fatalf("want exactly the unknown check reported, got:\n%s", problems)
	}
	if err := os.WriteFile(bad, []byte(strings.Replace(body, "bogus", "watch", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if problems := strings.Join(Lint(tmp, st), "\n"); !strings.Contains(problems, `region ID "watch" is used twice`) {
		t.Fatalf("a duplicate region ID is not reported:\n%s", problems)
	}
	// The markers are read by the skeleton's one parser: a region inside
	// another, or one never closed, is refused.
	for name, text := range map[string]string{
		"nested":   "package controller\n\n//gw10:begin outer\n//gw10:begin inner\n//gw10:end\n//gw10:end\n",
		"unclosed": "package controller\n\n//gw10:begin open\n",
	} {
		if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		problems := strings.Join(Lint(tmp, st), "\n")
		if !strings.Contains(problems, "bad.go:") || !strings.Contains(problems, "region") {
			t.Errorf("a %s region is not reported:\n%s", name, problems)
		}
	}
	// Reverse: a check no TODO names is reported.
	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	other := st
	other.Checks = append(slices.Clone(st.Checks), checks.Check{ID: "unnamed-check", Title: "t", SeedRef: "s", Hint: "h", Direction: "d", LongHint: "l",
		Run: func(context.Context, *checks.T) {}})
	if problems := strings.Join(Lint(tmp, other), "\n"); !strings.Contains(problems, "names check unnamed-check") {
		t.Errorf("a check no TODO names is not reported:\n%s", problems)
	}
	// A chapter part the descriptor names and the workbook lacks is reported.
	if st.Further != "" {
		if err := os.Remove(filepath.Join(tmp, st.Further)); err != nil {
			t.Fatal(err)
		}
		if problems := strings.Join(Lint(tmp, st), "\n"); !strings.Contains(problems, "a part of its chapter") {
			t.Errorf("a missing part of the chapter is not reported:\n%s", problems)
		}
	}
}

// TestNoStepNameOutsideItsDescriptor: the harness knows each step only
// through its descriptor. A string literal naming a step anywhere else in
// the harness's Go code (tests included; imports, docs and testdata aside)
// is a hard-coded step.
func TestNoStepNameOutsideItsDescriptor(t *testing.T) {
	harness := filepath.Join(root, "harness")
	for _, st := range All() {
		own := filepath.Join(harness, "steps", st.Name)
		err := filepath.WalkDir(harness, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (path == own || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			imports := map[*ast.BasicLit]bool{}
			for _, imp := range f.Imports {
				imports[imp.Path] = true
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if ok && lit.Kind == token.STRING && !imports[lit] && strings.Contains(lit.Value, st.Name) {
					t.Errorf("%s: %s names step %s: use its descriptor (package steps)", fset.Position(lit.Pos()), lit.Value, st.Name)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
