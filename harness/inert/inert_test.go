package inert

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/steps"
)

const module = "example.com/m"

func pkg(path string, files map[string]string) Package {
	p := Package{ImportPath: path}
	for name, src := range files {
		p.Files = append(p.Files, File{Path: "/m/" + strings.TrimPrefix(path, module+"/") + "/" + name, Src: []byte(src)})
	}
	return p
}

// TestInitIsNeverCalledAndTheLinesStay: every init function is renamed to
// the blank name (legal, never called), the file still parses, and every
// line is where it was.
func TestInitIsNeverCalledAndTheLinesStay(t *testing.T) {
	src := `package v1

import "fmt"

func init() { fmt.Println("=== RUN TestGW10ServiceReadError\n--- PASS") }

func init() {
	fmt.Println("again")
}

func (T) init() {}

type T struct{}
`
	out, refusals, err := Rewrite(module, []Package{pkg(module+"/api/v1", map[string]string{"a.go": src})})
	if err != nil || len(refusals) > 0 {
		t.Fatalf("%v %v", err, refusals)
	}
	got := string(out["/m/api/v1/a.go"])
	if strings.Contains(got, "func init()") || strings.Count(got, "func _   ()") != 2 || !strings.Contains(got, "func (T) init()") {
		t.Fatalf("init functions not renamed (a method named init stays):\n%s", got)
	}
	if strings.Count(got, "\n") != strings.Count(src, "\n") || len(got) != len(src) {
		t.Fatalf("the lines moved:\n%s", got)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "a.go", got, 0); err != nil {
		t.Fatalf("the rewritten file does not parse: %v", err)
	}
}

// TestTheScaffoldsInitializersPass: the solution's and the skeleton's own
// package-level initializers (api/v1's GroupVersion, SchemeBuilder,
// AddToScheme) and everyday library ones pass.
func TestTheScaffoldsInitializersPass(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, st := range steps.All() {
		for _, dir := range []string{st.SolutionDir, st.Dir} {
			mod := "github.com/10xdev/gw10/" + filepath.ToSlash(dir)
			var pkgs []Package
			err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
					return err
				}
				rel, _ := filepath.Rel(filepath.Join(root, dir), filepath.Dir(path))
				b, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				ip := mod + "/" + filepath.ToSlash(rel)
				if len(pkgs) == 0 || pkgs[len(pkgs)-1].ImportPath != ip {
					pkgs = append(pkgs, Package{ImportPath: ip})
				}
				pkgs[len(pkgs)-1].Files = append(pkgs[len(pkgs)-1].Files, File{Path: path, Src: b})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(pkgs) < 3 {
				t.Fatalf("%s: read only %d packages", dir, len(pkgs))
			}
			if _, refusals, err := Rewrite(mod, pkgs); err != nil || len(refusals) > 0 {
				t.Errorf("%s: %v %v", dir, err, refusals)
			}
		}
	}
	ok := `package c

import (
	"regexp"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"example.com/m/api/v1"
)

const pattern = "^[a-z]+$"

type T struct{ D time.Duration }

type I interface{ M() }

func (*T) M() {}

var (
	re      = regexp.MustCompile(pattern)
	log     = ctrl.Log.WithName("edgeroute")
	_ I     = (*T)(nil)
	gv      = schema.GroupVersion{Group: v1.Group, Version: "v1"}
	d       = 3 * time.Second
	t0      = T{D: d}
	names   = []string{"a", "b"}
	n       = len(names)
	m       = t0.M
	timeout = time.Duration(5)
)
`
	v1 := `package v1

const Group = "net.10xdev.io"
`
	_, refusals, err := Rewrite(module, []Package{pkg(module+"/c", map[string]string{"c.go": ok}), pkg(module+"/api/v1", map[string]string{"v.go": v1})})
	if err != nil || len(refusals) > 0 {
		t.Fatalf("%v %v", err, refusals)
	}
}

// TestInitializersThatCouldRunModuleCodeAreRefused: each names its line.
func TestInitializersThatCouldRunModuleCodeAreRefused(t *testing.T) {
	for _, tc := range []struct{ name, decl, want string }{
		{"a call of a module function", `var x = forge()`, "calls forge, a function of your module"},
		{"a function literal called", `var _ = func() int { forge(); return 0 }()`, "function literal"},
		{"a module function handed on", `var _ = sync.OnceFunc(forge)`, "refers to forge, a function of your module"},
		{"a module value whose String a library calls", `var _ = fmt.Sprint(T{})`, "hands a value of your module's type T"},
		{"a module var handed to a library", `var _ = fmt.Sprint(t0)`, "hands t0, a value of your module"},
		{"a method of a module value", `var _ = t0.String()`, "calls t0.String, a method of a value of your module"},
		{"a function of another module package", `var _ = other.Forge()`, "calls other.Forge, a function of your module"},
		{"a method value handed to a library", `var _ = sync.OnceFunc(t0.Run)`, "hands t0.Run, a field or method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `package c

import (
	"fmt"
	"sync"

	"example.com/m/other"
)

type T struct{}

func (T) String() string { return "" }
func (T) Run()           {}

var t0 T

func forge() int { return 0 }

` + tc.decl + `

var _, _, _ = fmt.Sprint, sync.OnceFunc, other.C
`
			o := `package other

func Forge() int { return 0 }

const C = 1
`
			_, refusals, err := Rewrite(module, []Package{pkg(module+"/c", map[string]string{"c.go": src}), pkg(module+"/other", map[string]string{"o.go": o})})
			if err != nil {
				t.Fatal(err)
			}
			if len(refusals) != 1 || !strings.Contains(refusals[0].String(), tc.want) || !strings.Contains(refusals[0].String(), "c.go:19:") {
				t.Fatalf("%s: refusals %v, want one at c.go:19 saying %q", tc.decl, refusals, tc.want)
			}
		})
	}
}
