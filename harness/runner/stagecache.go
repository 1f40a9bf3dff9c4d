package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/10xdev/gw10/harness/gotool"
)

// A stageCache remembers, for one module directory, the key of the inputs
// a stage last succeeded on, so that a warm run does not redo work whose
// result it already has. It lives where the harness keeps its state
// (<root>/.gw10/cache), one file per stage and module directory; a file
// whose module directory is gone is removed when another is written.
type stageCache struct {
	path string // the file: "<module dir>\n<key>\n"
	dir  string // the module directory, absolute
}

// cacheOf is the cache of stage kind for the module in stepDir; ok is false
// when there is none: a grade (opts.Sandbox) redoes every stage.
func cacheOf(opts Options, kind string) (stageCache, bool) {
	if opts.Sandbox != nil || opts.Root == "" {
		return stageCache{}, false
	}
	root, err1 := filepath.Abs(opts.Root)
	dir, err2 := filepath.Abs(opts.StepDir)
	if err1 != nil || err2 != nil {
		return stageCache{}, false
	}
	sum := sha256.Sum256([]byte(dir))
	return stageCache{path: filepath.Join(root, ".gw10", "cache", kind+"-"+hex.EncodeToString(sum[:8])), dir: dir}, true
}

// holds says whether the stage last succeeded on inputs with this key.
func (c stageCache) holds(key string) bool {
	b, err := os.ReadFile(c.path)
	return err == nil && string(b) == c.dir+"\n"+key+"\n"
}

// store records key as the inputs the stage just succeeded on. A cache that
// cannot be written costs the next run time, not its verdict: errors are
// returned for the caller to ignore.
func (c stageCache) store(key string) error {
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".tmp-")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(c.dir + "\n" + key + "\n")
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), c.path)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return werr
	}
	c.prune()
	return nil
}

// prune removes the entries of module directories that no longer exist (a
// test's copy of a module, a learner's deleted copy).
func (c stageCache) prune() {
	entries, _ := filepath.Glob(filepath.Join(filepath.Dir(c.path), "*-*"))
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		dir, _, _ := strings.Cut(string(b), "\n")
		if _, err := os.Stat(dir); os.IsNotExist(err) && dir != "" {
			_ = os.Remove(e)
		}
	}
}

// generateKey is a digest of everything controller-gen's output depends on:
// the generator inputs of the step (generatorInputs: the API package whole,
// the marker lines of every other Go file, the generated files as they are),
// every package of the module the API package imports (the CRD generator
// follows its types there), the module's go.mod/go.sum and the workspace's
// (they choose the versions of the types it embeds, metav1.Condition...),
// the harness's go.mod/go.sum (they pin controller-gen itself), its
// arguments and the environment it runs in.
func generateKey(opts Options) (string, error) {
	h := sha256.New()
	inputs, err := generatorInputs(opts.StepDir)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "inputs %s\n", inputs)
	imported, err := moduleImportsOf(opts.StepDir, "api")
	if err != nil {
		return "", err
	}
	files := []string{
		filepath.Join(opts.StepDir, "go.mod"), filepath.Join(opts.StepDir, "go.sum"),
		filepath.Join(opts.Root, "go.work"), filepath.Join(opts.Root, "go.work.sum"),
		filepath.Join(opts.Root, "harness", "go.mod"), filepath.Join(opts.Root, "harness", "go.sum"),
	}
	for _, e := range opts.GoEnv {
		if w, ok := strings.CutPrefix(e, "GOWORK="); ok && w != "off" && w != "" {
			files = append(files, w, w+".sum")
		}
	}
	for _, dir := range imported {
		gos, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		files = append(files, gos...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			return "", fmt.Errorf("reading %s: %w", f, err)
		}
		fmt.Fprintf(h, "file %s %d\n", f, len(b))
		h.Write(b)
	}
	fmt.Fprintf(h, "args %q\nenv %q\n", gotool.ControllerGenArgs, opts.GoEnv)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// moduleImportsOf lists the directories of the module's own packages that
// the packages under sub import, directly or not (sub's own excluded).
func moduleImportsOf(moduleDir, sub string) ([]string, error) {
	gomod, err := os.ReadFile(filepath.Join(moduleDir, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("reading the step's go.mod: %w", err)
	}
	module := modfile.ModulePath(gomod)
	var queue []string
	_ = filepath.WalkDir(filepath.Join(moduleDir, sub), func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			queue = append(queue, path)
		}
		return nil
	})
	seen := map[string]bool{}
	for _, d := range queue {
		seen[d] = true
	}
	var out []string
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		gos, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range gos {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				continue // controller-gen will say what is wrong with it
			}
			for _, imp := range file.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				rel, ok := strings.CutPrefix(path, module+"/")
				if !ok || module == "" {
					continue
				}
				d := filepath.Join(moduleDir, filepath.FromSlash(rel))
				if !seen[d] {
					seen[d] = true
					out = append(out, d)
					queue = append(queue, d)
				}
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
