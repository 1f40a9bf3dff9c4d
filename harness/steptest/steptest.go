// Package steptest holds what tests need to run the harness on a step
// module outside the workbook: a copy of the module, and a workspace that
// builds it with the workbook's dependency versions.
package steptest

import (
	"path/filepath"
	"testing"

	"github.com/10xdev/gw10/harness/modcopy"
)

// Copy copies a step module (without bin/) to a temporary directory: runs
// regenerate files in place, and tests must not write into the repository.
func Copy(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := modcopy.Copy(src, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// Workspace puts a module copied out of the workbook at root into a
// workspace of its own with the harness, so it resolves the same dependency
// versions as the workbook and its builds share the go build cache with it.
// It returns the environment that selects the workspace.
func Workspace(t testing.TB, root, dir string) []string {
	t.Helper()
	env, err := modcopy.Workspace(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	return env
}
