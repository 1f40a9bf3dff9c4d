package gotool

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// ModuleEnv is what go and controller-gen need in their environment to
// build the module in dir of the workbook at root: nothing when the
// workbook's go.work uses it (the instructor's uses every step and its
// solution) or dir is outside the workbook, where no go.work is found;
// GOWORK=off when it is under root but not in the workspace (a module the
// go.work does not name, which go would otherwise refuse to build).
func ModuleEnv(root, dir string) []string {
	root, dir = absClean(root), absClean(dir)
	if rel, err := filepath.Rel(root, dir); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	path := filepath.Join(root, "go.work")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil // no workspace: the module's own go.mod decides
	}
	wf, err := modfile.ParseWork(path, data, nil)
	if err != nil {
		return nil // go itself will say what is wrong with go.work
	}
	for _, u := range wf.Use {
		if absClean(filepath.Join(root, u.Path)) == dir {
			return nil
		}
	}
	return []string{"GOWORK=off"}
}

func absClean(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
