package watch

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// files watches a step module's directory tree (fsnotify watches one
// directory at a time: every directory is added, and new ones as they
// appear) and sends the step-relative path of every save that matters.
type files struct {
	root string
	w    *fsnotify.Watcher
}

func watchFiles(root string) (*files, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", root, err)
	}
	f := &files{root: root, w: w}
	if err := f.addTree(root); err != nil {
		_ = w.Close()
		return nil, err
	}
	return f, nil
}

func (f *files) Close() error { return f.w.Close() }

// addTree watches dir and every directory under it but the skipped ones.
func (f *files) addTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) { // removed while we walked
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != f.root && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if err := f.w.Add(path); err != nil {
			return fmt.Errorf("watching %s: %w", path, err)
		}
		return nil
	})
}

// skipDir: the binaries make builds, and hidden directories (.git, editors').
func skipDir(name string) bool { return name == "bin" || strings.HasPrefix(name, ".") }

// run sends the step-relative paths of saves that matter until ctx ends;
// errors of the watcher go to warn.
func (f *files) run(ctx context.Context, saves chan<- string, warn func(error)) {
	for {
		select {
		case <-ctx.Done():
			return
		case err, ok := <-f.w.Errors:
			if !ok {
				return
			}
			warn(err)
		case ev, ok := <-f.w.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Stat(ev.Name); err == nil && st.IsDir() && !skipDir(filepath.Base(ev.Name)) {
					if err := f.addTree(ev.Name); err != nil {
						warn(err)
					}
					continue
				}
			}
			if ev.Op == fsnotify.Chmod {
				continue // touch, editors' attribute writes: the content is the same
			}
			rel, err := filepath.Rel(f.root, ev.Name)
			if err != nil || !matters(filepath.ToSlash(rel)) {
				continue
			}
			select {
			case saves <- filepath.ToSlash(rel):
			case <-ctx.Done():
				return
			}
		}
	}
}

// matters says whether a change of the step-relative path can change what
// the checks see: the controller's Go code (not its tests) and go.mod/go.sum.
// What the harness generates from the markers (deepcopy code, the CRD, the
// ClusterRole) is not a save: regenerating must not start a run again.
func matters(rel string) bool {
	base := pathBase(rel)
	switch {
	case strings.HasPrefix(base, "."), strings.HasPrefix(rel, "bin/"), strings.HasPrefix(rel, "config/"):
		return false
	case strings.HasPrefix(base, "zz_generated"):
		return false
	case base == "go.mod" || base == "go.sum":
		return true
	}
	return strings.HasSuffix(base, ".go") && !strings.HasSuffix(base, "_test.go")
}

func pathBase(rel string) string {
	if i := strings.LastIndex(rel, "/"); i >= 0 {
		return rel[i+1:]
	}
	return rel
}
