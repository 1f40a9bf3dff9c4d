// Package mutate generates mutants of a step's reference solution: small
// syntactic changes (a statement deleted, a condition negated, a condition
// status flipped, an error dropped) made only inside the exercise regions,
// the code a learner writes. Each is a plausible learner's mistake nobody
// wrote a check for; running the checks on every one measures how much of
// the contract the checks actually hold (the mutation score). The visible
// mutants (harness/testdata/<step>/mutants) are curated and each must fail a
// named check with a named cause; these are generated and only counted.
package mutate

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/10xdev/gw10/harness/region"
)

// Mutant is one generated mutant: a file of the module replaced.
type Mutant struct {
	// ID names it in a run's output: file:line:operator[#n].
	ID string
	// Key names it across edits of the file that move its line:
	// file:function:operator[#n], n counting that operator's sites in
	// the function (the list of equivalent mutants uses it).
	Key  string
	File string // slash-separated, relative to the module
	Line int
	Op   string
	// What says what changed, in the words of a review comment.
	What string
	Src  []byte // the mutated file, gofmt'ed
}

// The operators.
const (
	OpDeleteCall   = "delete-call"         // a call statement left out
	OpNegateIf     = "negate-if"           // if c → if !(c)
	OpDropElse     = "drop-else"           // an else branch left out
	OpFlipStatus   = "flip-status"         // metav1.ConditionTrue ↔ ConditionFalse
	OpDropError    = "drop-error"          // return …, err → return …, nil
	OpDeleteReturn = "delete-early-return" // an if's early return left out (falls through)
)

// Generate makes every mutant of the Go files (tests excluded) of the
// module at dir, in region order.
func Generate(dir string) ([]Mutant, error) {
	var out []Mutant
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		ms, err := fileMutants(filepath.ToSlash(rel), src)
		if err != nil {
			return err
		}
		out = append(out, ms...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("generating mutants of %s: %w", dir, err)
	}
	return out, nil
}

// site is one place an operator applies: found on one parse of the file,
// applied to a fresh parse (each mutant changes one thing).
type site struct {
	op, what string
	line     int
	fn       string                // the enclosing function
	apply    func(n ast.Node) bool // called on the node at the same index of a fresh walk
	index    int
}

func fileMutants(rel string, src []byte) ([]Mutant, error) {
	regions, err := region.Parse(rel, string(src))
	if err != nil || len(regions) == 0 {
		return nil, err
	}
	inRegion := func(line int) bool {
		return slices.ContainsFunc(regions, func(r region.Region) bool { return line > r.Begin && line < r.End })
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	var sites []site
	idx := 0
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			return true
		}
		idx++
		line := fset.Position(n.Pos()).Line
		if !inRegion(line) {
			return true
		}
		for _, s := range sitesAt(n, fset) {
			s.index, s.line, s.fn = idx, line, enclosing(f, n.Pos())
			sites = append(sites, s)
		}
		return true
	})
	var out []Mutant
	seen := map[string]int{}
	for _, s := range sites {
		fset := token.NewFileSet()
		g, err := parser.ParseFile(fset, rel, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		i, applied := 0, false
		ast.Inspect(g, func(n ast.Node) bool {
			if n == nil || applied {
				return !applied
			}
			i++
			if i == s.index {
				applied = s.apply(n)
			}
			return true
		})
		if !applied {
			continue
		}
		var buf bytes.Buffer
		if err := format.Node(&buf, fset, g); err != nil {
			continue // not printable: not a mutant
		}
		if bytes.Equal(buf.Bytes(), src) {
			continue
		}
		id := fmt.Sprintf("%s:%d:%s", rel, s.line, s.op)
		if seen[id]++; seen[id] > 1 {
			id += fmt.Sprintf("#%d", seen[id])
		}
		key := fmt.Sprintf("%s:%s:%s", rel, s.fn, s.op)
		if seen[key]++; seen[key] > 1 {
			key += fmt.Sprintf("#%d", seen[key])
		}
		out = append(out, Mutant{ID: id, Key: key, File: rel, Line: s.line, Op: s.op, What: s.what, Src: buf.Bytes()})
	}
	return out, nil
}

// enclosing names the top-level function (or method) around pos; "-"
// outside any.
func enclosing(f *ast.File, pos token.Pos) string {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Pos() <= pos && pos < fd.End() {
			return fd.Name.Name
		}
	}
	return "-"
}

