package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/10xdev/gw10/harness/assets"
	"github.com/10xdev/gw10/harness/gotool"
	"github.com/10xdev/gw10/harness/sandbox"
)

// generate regenerates the step's CRD, ClusterRole and deepcopy code from
// its markers, as `make manifests generate` does, and reports whether the
// deepcopy code changed (the binary must then be rebuilt). cached says it
// did not run controller-gen: the generator's inputs (generateKey) are
// those of its last success in this module, whose output is in place.
func generate(ctx context.Context, opts Options) (changed, cached bool, err error) {
	cache, useCache := cacheOf(opts, "generate")
	if useCache {
		if key, err := generateKey(opts); err == nil && cache.holds(key) {
			return false, true, nil
		}
	}
	gen, err := gotool.Path(ctx, opts.Root, "controller-gen")
	if err != nil {
		return false, false, err
	}
	deepcopy := filepath.Join(opts.StepDir, "api", "v1", "zz_generated.deepcopy.go")
	before, _ := os.ReadFile(deepcopy)
	if err := gotool.Generate(ctx, gen, opts.StepDir, opts.GoEnv); err != nil {
		return false, false, fmt.Errorf("%s", uniqueLines(relPaths(err.Error(), opts)))
	}
	after, _ := os.ReadFile(deepcopy)
	if useCache {
		if key, err := generateKey(opts); err == nil {
			_ = cache.store(key) // a cache not written costs the next run time, not its verdict
		}
	}
	return !bytes.Equal(before, after), false, nil
}

// noDWARF links every binary the harness builds of the step's code (the
// controller, the unit tests, the probes) without DWARF, which nothing
// reads: stack traces come from the runtime's own tables. A link is most
// of a rebuild, and this makes it a fifth faster.
const noDWARF = "-ldflags=-w"

