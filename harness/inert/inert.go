// Package inert makes a step module's packages safe to link into a grader's
// probe (harness/runner's probes): linked as they are, they would run the
// learner's code before the grader's test starts, in their init functions
// and their package-level var initializers, and that code could print a
// verdict, exit, or make the requests the verdict is read from. The probe
// links copies instead (go test -overlay): every `func init()` renamed
// `func _()`, which nothing calls (the file's lines stay where they were),
// and every package-level var initializer that could run module code
// refused, naming its file and line. The runner's probe build is its only
// caller.
//
// An initializer may use literals, constants, composite literals, the
// module's own values and types, and call library functions (packages
// outside the module) on values that cannot call back into the module. It
// may not call a function or method of the module, hold a function
// literal, or hand a library call anything of the module's but a constant:
// a library may call a value's methods (fmt calls String) or a function it
// is given.
package inert

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// File is one Go source file of a package the probe links.
type File struct {
	Path string // absolute; what positions name
	Src  []byte
}

// Package is a package of the module: its import path and its files.
type Package struct {
	ImportPath string
	Files      []File
}

// Refusal is a package-level initializer that could run module code.
type Refusal struct {
	Pos  token.Position
	What string // what it does, in a sentence's middle: "calls setup, a function of your module"
}

func (r Refusal) String() string {
	return fmt.Sprintf("%s:%d: a package-level var initializer %s", r.Pos.Filename, r.Pos.Line, r.What)
}

// Rewrite returns, for every file of pkgs (the module's packages a probe
// links; module is the module's path), its source with init functions
// renamed, by path, and the initializers it refuses.
func Rewrite(module string, pkgs []Package) (map[string][]byte, []Refusal, error) {
	fset := token.NewFileSet()
	type parsed struct {
		pkg   *Package
		files []*ast.File
	}
	var all []parsed
	decls := map[string]*declared{} // by import path
	for i := range pkgs {
		p := parsed{pkg: &pkgs[i]}
		d := &declared{funcs: map[string]bool{}, consts: map[string]bool{}, types: map[string]bool{}, vars: map[string]bool{}}
		for _, f := range pkgs[i].Files {
			af, err := parser.ParseFile(fset, f.Path, f.Src, parser.SkipObjectResolution)
			if err != nil {
				return nil, nil, fmt.Errorf("parsing %s: %w", f.Path, err)
			}
			p.files = append(p.files, af)
			d.add(af)
		}
		decls[pkgs[i].ImportPath] = d
		all = append(all, p)
	}
	out := map[string][]byte{}
	var refusals []Refusal
	for _, p := range all {
		for i, af := range p.files {
			f := p.pkg.Files[i]
			c := &checker{fset: fset, module: module, own: decls[p.pkg.ImportPath], decls: decls, imports: importsOf(af)}
			src := bytes.Clone(f.Src)
			for _, d := range af.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil && d.Name.Name == "init" {
						off := fset.Position(d.Name.Pos()).Offset
						copy(src[off:off+len("init")], "_   ") // func _   () { ... }: never called
					}
				case *ast.GenDecl:
					if d.Tok != token.VAR {
						continue
					}
					for _, spec := range d.Specs {
						for _, v := range spec.(*ast.ValueSpec).Values {
							c.expr(v, false)
						}
					}
				}
			}
			refusals = append(refusals, c.refusals...)
			out[f.Path] = src
		}
	}
	return out, refusals, nil
}

// declared are a package's package-level names, by kind.
type declared struct{ funcs, consts, types, vars map[string]bool }

func (d *declared) add(f *ast.File) {
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Recv == nil {
				d.funcs[decl.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					d.types[spec.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						if decl.Tok == token.CONST {
							d.consts[n.Name] = true
						} else {
							d.vars[n.Name] = true
						}
					}
				}
			}
		}
	}
}

// importsOf maps a file's import names to their paths.
func importsOf(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		m[name] = path
	}
	return m
}

// checker reads one file's initializers.
type checker struct {
	fset     *token.FileSet
	module   string
	own      *declared
	decls    map[string]*declared
	imports  map[string]string
	refusals []Refusal
}