// sitesAt are the operators that apply to n. Each apply re-checks the node's
// shape on the fresh parse.
func sitesAt(n ast.Node, fset *token.FileSet) []site {
	src := func(e ast.Node) string {
		var b bytes.Buffer
		_ = format.Node(&b, fset, e)
		s := strings.Join(strings.Fields(b.String()), " ")
		if len(s) > 60 {
			s = s[:57] + "..."
		}
		return s
	}
	var out []site
	switch n := n.(type) {
	case *ast.BlockStmt:
		for k, st := range n.List {
			if es, ok := st.(*ast.ExprStmt); ok {
				if c, ok := es.X.(*ast.CallExpr); ok && !isLog(c) {
					out = append(out, site{op: OpDeleteCall, what: "left out the call " + src(es.X), apply: func(m ast.Node) bool {
						b, ok := m.(*ast.BlockStmt)
						if !ok || k >= len(b.List) {
							return false
						}
						b.List = slices.Delete(b.List, k, k+1)
						return true
					}})
				}
			}
		}
	case *ast.IfStmt:
		out = append(out, site{op: OpNegateIf, what: "negated the condition " + src(n.Cond), apply: func(m ast.Node) bool {
			s, ok := m.(*ast.IfStmt)
			if !ok {
				return false
			}
			s.Cond = &ast.UnaryExpr{Op: token.NOT, X: &ast.ParenExpr{X: s.Cond}}
			return true
		}})
		if n.Else != nil {
			out = append(out, site{op: OpDropElse, what: "left out the else of if " + src(n.Cond), apply: func(m ast.Node) bool {
				s, ok := m.(*ast.IfStmt)
				if !ok || s.Else == nil {
					return false
				}
				s.Else = nil
				return true
			}})
		}
		if len(n.Body.List) > 0 {
			if _, ok := n.Body.List[len(n.Body.List)-1].(*ast.ReturnStmt); ok {
				out = append(out, site{op: OpDeleteReturn, what: "fell through the early return of if " + src(n.Cond), apply: func(m ast.Node) bool {
					s, ok := m.(*ast.IfStmt)
					if !ok || len(s.Body.List) == 0 {
						return false
					}
					s.Body.List = s.Body.List[:len(s.Body.List)-1]
					return true
				}})
			}
		}
	case *ast.SelectorExpr:
		if x, ok := n.X.(*ast.Ident); ok && (n.Sel.Name == "ConditionTrue" || n.Sel.Name == "ConditionFalse") {
			to := map[string]string{"ConditionTrue": "ConditionFalse", "ConditionFalse": "ConditionTrue"}[n.Sel.Name]
			out = append(out, site{op: OpFlipStatus, what: fmt.Sprintf("%s.%s became %s", x.Name, n.Sel.Name, to), apply: func(m ast.Node) bool {
				s, ok := m.(*ast.SelectorExpr)
				if !ok || s.Sel.Name != n.Sel.Name {
					return false
				}
				s.Sel = ast.NewIdent(to)
				return true
			}})
		}
	case *ast.ReturnStmt:
		if k := len(n.Results) - 1; k >= 0 {
			if _, isNil := n.Results[k].(*ast.Ident); !isNil && isErrorish(n.Results[k]) {
				out = append(out, site{op: OpDropError, what: "returned nil in place of " + src(n.Results[k]), apply: func(m ast.Node) bool {
					r, ok := m.(*ast.ReturnStmt)
					if !ok || len(r.Results) <= k {
						return false
					}
					r.Results[k] = ast.NewIdent("nil")
					return true
				}})
			}
		}
	}
	return out
}

// isLog: a call of a logger's Info or Error (leaving one out changes what is
// logged, which no clause of the contract is about).
func isLog(c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	return ok && (sel.Sel.Name == "Info" || sel.Sel.Name == "Error")
}

// isErrorish: an error built or wrapped in place (fmt.Errorf, errors.Join,
// errors.New), the usual last result of a failing return.
func isErrorish(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "fmt" && sel.Sel.Name == "Errorf" || pkg.Name == "errors" && (sel.Sel.Name == "Join" || sel.Sel.Name == "New"))
}

// Select picks the mutants with these IDs, in the order asked; an ID no
// mutant has is an error (a line moved: --list shows the IDs).
func Select(ms []Mutant, ids []string) ([]Mutant, error) {
	var out []Mutant
	for _, id := range ids {
		id = strings.TrimSpace(id)
		i := slices.IndexFunc(ms, func(m Mutant) bool { return m.ID == id || m.Key == id })
		if i < 0 {
			return nil, fmt.Errorf("no generated mutant is %q (gw10 mutants --list shows them)", id)
		}
		out = append(out, ms[i])
	}
	return out, nil
}

// Counted are the mutants not listed as equivalent: those a score counts.
func Counted(ms []Mutant, equivalent map[string]string) []Mutant {
	return slices.DeleteFunc(slices.Clone(ms), func(m Mutant) bool { return equivalent[m.Key] != "" })
}

// Sample picks n mutants with a seeded shuffle: the same seed, the same
// sample (a grade's and make test's sample are reproducible).
func Sample(ms []Mutant, n int, seed uint64) []Mutant {
	if n <= 0 || n >= len(ms) {
		return ms
	}
	out := slices.Clone(ms)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out[:n]
}
