package step01

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// designWords are the solution's design, in the words a learner would look
// up: which API wakes a route when its Service changes (Watches, a map
// function, a field index; not Owns), how a deletion made while the
// controller is stopped is found (a start-up sweep, or a finalizer), how a
// pass writes status once and only when it changed, and what a pass
// returns. The chapter asks the learner to find these; a failure that
// names them gives the answer away. They may appear only where a learner
// asks to be taught: a check's LongHint (make hint ID=<check>) and a
// contract clause's Rule (make hint ID=<clause>, docs/contract.md).
var designWords = []string{
	"owns(", "owns()", "watches(", "watches +", "watches ...", "map function", "mapfunc", "enqueuerequests",
	"indexfield", "field index", "index on spec", "sweep", "generationchangedpredicate", "predicate",
	"setstatuscondition", "equality.semantic", "semantic.deepequal",
	"a finalizer", "your finalizer", "no finalizer", "with a finalizer", "the finalizer",
	"ctrl.result", "return the error", "return the push's error",
	"write the status once", "set every condition first",
}

// taughtFields hold texts a learner asks for: a check's design advice
// (make hint MORE=2), a clause's rule, and a chapter question's ID and where
// its evidence is (make hint ID=q-…: the chapter already asks it, design
// words and all). A check's Direction (MORE=1) is not among them: it says
// where to look, and is held to the same words as a failure.
var taughtFields = map[string]bool{"LongHint": true, "Rule": true, "Question": true, "Where": true}

// TestLearnerTextsObserveAndDoNotTeach reads every string the checks, the
// step's descriptor and the terminal report can print for a learner (the
// string literals of their Go sources: cause lines, failure messages,
// one-line hints, blockers, titles) and fails on any that names the design:
// a failure says what was observed and which clause it broke; the design
// lives behind make hint.
func TestLearnerTextsObserveAndDoNotTeach(t *testing.T) {
	var files []string
	for _, dir := range []string{".", filepath.Join("..", "..", "checks"), filepath.Join("..", "..", "report")} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
			}
		}
	}
	if len(files) < 10 {
		t.Fatalf("found only %d source files to read: %v", len(files), files)
	}
	fset := token.NewFileSet()
	strs := 0
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && taughtFields[k.Name] {
					return false
				}
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(n.Value)
				if err != nil {
					t.Fatalf("%s: %v", fset.Position(n.Pos()), err)
				}
				strs++
				lower := strings.ToLower(s)
				for _, w := range designWords {
					if strings.Contains(lower, w) {
						t.Errorf("%s: a text a learner reads names the design (%q); say what was observed and the clause it broke, "+
							"and leave the design to make hint (LongHint):\n    %s", fset.Position(n.Pos()), w, s)
					}
				}
			}
			return true
		})
	}
	if strs < 200 {
		t.Fatalf("read only %d string literals: the scan is not reading the checks", strs)
	}
}