// build compiles the step's cmd/ into the run directory. A binary linked
// from the same compiled packages in an earlier run is reused (linkCached).
func build(ctx context.Context, opts Options, dir string) (string, error) {
	bin := filepath.Join(dir, "bin", "manager")
	env := append(os.Environ(), opts.GoEnv...)
	_, err := linkCached(ctx, opts, "build", opts.StepDir, env, []string{"./cmd"}, "build "+noDWARF+" ./cmd", bin, func() error {
		cmd := exec.CommandContext(ctx, "go", "build", noDWARF, "-o", bin, "./cmd")
		cmd.Dir = opts.StepDir
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("the controller does not compile (go build ./cmd in %s):\n%s", opts.Label, relPaths(string(out), opts))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return bin, nil
}

var goFileRE = regexp.MustCompile(`(?m)^(\./)?([\w./-]+\.go:\d+)`)

// relPaths prefixes the compiler's module-relative file names with the
// step's name, so that "internal/controller/x.go:12:3" reads
// "<step>/internal/controller/x.go:12:3" from the workbook root.
func relPaths(out string, opts Options) string {
	if opts.Label == "" {
		return out
	}
	if opts.StepDir != "" {
		out = strings.ReplaceAll(out, filepath.Clean(opts.StepDir)+"/", opts.Label+"/")
	}
	return goFileRE.ReplaceAllStringFunc(out, func(m string) string {
		m = strings.TrimPrefix(m, "./")
		if strings.HasPrefix(m, "/") || strings.HasPrefix(m, opts.Label+"/") {
			return m
		}
		return opts.Label + "/" + m
	})
}

// buildStages build the controller into the run directory and regenerate
// from the markers. Build first: a compile error is best reported by the
// compiler. Then rebuild if the deepcopy code changed. gw10 watch, which
// knows the generated files are those of the markers (run.generated), skips
// the generator.
func (r *run) buildStages(binary *string) []stage {
	compile := stage{name: "build", do: func(ctx context.Context) (err error) { *binary, err = build(ctx, r.opts, r.dir); return err }}
	if r.generated != "" {
		return []stage{compile, {name: "generate", skip: r.generated}}
	}
	return []stage{compile, {name: "generate", do: func(ctx context.Context) error {
		changed, cached, err := generate(ctx, r.opts)
		if cached {
			r.note("generate: no marker, api/ or generated file changed since controller-gen last ran here; not run again")
		}
		if err == nil && changed {
			*binary, err = build(ctx, r.opts, r.dir)
		}
		return err
	}}}
}

// unitStages run the step's unit tests (no cluster needed) before the
// cluster stage. A failure is reported, and the checks still run: they say
// more about the controller than a red unit test alone. What the harness
// reads after this stage (the built binary, the CRDs, the role) is hashed
// before and checked after: learner code that changed any of it stops the
// run, whatever ran it (the sandbox makes it impossible; without one it is
// the last guard).
func (r *run) unitStages(binary *string) []stage {
	switch {
	case r.opts.Step.UnitTests == "":
		return nil
	case r.opts.ChecksOnly:
		return []stage{{name: "unit tests", skip: "checks only"}}
	case r.opts.partial() && !r.opts.UnitTestsAlways:
		// Said, not silently left out: a learner who just wrote the
		// function those tests cover wonders whether it was tested.
		return []stage{{name: "unit tests", skip: "a --run selection runs checks only; make check without --run runs them"}}
	}
	return []stage{{name: "unit tests", failThrough: true, do: func(ctx context.Context) error { return r.guardedUnitTests(ctx, *binary) }}}
}

// guardedUnitTests runs the unit tests, in the sandbox when the run has
// one, and fails for good (stopErr) when they changed what the run reads
// next.
func (r *run) guardedUnitTests(ctx context.Context, binary string) error {
	read := readAfterUnitTests(r.opts.StepDir, binary)
	before, err := hashFiles(read)
	if err != nil {
		return stopErr{err}
	}
	if r.opts.Sandbox != nil {
		err = r.sandboxedUnitTests(ctx)
	} else {
		var cached bool
		cached, err = unitTests(ctx, r.opts)
		if cached {
			r.note("unit tests: passed before on these very sources and inputs; the result is from Go's test cache (go clean -testcache runs them again)")
		}
	}
	after, herr := hashFiles(read)
	if herr != nil {
		return stopErr{errors.Join(err, herr)}
	}
	if changed := changedFiles(before, after); len(changed) > 0 {
		for i, p := range changed {
			if p == binary {
				changed[i] = "the controller the harness built (" + p + ")"
			}
		}
		return stopErr{fmt.Errorf("the unit tests changed what the run reads after them, so it stops here: %s",
			relPaths(strings.Join(changed, ", "), r.opts))}
	}
	return err
}

// readAfterUnitTests are the files the harness reads once the unit tests
// have run: the controller it built and the manifests it generated.
func readAfterUnitTests(stepDir, binary string) []string {
	files := []string{binary, filepath.Join(stepDir, "config", "rbac", "role.yaml")}
	crds, _ := filepath.Glob(filepath.Join(stepDir, "config", "crd", "bases", "*.yaml"))
	return append(files, crds...)
}

// hashFiles hashes each file ("" for one that does not exist) and lists the
// CRD directory, so a CRD added or removed counts as a change.
func hashFiles(paths []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		switch {
		case os.IsNotExist(err):
			out[p] = ""
		case err != nil:
			return nil, fmt.Errorf("hashing %s: %w", p, err)
		default:
			out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		}
	}
	return out, nil
}

func changedFiles(before, after map[string]string) []string {
	var changed []string
	for p, h := range before {
		if after[p] != h {
			changed = append(changed, p)
		}
	}
	slices.Sort(changed)
	return changed
}

// unitTests runs `go test -run <pattern> <package>` in the step module,
// and says whether its result came from Go's test cache. The cache is
// Go's own and sound: a result is reused only when the test binary (every
// source it is built from), its flags, and every environment variable and
// file the tests read are those of a run that passed. No -count=1 with
// Options.StageCache, then: a warm make check does not start the unit
// tests' control plane again for nothing. A grade runs them always.
func unitTests(ctx context.Context, opts Options) (cached bool, err error) {
	args := []string{"test", "-v", noDWARF, "-run", opts.Step.UnitTests, opts.Step.UnitPackage}
	if !opts.StageCache {
		args = slices.Insert(args, 1, "-count=1")
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = opts.StepDir
	cmd.Env = append(os.Environ(), opts.GoEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return false, fmt.Errorf("go test -run '%s' %s in %s:\n%s", opts.Step.UnitTests, opts.Step.UnitPackage, opts.Label,
			relPaths(strings.TrimSpace(string(out)), opts))
	}
	return testCached.Match(out), unitTestsRan(string(out), opts)
}

// testCached is the go command's line for a package whose result came from
// the test cache.
var testCached = regexp.MustCompile(`(?m)^ok\s+\S+\s+\(cached\)`)

func unitTestsRan(out string, opts Options) error {
	if why := ranNoTest(out); why != "" {
		return fmt.Errorf("go test -run '%s' %s in %s %s: the step's unit tests must run and pass (were they deleted, renamed or skipped?)",
			opts.Step.UnitTests, opts.Step.UnitPackage, opts.Label, why)
	}
	return nil
}

// Learner code in the sandbox: the grader compiles the test binary (no cgo,
// no module changes, no network), and only that binary runs, as the
// sandbox's user, in a read-only copy of the module.
const (
	// unitWallDefault bounds the unit tests' wall time in the sandbox.
	unitWallDefault = 3 * time.Minute
)

// sandboxedBuildEnv is added to the grader's builds of learner code.
var sandboxedBuildEnv = []string{"CGO_ENABLED=0", "GOFLAGS=-mod=readonly", "GOPROXY=off"}

func (r *run) sandboxedUnitTests(ctx context.Context) error {
	opts, sb := r.opts, r.opts.Sandbox
	bin := filepath.Join(r.dir, "bin", "unit.test")
	cmd := exec.CommandContext(ctx, "go", "test", "-c", noDWARF, "-o", bin, opts.Step.UnitPackage)
	cmd.Dir = opts.StepDir
	cmd.Env = append(append(os.Environ(), opts.GoEnv...), sandboxedBuildEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go test -c %s in %s (the unit tests do not compile):\n%s", opts.Step.UnitPackage, opts.Label,
			relPaths(strings.TrimSpace(string(out)), opts))
	}
	if _, err := os.Stat(bin); err != nil {
		return unitTestsRan("", opts) // no test file: nothing was built
	}
	test, err := sb.Install(bin, filepath.Join("bin", "unit.test"))
	if err != nil {
		return err
	}
	module, err := sb.CopyTree(opts.StepDir, "module")
	if err != nil {
		return err
	}
	// The envtest binaries, for unit tests that start a control plane (the
	// solution's do): the store itself is in the grader's home.
	var extraEnv []string
	if a, err := assets.Ensure(ctx, assets.Options{NoDownload: true, NoBuild: true}); err == nil {
		for _, b := range append(slices.Clone(assets.Binaries), "kubectl") {
			if _, err := os.Stat(filepath.Join(a.Dir, b)); err != nil {
				continue
			}
			if _, err := sb.Share(filepath.Join(a.Dir, b), filepath.Join("envtest", b)); err != nil {
				return err
			}
		}
		extraEnv = append(extraEnv, "KUBEBUILDER_ASSETS="+sb.Path("envtest"))
	}
	wall := opts.UnitWall
	if wall == 0 {
		wall = unitWallDefault
	}
	res, err := sb.Run(ctx, sandbox.Spec{
		Path: test,
		Args: []string{"-test.count=1", "-test.v", "-test.run", opts.Step.UnitTests, "-test.timeout", wall.String()},
		Dir:  filepath.Join(module, filepath.FromSlash(opts.Step.UnitPackage)),
		Env:  extraEnv,
	}, wall, "unit tests")
	if err != nil {
		return err
	}
	for _, c := range res.CutOff {
		r.note("sandbox: " + c)
	}
	out := strings.TrimSpace(strings.ReplaceAll(string(res.Output), module+"/", opts.Label+"/"))
	cut := ""
	if len(res.CutOff) > 0 {
		cut = "\nthe sandbox cut off: " + strings.Join(res.CutOff, "; ")
	}
	if res.ExitCode != 0 {
		how := fmt.Sprintf("exit status %d", res.ExitCode)
		if res.Signal != 0 {
			how = "killed by " + res.Signal.String()
		}
		return fmt.Errorf("the unit tests (-run '%s' %s in %s) failed (%s):\n%s%s", opts.Step.UnitTests, opts.Step.UnitPackage, opts.Label,
			how, relPaths(out, opts), cut)
	}
	if err := unitTestsRan(out, opts); err != nil {
		return err
	}
	if len(res.Left) > 0 {
		return fmt.Errorf("the unit tests passed but left processes behind, which the sandbox killed: %s", strings.Join(res.CutOff, "; "))
	}
	return nil
}

// ranNoTest says why a passing `go test -v` did not really test: no test
// matched, or one was skipped; "" when every test ran and passed.
func ranNoTest(out string) string {
	var skipped []string
	passed := false
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "--- SKIP: "):
			skipped = append(skipped, strings.Fields(strings.TrimPrefix(l, "--- SKIP: "))[0])
		case strings.HasPrefix(l, "--- PASS: "):
			passed = true
		}
	}
	switch {
	case len(skipped) > 0:
		return "skipped " + strings.Join(skipped, ", ")
	case !passed:
		return "ran no test"
	}
	return ""
}

// uniqueLines drops repeated lines (controller-gen reports a marker error once
// per generator that reads it).
func uniqueLines(s string) string {
	seen := map[string]bool{}
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" && seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
