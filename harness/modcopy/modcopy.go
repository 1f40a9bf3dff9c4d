// Package modcopy copies a step module out of the workbook and gives it a
// workspace of its own with the harness, so that it builds with the
// workbook's dependency versions and shares the go build cache: what tests
// (steptest) and generated mutants run on.
package modcopy

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Copy copies the module at src (without bin/) to dst: runs regenerate
// files in place, and nothing may write into the workbook.
func Copy(src, dst string) error {
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
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
		return fmt.Errorf("copying %s: %w", src, err)
	}
	return nil
}

// Workspace writes a go.work beside dir that uses the harness of the
// workbook at root and the module at dir, and returns the environment that
// selects it.
func Workspace(root, dir string) ([]string, error) {
	work := filepath.Join(filepath.Dir(dir), "go.work")
	body := fmt.Sprintf("go 1.26.0\n\nuse (\n\t%s\n\t%s\n)\n", filepath.Join(root, "harness"), dir)
	if err := os.WriteFile(work, []byte(body), 0o644); err != nil {
		return nil, fmt.Errorf("the copy's workspace: %w", err)
	}
	return []string{"GOWORK=" + work}, nil
}
