package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
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
// when there is none: a run without Options.StageCache (make test's copies
// of modules, which would only pay for storing), or a grade (opts.Sandbox),
// redoes every stage.
func cacheOf(opts Options, kind string) (stageCache, bool) {
	if !opts.StageCache || opts.Sandbox != nil || opts.Root == "" {
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
	stored, ok := c.value()
	return ok && stored == key
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

// value is the key the stage last succeeded on, if any.
func (c stageCache) value() (string, bool) {
	b, err := os.ReadFile(c.path)
	if err != nil {
		return "", false
	}
	dir, key, _ := strings.Cut(strings.TrimSuffix(string(b), "\n"), "\n")
	return key, dir == c.dir
}

// binary is where a stage that links a program keeps the last one.
func (c stageCache) binary() string { return c.path + ".bin" }

// prune removes the entries of module directories that no longer exist (a
// test's copy of a module, a learner's deleted copy), binaries with them.
func (c stageCache) prune() {
	entries, _ := filepath.Glob(filepath.Join(filepath.Dir(c.path), "*-*"))
	for _, e := range entries {
		if base := filepath.Base(e); strings.HasPrefix(base, ".") || strings.HasSuffix(base, ".bin") {
			continue
		}
		b, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		dir, _, _ := strings.Cut(string(b), "\n")
		if _, err := os.Stat(dir); os.IsNotExist(err) && dir != "" {
			_ = os.Remove(e)
			_ = os.Remove(e + ".bin")
		}
	}
}

// linkCached puts into dst the program that build links there, unless the
// stage's cache holds one linked from the very same compiled packages
// (linkKey), and says whether it came from the cache. Go caches compiled
// packages but not the link, most of a warm build of a controller-runtime
// program (seconds, many on a busy machine). The cached binary is checked
// against the hash it was stored with, so a run that changed it (learner
// code runs unsandboxed in make check) cannot hand it to the next one.
func linkCached(ctx context.Context, opts Options, kind, dir string, env, listArgs []string, linkFlags, dst string, build func() error) (bool, error) {
	cache, ok := cacheOf(opts, kind)
	if !ok {
		return false, build()
	}
	key, keyErr := linkKey(ctx, dir, env, listArgs, linkFlags)
	if keyErr == nil {
		if stored, ok := cache.value(); ok {
			if k, sum, _ := strings.Cut(stored, " "); k == key && copyFile(cache.binary(), dst, sum) == nil {
				return true, nil
			}
		}
	}
	if err := build(); err != nil {
		return false, err
	}
	// Stored only when the packages did not change during the build (a
	// save while it ran): the key must name what was linked.
	if after, err := linkKey(ctx, dir, env, listArgs, linkFlags); keyErr == nil && err == nil && after == key {
		tmp := cache.binary() + ".tmp"
		sum, err := copyFileHashed(dst, tmp)
		if err == nil {
			err = os.Rename(tmp, cache.binary())
		}
		if err == nil {
			_ = cache.store(key + " " + sum) // a cache not written costs the next run time, not its verdict
		} else {
			_ = os.Remove(tmp)
		}
	}
	return false, nil
}

// linkKey is a digest of every package a program is linked from — go list
// -deps -export gives each one's build ID, which names its compiled output
// — with the link's flags and the GOFLAGS in effect (which may carry link
// flags too).
func linkKey(ctx context.Context, dir string, env, listArgs []string, linkFlags string) (string, error) {
	args := append([]string{"list", "-deps", "-export", "-f", "{{.ImportPath}} {{.BuildID}}"}, listArgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -export in %s: %w", dir, err)
	}
	goflags := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "GOFLAGS="); ok {
			goflags = v // the last one wins, as in exec
		}
	}
	h := sha256.New()
	// Not listArgs: an overlay's file is new in every run, its content is
	// in the build IDs. linkFlags says what the link makes of the packages.
	fmt.Fprintf(h, "%q\n%q\n", linkFlags, goflags)
	h.Write(out)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// copyFile copies src to dst (executable) if src's sha256 is sum.
func copyFile(src, dst, sum string) error {
	tmp := dst + ".tmp"
	got, err := copyFileHashed(src, tmp)
	if err == nil && got != sum {
		err = fmt.Errorf("%s changed since it was cached", src)
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// copyFileHashed copies src to dst (executable) and returns src's sha256.
func copyFileHashed(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("copying %s: %w", src, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
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
