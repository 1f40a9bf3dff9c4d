package skeleton

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/tools/go/ast/astutil"
)

// dropUnusedImports removes from stubbed, a Go file of the skeleton, the
// imports that only the solution's code (the same file before stubbing)
// used, and formats it. It reads the code alone: no go command runs, so
// make diff and make skeleton read no network and no module cache for it
// (goimports, which did this, runs `go list -m` to learn package names).
// An import's identifier is its name, else the one its path suggests; an
// unnamed import whose suggested name the solution never uses (its package
// is named otherwise) is kept: the skeleton's build would show it unused.
func dropUnusedImports(name string, solution, stubbed []byte) ([]byte, error) {
	fset := token.NewFileSet()
	sol, err := parser.ParseFile(fset, name, solution, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f, err := parser.ParseFile(fset, name, stubbed, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("%s: the stubbed code: %w", name, err)
	}
	inSolution, inSkeleton := qualifiers(sol), qualifiers(f)
	for _, spec := range append([]*ast.ImportSpec(nil), f.Imports...) {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: import %s: %w", name, spec.Path.Value, err)
		}
		id, named := assumedName(p), spec.Name != nil
		if named {
			id = spec.Name.Name
		}
		switch {
		case id == "_" || id == ".":
		case !named && !inSolution[id]:
		case !inSkeleton[id]:
			if named {
				astutil.DeleteNamedImport(fset, f, id, p)
			} else {
				astutil.DeleteImport(fset, f, p)
			}
		}
	}
	var out bytes.Buffer
	if err := format.Node(&out, fset, f); err != nil {
		return nil, fmt.Errorf("%s: formatting the stubbed code: %w", name, err)
	}
	return format.Source(out.Bytes())
}

// qualifiers are the identifiers f uses to qualify a name (the x of x.Y).
func qualifiers(f *ast.File) map[string]bool {
	out := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				out[x.Name] = true
			}
		}
		return true
	})
	return out
}

// assumedName is the package name an import path suggests: its last element
// that is not a major version (…/v2), without a "go-" prefix, up to the first
// character that cannot be in an identifier (gopkg.in/yaml.v3: yaml). It is
// goimports' rule.
func assumedName(importPath string) string {
	base := path.Base(importPath)
	if v, ok := strings.CutPrefix(base, "v"); ok {
		if _, err := strconv.Atoi(v); err == nil && path.Dir(importPath) != "." {
			base = path.Base(path.Dir(importPath))
		}
	}
	base = strings.TrimPrefix(base, "go-")
	if i := strings.IndexFunc(base, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}); i >= 0 {
		base = base[:i]
	}
	return base
}