func (c *checker) refuse(n ast.Node, format string, args ...any) {
	c.refusals = append(c.refusals, Refusal{Pos: c.fset.Position(n.Pos()), What: fmt.Sprintf(format, args...)})
}

var (
	builtinValues = map[string]bool{"true": true, "false": true, "nil": true, "iota": true}
	builtinTypes  = map[string]bool{"bool": true, "byte": true, "complex64": true, "complex128": true, "error": true,
		"float32": true, "float64": true, "int": true, "int8": true, "int16": true, "int32": true, "int64": true,
		"rune": true, "string": true, "uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
		"uintptr": true, "any": true, "comparable": true}
	// pureBuiltins call no code of anyone's.
	pureBuiltins = map[string]bool{"len": true, "cap": true, "make": true, "new": true, "append": true, "copy": true,
		"min": true, "max": true, "complex": true, "real": true, "imag": true}
)

// inModule says whether an import path is the module's.
func (c *checker) inModule(path string) bool {
	return path == c.module || strings.HasPrefix(path, c.module+"/")
}

// importOf is the import an identifier names, if it names one.
func (c *checker) importOf(e ast.Expr) (path string, ok bool) {
	id, isIdent := e.(*ast.Ident)
	if !isIdent {
		return "", false
	}
	path, ok = c.imports[id.Name]
	return path, ok
}

// rootedInLibrary says whether a selector chain starts at a library
// import (ctrl.Log.WithName): a library's value.
func (c *checker) rootedInLibrary(e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			e = x.X
		case *ast.Ident:
			path, ok := c.imports[x.Name]
			return ok && !c.inModule(path)
		default:
			return false
		}
	}
}

// isType says whether e names a type (a conversion's, a composite
// literal's), and whether that type is the module's.
func (c *checker) isType(e ast.Expr) (isType, module bool) {
	switch x := e.(type) {
	case *ast.Ident:
		if builtinTypes[x.Name] {
			return true, false
		}
		return c.own.types[x.Name], c.own.types[x.Name]
	case *ast.SelectorExpr:
		path, ok := c.importOf(x.X)
		if !ok {
			return false, false
		}
		if !c.inModule(path) {
			return true, false // a library name used as a type (or a function: the caller decides)
		}
		d := c.decls[path]
		return d != nil && d.types[x.Sel.Name], d != nil && d.types[x.Sel.Name]
	case *ast.ParenExpr:
		return c.isType(x.X)
	case *ast.StarExpr:
		return c.isType(x.X)
	case *ast.ArrayType:
		_, m := c.isType(x.Elt)
		return true, m
	case *ast.MapType:
		_, mk := c.isType(x.Key)
		_, mv := c.isType(x.Value)
		return true, mk || mv
	case *ast.ChanType:
		_, m := c.isType(x.Value)
		return true, m
	case *ast.FuncType, *ast.InterfaceType, *ast.StructType:
		return true, false
	case *ast.IndexExpr:
		return c.isType(x.X)
	case *ast.IndexListExpr:
		return c.isType(x.X)
	}
	return false, false
}

