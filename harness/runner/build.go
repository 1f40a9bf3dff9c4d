package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/10xdev/gw10/harness/gotool"
)

// generate regenerates the step's CRD, ClusterRole and deepcopy code from
// its markers, as `make manifests generate` does, and reports whether the
// deepcopy code changed (the binary must then be rebuilt).
func generate(ctx context.Context, opts Options) (bool, error) {
	gen, err := gotool.Path(ctx, opts.Root, "controller-gen")
	if err != nil {
		return false, err
	}
	deepcopy := filepath.Join(opts.StepDir, "api", "v1", "zz_generated.deepcopy.go")
	before, _ := os.ReadFile(deepcopy)
	if err := gotool.Generate(ctx, gen, opts.StepDir, opts.GoEnv); err != nil {
		return false, fmt.Errorf("%s", uniqueLines(relPaths(err.Error(), opts)))
	}
	after, _ := os.ReadFile(deepcopy)
	return !bytes.Equal(before, after), nil
}

// build compiles the step's cmd/ into the run directory.
func build(ctx context.Context, opts Options, dir string) (string, error) {
	bin := filepath.Join(dir, "bin", "manager")
	// -w: no DWARF, which nothing reads (stack traces come from the
	// runtime's own tables); the link, most of a rebuild, is a fifth faster.
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags=-w", "-o", bin, "./cmd")
	cmd.Dir = opts.StepDir
	cmd.Env = append(os.Environ(), opts.GoEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("the controller does not compile (go build ./cmd in %s):\n%s", opts.Label, relPaths(string(out), opts))
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

// unitStage runs the step's unit tests (no cluster needed) before the
// cluster stage. A failure is reported, and the checks still run: they say
// more about the controller than a red unit test alone.
func (r *run) unitStage(ctx context.Context) bool {
	if r.opts.Step.UnitTests == "" {
		return true
	}
	if r.opts.partial() {
		// Said, not silently left out: a learner who just wrote the
		// function those tests cover wonders whether it was tested.
		fmt.Fprintf(r.opts.Out, "  %-24s skipped (a --run selection runs checks only; make check without --run runs them)\n", "unit tests ...")
		return true
	}
	r.stage(ctx, "unit tests", func() error { return unitTests(ctx, r.opts) })
	return ctx.Err() == nil
}

// unitTests runs `go test -run <pattern> <package>` in the step module.
func unitTests(ctx context.Context, opts Options) error {
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-v", "-run", opts.Step.UnitTests, opts.Step.UnitPackage)
	cmd.Dir = opts.StepDir
	cmd.Env = append(os.Environ(), opts.GoEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go test -run '%s' %s in %s:\n%s", opts.Step.UnitTests, opts.Step.UnitPackage, opts.Label,
			relPaths(strings.TrimSpace(string(out)), opts))
	}
	if why := ranNoTest(string(out)); why != "" {
		return fmt.Errorf("go test -run '%s' %s in %s %s: the step's unit tests must run and pass (were they deleted, renamed or skipped?)",
			opts.Step.UnitTests, opts.Step.UnitPackage, opts.Label, why)
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
