package grade

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// entry is a file of a git tree: its mode and blob ID, i.e. its content,
// and its size in bytes (-1 for a submodule).
type entry struct {
	mode, blob string
	size       int64
}

// gitEnv is the environment git runs in: no credential prompts (a grading
// job has no terminal), and none of the caller's GIT_* variables that would
// point git at another repository (git sets GIT_DIR for hooks).
func gitEnv() []string {
	env := []string{"GIT_TERMINAL_PROMPT=0"}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "GIT_DIR" && name != "GIT_WORK_TREE" && name != "GIT_INDEX_FILE" {
			env = append(env, kv)
		}
	}
	return env
}

// gitCmd is a git command in dir; failed says why it failed.
func gitCmd(ctx context.Context, dir string, args ...string) (cmd *exec.Cmd, failed func(error) error) {
	cmd = exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	return cmd, func(err error) error {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = "(git said nothing)"
		}
		return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, msg)
	}
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd, failed := gitCmd(ctx, dir, args...)
	out, err := cmd.Output()
	if err != nil {
		return "", failed(err)
	}
	return string(out), nil
}

// gitList runs a git command whose output is NUL-separated names (-z).
func gitList(ctx context.Context, dir string, args ...string) ([]string, error) {
	out, err := git(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range strings.Split(out, "\x00") {
		if n != "" {
			names = append(names, n)
		}
	}
	return names, nil
}

// Resolve returns the commit a ref names in the repository at dir (a
// working tree or a bare clone): the one way the harness resolves a ref, with
// git's environment cleaned (gitEnv) and a ref that looks like an option refused.
func Resolve(ctx context.Context, dir, ref string) (string, error) {
	if strings.HasPrefix(ref, "-") {
		return "", fmt.Errorf("%q is not a ref", ref)
	}
	out, err := git(ctx, dir, "rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("no commit %q: %w", ref, err)
	}
	return strings.TrimSpace(out), nil
}

// resolveOrFetch resolves ref in a clone, fetching it from the origin when
// the clone lacks it (e.g. refs/pull/N/head, or a commit only a branch of
// the origin's remotes holds).
func resolveOrFetch(ctx context.Context, repo, ref string) (string, error) {
	if c, err := Resolve(ctx, repo, ref); err == nil {
		return c, nil
	}
	if _, err := git(ctx, repo, "fetch", "--quiet", "--no-tags", "origin", "--end-of-options", ref); err != nil {
		return "", err
	}
	return Resolve(ctx, repo, "FETCH_HEAD")
}

// clone makes a bare clone of the submission at dst, whatever it is (a path
// or a URL): git then never runs in the learner's own repository, whose
// configuration the learner controls. It returns the clone and how to name
// the submission in reports.
func clone(ctx context.Context, src, dst string) (repo, label string, err error) {
	if strings.HasPrefix(src, "-") {
		return "", "", fmt.Errorf("%q is not a repository", src)
	}
	label = src
	if fi, err := os.Stat(src); err == nil && fi.IsDir() {
		if label, err = filepath.Abs(src); err != nil {
			return "", "", err
		}
	}
	if _, err := git(ctx, filepath.Dir(dst), "clone", "--bare", "--quiet", "--", label, dst); err != nil {
		return "", "", fmt.Errorf("cloning the submission: %w", err)
	}
	return dst, label, nil
}

// lsTree lists the files of a commit, with their sizes (read from the
// objects' headers: no file is read).
func lsTree(ctx context.Context, repo, commit string) (map[string]entry, error) {
	out, err := git(ctx, repo, "ls-tree", "-r", "-l", "-z", "--full-tree", commit)
	if err != nil {
		return nil, err
	}
	files := map[string]entry{}
	for _, rec := range strings.Split(out, "\x00") {
		// "<mode> <type> <object> <size>\t<path>", the size "-" for a submodule
		meta, name, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if len(f) != 4 {
			return nil, fmt.Errorf("git ls-tree: unexpected line %q", rec)
		}
		size := int64(-1)
		if f[3] != "-" {
			if size, err = strconv.ParseInt(f[3], 10, 64); err != nil {
				return nil, fmt.Errorf("git ls-tree: unexpected size in %q", rec)
			}
		}
		files[name] = entry{mode: f[0], blob: f[2], size: size}
	}
	return files, nil
}

// upstreamHistory returns the IDs of every object reachable from commit:
// each version of each file the upstream ever had.
func upstreamHistory(ctx context.Context, repo, commit string) (map[string]bool, error) {
	out, err := git(ctx, repo, "rev-list", "--objects", commit)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if id, _, _ := strings.Cut(line, " "); id != "" {
			ids[id] = true
		}
	}
	return ids, nil
}

// pathsEverAdded returns every path some commit reachable from commit added.
func pathsEverAdded(ctx context.Context, repo, commit string) (map[string]bool, error) {
	names, err := gitList(ctx, repo, "log", "--format=", "--name-only", "--diff-filter=A", "--no-renames", "-z", commit)
	if err != nil {
		return nil, err
	}
	paths := map[string]bool{}
	for _, n := range names {
		paths[strings.TrimSpace(n)] = true
	}
	return paths, nil
}

// extract writes the files of a commit for which keep is true under dst,
// through git archive. Only directories and regular files are written;
// anything else (a symbolic link) is refused, as is any name that would land
// outside dst, and, with limits (a submission's), a file or a total beyond
// them.
func extract(ctx context.Context, repo, commit, dst string, keep func(name string) bool, limits *extractLimits, pathspec ...string) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd, failed := gitCmd(ctx, repo, append([]string{"archive", "--format=tar", commit}, pathspec...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("git archive: %w", err)
	}
	n, werr := untar(stdout, dst, keep, limits)
	if werr != nil {
		cancel()
		_ = cmd.Wait()
		return n, werr
	}
	if err := cmd.Wait(); err != nil {
		return n, failed(err)
	}
	return n, nil
}

func untar(r io.Reader, dst string, keep func(name string) bool, limits *extractLimits) (int, error) {
	tr := tar.NewReader(r)
	n := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("reading the archive: %w", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue // git's pax header with the commit ID
		}
		name := path.Clean(strings.TrimSuffix(h.Name, "/"))
		if name == "." || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return n, fmt.Errorf("the archive holds %q, outside the tree", h.Name)
		}
		if !keep(name) {
			continue
		}
		target := filepath.Join(dst, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return n, err
			}
		case tar.TypeReg:
			if err := limits.take(name, h.Size); err != nil {
				return n, err
			}
			if err := writeFrom(tr, target, h.FileInfo().Mode()); err != nil {
				return n, err
			}
			n++
		default:
			return n, fmt.Errorf("%s is not a regular file (tar type %q)", name, h.Typeflag)
		}
	}
}

func writeFrom(r io.Reader, target string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", target, err)
	}
	return f.Close()
}

// Export writes the directories and regular files of commit under pathspec
// (all of it when none) below dst, through git archive: nothing of the
// working tree.
func Export(ctx context.Context, repo, commit, dst string, pathspec ...string) error {
	_, err := extract(ctx, repo, commit, dst, func(string) bool { return true }, nil, pathspec...)
	return err
}
