package skeleton

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Generated are files the diff leaves out: controller-gen writes them from
// the markers, and the markers' diff already shows what changed.
var Generated = []string{
	"api/v1/zz_generated.deepcopy.go",
	"config/crd/bases/*",
	"config/rbac/role.yaml",
	"go.sum",
}

func generated(rel string) bool {
	for _, pat := range Generated {
		if ok, _ := filepath.Match(pat, rel); ok {
			return true
		}
	}
	return false
}

// DiffOptions name the two modules: the solution (its module path rewritten
// to the learner's before comparing) and the learner's work.
type DiffOptions struct {
	Solution, Learner             string // directories
	SolutionLabel, LearnerLabel   string // how the diff names them
	SolutionModule, LearnerModule string
}

// Diff returns a unified diff from the solution to the learner's module,
// leaving out generated and solution-only files.
func Diff(opts DiffOptions) (string, error) {
	files := map[string]bool{}
	for _, dir := range []string{opts.Solution, opts.Learner} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			rel = filepath.ToSlash(rel)
			if Skipped(rel) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() && !generated(rel) {
				files[rel] = true
			}
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("listing %s: %w", dir, err)
		}
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	var out strings.Builder
	for _, rel := range names {
		a := readOrEmpty(filepath.Join(opts.Solution, rel))
		a = strings.ReplaceAll(a, opts.SolutionModule, opts.LearnerModule)
		b := readOrEmpty(filepath.Join(opts.Learner, rel))
		if a == b {
			continue
		}
		d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(a), B: difflib.SplitLines(b),
			FromFile: opts.SolutionLabel + "/" + rel, ToFile: opts.LearnerLabel + "/" + rel,
			Context: 3,
		})
		if err != nil {
			return "", fmt.Errorf("diffing %s: %w", rel, err)
		}
		out.WriteString(d)
	}
	return out.String(), nil
}

func readOrEmpty(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}
