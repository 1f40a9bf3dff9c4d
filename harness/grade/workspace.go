package grade

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"

	"golang.org/x/mod/modfile"
)

// workspaceWithout is the go.work data (read from name) without the modules
// for which gone is true (given the directory a use line names, slash-
// separated and relative to the workbook): the instructor's workspace names
// every step's solution, a learner's copy and a grading tree hold none, and
// go refuses a go.work that names a missing module. A go.work that names
// none of them comes back byte for byte. go.work.sum needs no change: a step
// and its solution have the same requirements, so dropping the solution
// drops no module the workspace builds with.
func workspaceWithout(name string, data []byte, gone func(dir string) bool) ([]byte, error) {
	wf, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return nil, err
	}
	dropped := false
	for _, u := range slices.Clone(wf.Use) {
		if dir := path.Clean(filepath.ToSlash(u.Path)); gone(dir) {
			if err := wf.DropUse(u.Path); err != nil {
				return nil, err
			}
			dropped = true
		}
	}
	if !dropped {
		return data, nil
	}
	wf.Cleanup()
	return modfile.Format(wf.Syntax), nil
}

// dropFromWorkspace rewrites the go.work at the root of dir, if there is
// one, without the modules for which gone is true (workspaceWithout).
func dropFromWorkspace(dir string, gone func(dir string) bool) error {
	name := filepath.Join(dir, "go.work")
	data, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	out, err := workspaceWithout(name, data, gone)
	if err != nil {
		return fmt.Errorf("the workbook's go.work: %w", err)
	}
	if bytes.Equal(out, data) {
		return nil
	}
	return os.WriteFile(name, out, 0o644)
}

// underAny says whether name is one of dirs or inside one.
func underAny(dirs []string) func(name string) bool {
	return func(name string) bool {
		return slices.ContainsFunc(dirs, func(dir string) bool { return under(name, path.Clean(filepath.ToSlash(dir))) })
	}
}
