package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/sandbox"
	"github.com/10xdev/gw10/harness/steps"
)

// TestGenerateRunsAgainWhenAnInputChanges: a warm run does not run
// controller-gen on the inputs it last succeeded on, and runs it as soon as
// one changes: a marker in the controller, a generated file edited by
// hand, a type of a package the API imports. A grade always runs it.
func TestGenerateRunsAgainWhenAnInputChanges(t *testing.T) {
	st := steps.Default()
	dir := copyModule(t, filepath.Join(root, st.SolutionDir))
	opts := Options{Root: root, Step: st, StepDir: dir, Label: st.SolutionDir, GoEnv: workspaceFor(t, dir), StageCache: true}.withDefaults()
	ctx := context.Background()
	gen := func(want bool, why string) {
		t.Helper()
		_, cached, err := generate(ctx, opts)
		if err != nil {
			t.Fatalf("%s: %v", why, err)
		}
		if cached != want {
			t.Fatalf("%s: controller-gen skipped = %v, want %v", why, cached, want)
		}
	}
	edit := func(rel string, f func(string) string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	role := func() string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "config", "rbac", "role.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	gen(false, "the first run")
	gen(true, "nothing changed")

	edit("internal/controller/edgeroute_controller.go", func(s string) string {
		return "// +kubebuilder:rbac:groups=\"\",resources=configmaps,verbs=get\n" + s
	})
	gen(false, "an RBAC marker added")
	if !strings.Contains(role(), "configmaps") {
		t.Fatalf("the new marker's rule is not in the role:\n%s", role())
	}
	gen(true, "nothing changed since the marker")

	edit("config/rbac/role.yaml", func(s string) string { return s + "# edited by hand\n" })
	gen(false, "the generated role edited by hand")
	if strings.Contains(role(), "edited by hand") {
		t.Fatalf("the hand edit is still in the role:\n%s", role())
	}

	// A package of the module the API imports: the CRD generator reads it.
	if err := os.MkdirAll(filepath.Join(dir, "internal", "shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "internal", "shared", "shared.go"), []byte("package shared\n\n// Weight is a weight.\ntype Weight int32\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "api", "v1", "shared.go"), []byte("package v1\n\nimport _ \""+st.SolutionModule+"/internal/shared\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gen(false, "the API imports a package of the module")
	gen(true, "nothing changed since the import")
	edit("internal/shared/shared.go", func(s string) string { return s + "\n// Other is another.\ntype Other string\n" })
	gen(false, "the imported package changed")

	opts.Sandbox = &sandbox.Sandbox{}
	if _, ok := cacheOf(opts, "generate"); ok {
		t.Error("a grade has a cache of the generate stage; it must run controller-gen always")
	}
}

// TestUnitTestsAreAnsweredFromGosTestCache: the unit stage's go test is
// cacheable (no -count=1): a second run on the same sources is Go's cached
// result and says so; a changed source runs them again.
func TestUnitTestsAreAnsweredFromGosTestCache(t *testing.T) {
	if strings.Contains(os.Getenv("GOFLAGS"), "-count") {
		t.Skip("GOFLAGS sets -count: go test caches nothing here")
	}
	dir := t.TempDir()
	write := func(name, body string) { writeFile(t, dir, name, body) }
	write("go.mod", "module example.com/unitcache\n\ngo 1.26.0\n")
	write("x.go", "package x\n\nfunc X() int { return 1 }\n")
	write("x_test.go", "package x\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {\n\tif X() != 1 {\n\t\tt.Fatal(X())\n\t}\n}\n")
	st := steps.Default()
	st.UnitTests, st.UnitPackage = "^TestX$", "."
	opts := Options{Root: root, Step: st, StepDir: dir, Label: "unitcache", GoEnv: []string{"GOWORK=off", "GOFLAGS="}, StageCache: true}
	ctx := context.Background()
	run := func(want bool, why string) {
		t.Helper()
		cached, err := unitTests(ctx, opts)
		if err != nil {
			t.Fatalf("%s: %v", why, err)
		}
		if cached != want {
			t.Fatalf("%s: cached = %v, want %v", why, cached, want)
		}
	}
	run(false, "the first run")
	run(true, "nothing changed")
	write("x.go", "package x\n\nvar one = 1\n\nfunc X() int { return one }\n")
	run(false, "the source changed")
	opts.StageCache = false
	run(false, "a run without the stage cache (a grade)")
}

// TestALinkIsReusedOnlyForTheSamePackages: a program linked from the same
// compiled packages comes from the cache, byte for byte; a changed source,
// or a cached binary changed since it was stored, links again.
func TestALinkIsReusedOnlyForTheSamePackages(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) { writeFile(t, dir, name, body) }
	write("go.mod", "module example.com/linkcache\n\ngo 1.26.0\n")
	write("main.go", "package main\n\nfunc main() { println(\"one\") }\n")
	opts := Options{Root: t.TempDir(), StepDir: dir, StageCache: true}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	dst := filepath.Join(t.TempDir(), "prog")
	ctx := context.Background()
	link := func(want bool, why string) []byte {
		t.Helper()
		built := false
		cached, err := linkCached(ctx, opts, "build", dir, env, []string{"."}, "build .", dst, func() error {
			built = true
			cmd := exec.CommandContext(ctx, "go", "build", "-o", dst, ".")
			cmd.Dir, cmd.Env = dir, env
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", why, err)
		}
		if cached != want || built == want {
			t.Fatalf("%s: cached = %v (built %v), want cached %v", why, cached, built, want)
		}
		out, err := exec.CommandContext(ctx, dst).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: the program: %v", why, err)
		}
		return out
	}
	if out := link(false, "the first link"); string(out) != "one\n" {
		t.Fatalf("the program says %q", out)
	}
	if out := link(true, "nothing changed"); string(out) != "one\n" {
		t.Fatalf("the cached program says %q", out)
	}
	write("main.go", "package main\n\nfunc main() { println(\"two\") }\n")
	if out := link(false, "the source changed"); string(out) != "two\n" {
		t.Fatalf("the relinked program says %q", out)
	}
	cache, _ := cacheOf(opts, "build")
	if err := os.WriteFile(cache.binary(), []byte("#!/bin/sh\necho tampered\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out := link(false, "the cached binary was changed"); string(out) != "two\n" {
		t.Fatalf("the program after a tampered cache says %q", out)
	}
	link(true, "stored again")
}

func writeFile(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
