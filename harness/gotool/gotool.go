// Package gotool finds the workbook's pinned Go tools (tool directives in
// harness/go.mod), built and cached by the go command.
package gotool

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Path returns the executable of a tool of the workbook at root, building it
// if needed (`go tool -n NAME`).
func Path(ctx context.Context, root, name string) (string, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "tool", "-n", name)
	// The tool directive lives in harness/go.mod, and the tool is built from
	// that module alone: never through a workspace, which holds the step's
	// module — in a grade, the submission's, whose go.mod must not be able to
	// replace a tool's code.
	cmd.Dir = filepath.Join(root, "harness")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building %s (go tool -n %s in %s): %v\n%s", name, name, root, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// ControllerGenArgs is what a step module's Makefile runs for `make
// generate manifests`, in one invocation (the packages are loaded once).
var ControllerGenArgs = []string{
	"object:headerFile=hack/boilerplate.go.txt",
	"rbac:roleName=manager-role", "crd",
	"paths=./...",
	"output:crd:artifacts:config=config/crd/bases",
}

// Generate runs controller-gen in a step module.
func Generate(ctx context.Context, controllerGen, dir string, env []string) error {
	cmd := exec.CommandContext(ctx, controllerGen, ControllerGenArgs...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("controller-gen %s failed (%v):\n%s", strings.Join(ControllerGenArgs, " "), err, out)
	}
	return nil
}
