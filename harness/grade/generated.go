package grade

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/10xdev/gw10/harness/gotool"
)

// GeneratedDrift regenerates the CRD, ClusterRole and deepcopy code of the
// step at stepDir from its markers, as `make manifests generate` does, and
// returns the files (relative to stepDir, slash-separated) that this added,
// changed or removed: what the submission committed that its markers do not
// generate. Run it on a copy: it leaves the generated files in place.
func GeneratedDrift(ctx context.Context, controllerGen, stepDir string, env []string) ([]string, error) {
	before, err := snapshot(stepDir)
	if err != nil {
		return nil, err
	}
	if err := gotool.Generate(ctx, controllerGen, stepDir, env); err != nil {
		return nil, err
	}
	after, err := snapshot(stepDir)
	if err != nil {
		return nil, err
	}
	drift := []string{}
	for name, data := range after {
		if old, ok := before[name]; !ok || !bytes.Equal(old, data) {
			drift = append(drift, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			drift = append(drift, name)
		}
	}
	sort.Strings(drift)
	return drift, nil
}

// snapshot reads every file of a step module; controller-gen writes only
// generated files, so whatever it changes is a generated file.
func snapshot(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	return files, nil
}
