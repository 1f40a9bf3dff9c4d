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
)

// generate regenerates the step's CRD, ClusterRole and deepcopy code from
// its markers, as `make manifests generate` does, and reports whether the
// deepcopy code changed (the binary must then be rebuilt).
func generate(ctx context.Context, opts Options) (bool, error) {
	gen, err := controllerGen(ctx, opts.Root)
	if err != nil {
		return false, err
	}
	deepcopy := filepath.Join(opts.StepDir, "api", "v1", "zz_generated.deepcopy.go")
	before, _ := os.ReadFile(deepcopy)
	for _, args := range [][]string{
		{"object:headerFile=hack/boilerplate.go.txt", "paths=./..."},
		{"rbac:roleName=manager-role", "crd", "paths=./...", "output:crd:artifacts:config=config/crd/bases"},
	} {
		cmd := exec.CommandContext(ctx, gen, args...)
		cmd.Dir = opts.StepDir
		cmd.Env = append(os.Environ(), opts.GoEnv...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return false, fmt.Errorf("controller-gen %s failed (%v):\n%s", strings.Join(args, " "), err, relPaths(string(out), opts))
		}
	}
	after, _ := os.ReadFile(deepcopy)
	return !bytes.Equal(before, after), nil
}

// controllerGen returns the pinned controller-gen, built (once, cached by
// go) from the workbook's tool directive.
func controllerGen(ctx context.Context, root string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "tool", "-n", "controller-gen")
	cmd.Dir = root
	// The tool directive lives in the workbook's workspace, whatever the
	// step's own environment says.
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"), "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building controller-gen (go tool -n controller-gen in %s): %v\n%s", root, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
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