// expr reads an initializer's expression; handed says it is handed to a
// library call, which may call back whatever of the module it is given.
func (c *checker) expr(e ast.Expr, handed bool) {
	switch x := e.(type) {
	case nil, *ast.BasicLit:
	case *ast.Ident:
		switch {
		case builtinValues[x.Name] || builtinTypes[x.Name] || c.own.consts[x.Name]:
		case c.own.funcs[x.Name]:
			c.refuse(x, "refers to %s, a function of your module, which could be called", x.Name)
		case handed:
			c.refuse(x, "hands %s, a value of your module, to a library call that may call its methods", x.Name)
		}
	case *ast.SelectorExpr:
		if path, ok := c.importOf(x.X); ok {
			if !c.inModule(path) {
				return // a library's value or function
			}
			d := c.decls[path]
			switch {
			case d == nil || d.consts[x.Sel.Name]:
			case d.funcs[x.Sel.Name]:
				c.refuse(x, "refers to %s.%s, a function of your module, which could be called", x.X, x.Sel.Name)
			case handed:
				c.refuse(x, "hands %s.%s, a value of your module, to a library call that may call its methods", x.X, x.Sel.Name)
			}
			return
		}
		if handed && !c.rootedInLibrary(x) {
			c.refuse(x, "hands %s, a field or method of a value of your module, to a library call that may call it", render(x))
			return
		}
		c.expr(x.X, handed)
	case *ast.CompositeLit:
		if _, module := c.isType(x.Type); module && handed {
			c.refuse(x, "hands a value of your module's type %s to a library call that may call its methods", render(x.Type))
			return
		}
		for _, elt := range x.Elts {
			if kv, ok := elt.(*ast.KeyValueExpr); ok {
				if _, isField := kv.Key.(*ast.Ident); !isField {
					c.expr(kv.Key, handed)
				}
				c.expr(kv.Value, handed)
				continue
			}
			c.expr(elt, handed)
		}
	case *ast.FuncLit:
		c.refuse(x, "holds a function literal, which could be called")
	case *ast.CallExpr:
		c.call(x, handed)
	case *ast.ParenExpr:
		c.expr(x.X, handed)
	case *ast.UnaryExpr:
		c.expr(x.X, handed)
	case *ast.BinaryExpr:
		c.expr(x.X, handed)
		c.expr(x.Y, handed)
	case *ast.StarExpr:
		c.expr(x.X, handed)
	case *ast.IndexExpr:
		c.expr(x.X, handed)
		c.expr(x.Index, handed)
	case *ast.SliceExpr:
		for _, s := range []ast.Expr{x.X, x.Low, x.High, x.Max} {
			c.expr(s, handed)
		}
	case *ast.TypeAssertExpr:
		c.expr(x.X, handed)
	default:
		c.refuse(x, "holds an expression the grader does not read (%T)", x)
	}
}

// call reads a call in an initializer: a conversion, a pure builtin, or a
// library function or a library value's method, whose arguments are handed
// to it.
func (c *checker) call(x *ast.CallExpr, handed bool) {
	fun := x.Fun
	var typeArgs []ast.Expr
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun, typeArgs = f.X, []ast.Expr{f.Index}
	case *ast.IndexListExpr:
		fun, typeArgs = f.X, f.Indices
	}
	args := func(handedToLibrary bool) {
		for _, a := range append(typeArgs, x.Args...) {
			c.expr(a, handedToLibrary)
		}
	}
	if isType, module := c.isType(fun); isType {
		if _, sel := fun.(*ast.SelectorExpr); !sel || module {
			if module && handed {
				c.refuse(x, "hands a value of your module's type %s to a library call that may call its methods", render(fun))
				return
			}
			args(handed) // a conversion calls nothing
			return
		}
	}
	switch f := fun.(type) {
	case *ast.Ident:
		if pureBuiltins[f.Name] && !c.own.funcs[f.Name] {
			args(handed)
			return
		}
		c.refuse(x, "calls %s, a function of your module", f.Name)
	case *ast.SelectorExpr:
		if path, ok := c.importOf(f.X); ok && c.inModule(path) {
			c.refuse(x, "calls %s.%s, a function of your module", f.X, f.Sel.Name)
			return
		}
		if c.rootedInLibrary(f) {
			args(true)
			return
		}
		c.refuse(x, "calls %s, a method of a value of your module", render(f))
	case *ast.FuncLit:
		c.refuse(x, "calls a function literal")
	default:
		c.refuse(x, "calls %s, which could be code of your module", render(fun))
	}
}

// render is a short text of an expression for a message.
func render(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return render(x.X) + "." + x.Sel.Name
	case *ast.StarExpr:
		return "*" + render(x.X)
	case *ast.ParenExpr:
		return "(" + render(x.X) + ")"
	case *ast.CallExpr:
		return render(x.Fun) + "(…)"
	case *ast.FuncLit:
		return "func(…){…}"
	}
	return fmt.Sprintf("%T", e)
}
