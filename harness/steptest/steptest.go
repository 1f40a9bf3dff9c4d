// Package steptest holds what tests need to run the harness on a step
// module outside the workbook: a copy of the module, and a workspace that
// builds it with the workbook's dependency versions.
package steptest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Copy copies a step module (without bin/) to a temporary directory: runs
// regenerate files in place, and tests must not write into the repository.
func Copy(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() && rel == "bin" {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
	return dst
}

// Workspace puts a module copied out of the workbook at root into a
// workspace of its own with the harness, so it resolves the same dependency
// versions as the workbook and its builds share the go build cache with it.
// It returns the environment that selects the workspace.
func Workspace(t testing.TB, root, dir string) []string {
	t.Helper()
	work := filepath.Join(filepath.Dir(dir), "go.work")
	body := fmt.Sprintf("go 1.26.0\n\nuse (\n\t%s\n\t%s\n)\n", filepath.Join(root, "harness"), dir)
	if err := os.WriteFile(work, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"GOWORK=" + work}
}
