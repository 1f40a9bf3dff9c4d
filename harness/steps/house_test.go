package steps

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// listedPackage is what `go list -json` says of a package that the house
// test reads.
type listedPackage struct {
	ImportPath, Dir                    string
	GoFiles                            []string
	Imports, TestImports, XTestImports []string
}

// TestTheHouseKeepsEachStepInItsOwnPackage draws the house from the
// imports (go list ./harness/...): a step's knowledge lives in
// harness/steps/<step> (and below it), reached by everything else through
// its descriptor, which package steps lists. So no other package, tests
// included, imports a step's package, and no other package's code names a
// step's primary kind in a string literal: the harness says the kind as
// the descriptor gives it (step.Step.Primary).
func TestTheHouseKeepsEachStepInItsOwnPackage(t *testing.T) {
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join(root, "harness")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -json ./... in harness: %v\n%s", err, stderr.String())
	}
	var pkgs []listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	const registry = "github.com/10xdev/gw10/harness/steps"
	for _, st := range All() {
		own := registry + "/" + st.Name
		mine := func(path string) bool { return path == own || strings.HasPrefix(path, own+"/") }
		kind := strings.ToLower(st.Primary.Kind())
		for _, p := range pkgs {
			if mine(p.ImportPath) {
				continue
			}
			for _, imp := range append(append(append([]string(nil), p.Imports...), p.TestImports...), p.XTestImports...) {
				if mine(imp) && p.ImportPath != registry {
					t.Errorf("%s imports %s: reach step %s through its descriptor (steps.Find, steps.All)", p.ImportPath, imp, st.Name)
				}
			}
			for _, f := range p.GoFiles {
				for _, lit := range stringLiterals(t, filepath.Join(p.Dir, f)) {
					if strings.Contains(strings.ToLower(lit.value), kind) {
						t.Errorf("%s: %s names step %s's kind %s: take it from the descriptor (step.Step.Primary)", lit.pos, lit.quoted, st.Name, st.Primary.Kind())
					}
				}
			}
		}
	}
}

type literal struct {
	pos           token.Position
	quoted, value string
}

// stringLiterals are a Go file's string literals, its imports' paths left out.
func stringLiterals(t *testing.T, path string) []literal {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	imports := map[*ast.BasicLit]bool{}
	for _, imp := range f.Imports {
		imports[imp.Path] = true
	}
	var out []literal
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && !imports[lit] {
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				v = lit.Value
			}
			out = append(out, literal{pos: fset.Position(lit.Pos()), quoted: lit.Value, value: v})
		}
		return true
	})
	return out
}
