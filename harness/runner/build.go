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
		return false, fmt.Errorf("%s", relPaths(err.Error(), opts))
	}
	after, _ := os.ReadFile(deepcopy)
	return !bytes.Equal(before, after), nil
}

// build compiles the step's cmd/ into the run directory.
func build(ctx context.Context, opts Options, dir string) (string, error) {
	bin := filepath.Join(dir, "bin", "manager")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd")
	cmd.Dir = opts.StepDir
	cmd.Env = append(os.Environ(), opts.GoEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("the controller does not compile (go build ./cmd in %s):\n%s", opts.StepName, relPaths(string(out), opts))
	}
	return bin, nil
}

var goFileRE = regexp.MustCompile(`(?m)^(\./)?([\w./-]+\.go:\d+)`)

// relPaths prefixes the compiler's module-relative file names with the
// step's name, so that "internal/controller/x.go:12:3" reads
// "step01/internal/controller/x.go:12:3" from the workbook root.
func relPaths(out string, opts Options) string {
	if opts.StepName == "" {
		return out
	}
	return goFileRE.ReplaceAllStringFunc(out, func(m string) string {
		m = strings.TrimPrefix(m, "./")
		if strings.HasPrefix(m, "/") || strings.HasPrefix(m, opts.StepName+"/") {
			return m
		}
		return opts.StepName + "/" + m
	})
}
