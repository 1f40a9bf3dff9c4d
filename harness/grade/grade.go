// Package grade assembles the tree a submission is graded in: a pristine
// copy of the upstream workbook at a pinned commit, with only the step's
// directory taken from the submission. Nothing else of the submission — its
// harness, its Makefile, its workflows — is used, so nothing else can change
// its grade; what differs from the upstream is listed as ignored.
//
// Submissions are compared with the upstream by content (git blob IDs), not
// by history: a fork and a template copy with no shared history grade alike.
package grade

import (
	"context"
	"crypto/sha1"
	"fmt"
	"github.com/10xdev/gw10/harness/words"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/10xdev/gw10/harness/report"
)

// Options say what to grade against what.
type Options struct {
	// Root is the upstream's git checkout (the instructor's workbook).
	Root string
	// UpstreamRef is the upstream commit to grade in (default HEAD).
	UpstreamRef string
	// Submission is a path or git URL of the learner's repository; empty
	// grades the working tree of Root itself (feedback, not official).
	Submission string
	// SubmissionRef is the submission's commit to grade (default HEAD).
	SubmissionRef string
	// Step is the directory taken from the submission, e.g. "step01".
	Step string
	// Leave are upstream directories the grading tree does not hold (the
	// reference solutions: learner code must find none to import or copy).
	Leave []string
}

// Tree is an assembled grading tree. Remove it when done.
type Tree struct {
	// Dir is the workbook root to run the harness in; StepDir the step in it.
	Dir, StepDir string
	Grading      report.Grading
	// Allowed are the modules the step's code may import from: its own and
	// the upstream go.mod's requirements (see ForeignImports).
	Allowed []string
	work    string
	// nested says which modules the step holds below its go.mod, or "".
	nested string
}

// Remove deletes the tree and everything fetched for it.
func (t *Tree) Remove() error { return os.RemoveAll(t.work) }

// Assemble builds the grading tree in a new temporary directory. An error
// means nothing could be graded (a bad ref, an unreachable repository); a
// submission that can be read but not graded is a Tree whose Grading says
// why.
func Assemble(ctx context.Context, opts Options) (*Tree, error) {
	step := path.Clean(filepath.ToSlash(opts.Step))
	if step == "." || strings.HasPrefix(step, "../") || path.IsAbs(step) {
		return nil, fmt.Errorf("the step %q is not a directory inside the workbook", opts.Step)
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, err
	}
	upRef := orHEAD(opts.UpstreamRef)
	upCommit, err := Resolve(ctx, root, upRef)
	if err != nil {
		return nil, fmt.Errorf("the upstream %s at %s: %w", root, upRef, err)
	}
	work, err := os.MkdirTemp("", "gw10-grade-")
	if err != nil {
		return nil, fmt.Errorf("creating the grading directory: %w", err)
	}
	t := &Tree{Dir: filepath.Join(work, "workbook"), work: work}
	t.StepDir = filepath.Join(t.Dir, filepath.FromSlash(step))
	t.Grading = report.Grading{
		Gradable: true,
		Upstream: report.Revision{Repository: root, Ref: upRef, Commit: upCommit},
	}
	if err := t.assemble(ctx, opts, root, step); err != nil {
		_ = t.Remove()
		return nil, err
	}
	if t.Grading.Gradable {
		if err := t.checkModule(ctx, root, step); err != nil {
			_ = t.Remove()
			return nil, err
		}
	}
	// After the go.mod gate, whose reason names what a go.mod redirects.
	if t.Grading.Gradable && t.nested != "" {
		t.notGradable(t.nested)
	}
	sort.Strings(t.Grading.Ignored)
	return t, nil
}

func (t *Tree) assemble(ctx context.Context, opts Options, root, step string) error {
	up := t.Grading.Upstream
	// The upstream, all but the step (and what opts leaves out).
	keep := func(name string) bool {
		for _, dir := range opts.Leave {
			if under(name, dir) {
				return false
			}
		}
		return !under(name, step)
	}
	if _, err := extract(ctx, root, up.Commit, t.Dir, keep, nil); err != nil {
		return fmt.Errorf("extracting the upstream at %s: %w", words.ShortCommit(up.Commit), err)
	}
	if err := dropFromWorkspace(t.Dir, underAny(opts.Leave)); err != nil {
		return err
	}
	if opts.Submission == "" {
		return t.fromWorkingTree(ctx, root, step)
	}
	return t.fromRepository(ctx, opts, step)
}

// fromRepository takes the step of a committed submission: the instructor's
// grading.
func (t *Tree) fromRepository(ctx context.Context, opts Options, step string) error {
	t.Grading.Official = true
	repo, label, err := clone(ctx, opts.Submission, filepath.Join(t.work, "submission.git"))
	if err != nil {
		return err
	}
	ref := orHEAD(opts.SubmissionRef)
	commit, err := resolveOrFetch(ctx, repo, ref)
	if err != nil {
		return fmt.Errorf("the submission %s at %s: %w", label, ref, err)
	}
	t.Grading.Submission = report.Revision{Repository: label, Ref: ref, Commit: commit}

	upFiles, err := lsTree(ctx, t.Grading.Upstream.Repository, t.Grading.Upstream.Commit)
	if err != nil {
		return err
	}
	subFiles, err := lsTree(ctx, repo, commit)
	if err != nil {
		return err
	}
	history, err := upstreamHistory(ctx, t.Grading.Upstream.Repository, t.Grading.Upstream.Commit)
	if err != nil {
		return err
	}
	had, err := pathsEverAdded(ctx, repo, commit)
	if err != nil {
		return err
	}
	// What make template writes in place of the guides it leaves out is the
	// upstream's own, not the learner's change.
	for _, o := range LearnerCopyOmits(nil) {
		if o.Stub != "" {
			history[blobID(o.Stub)] = true
		}
	}
	// So is a Markdown file without its upstream-only regions, as make
	// template writes it.
	for name := range upFiles {
		if !strings.HasSuffix(name, ".md") {
			continue
		}
		if text, err := git(ctx, t.Grading.Upstream.Repository, "show", t.Grading.Upstream.Commit+":"+name); err == nil && strings.Contains(text, upstreamOnlyBegin) {
			if learners, err := upstreamOnlyRemoved(text); err == nil {
				history[blobID(learners)] = true
			}
		}
	}
	// So is the go.work it writes without the solutions (that of the upstream
	// commit graded against: a copy of an older one may list its go.work).
	if work, err := git(ctx, t.Grading.Upstream.Repository, "show", t.Grading.Upstream.Commit+":go.work"); err == nil {
		if learners, err := workspaceWithout("go.work", []byte(work), underAny(opts.Leave)); err == nil {
			history[blobID(string(learners))] = true
		}
	}
	t.Grading.Ignored = changedOutside(upFiles, subFiles, step, history, had)
	if reason := refuse(subFiles, step); reason != "" {
		t.notGradable(reason)
		return nil
	}
	// bin/ is what a build makes: the grader builds its own. A file
	// committed there is not taken (a //go:embed of a script there ran code
	// that no view of make diff showed); it is listed with the ignored.
	bin := step + "/bin"
	for name := range subFiles {
		if under(name, bin) {
			t.Grading.Ignored = append(t.Grading.Ignored, name)
		}
	}
	if _, err := extract(ctx, repo, commit, t.Dir, func(name string) bool { return under(name, step) && !under(name, bin) }, &extractLimits{}, "--", step); err != nil {
		return fmt.Errorf("extracting %s/ of the submission: %w", step, err)
	}
	var names []string
	for name := range subFiles {
		names = append(names, name)
	}
	t.nested = nestedModules(step, names)
	return nil
}

// refuse says why a submission's step cannot be graded, or "".
func refuse(files map[string]entry, step string) string {
	if _, ok := files[step+"/go.mod"]; !ok {
		return fmt.Sprintf("the submission has no %s/go.mod", step)
	}
	var special []string
	for name, e := range files {
		if under(name, step) && e.mode != "100644" && e.mode != "100755" {
			special = append(special, name)
		}
	}
	if len(special) > 0 {
		sort.Strings(special)
		return fmt.Sprintf("%s/ holds symbolic links or submodules, which could reach outside it: %s",
			step, report.InlineList(special, 5))
	}
	// Sizes from the tree, before anything is extracted; bin/ is never taken.
	return sizeProblems(step, treeSizes(files, step, step+"/bin"))
}

// nestedModules says which go.mod files below step/go.mod the step holds, or
// "": the step is graded as one module, the workbook's, and a nested one is
// neither part of it nor of the workspace (the go command then fails with
// "directory prefix . does not contain modules listed in go.work", naming
// no file). bin/ is never taken.
func nestedModules(step string, files []string) string {
	var nested []string
	for _, name := range files {
		if under(name, step) && !under(name, step+"/bin") && path.Base(name) == "go.mod" && name != step+"/go.mod" {
			nested = append(nested, name)
		}
	}
	if len(nested) == 0 {
		return ""
	}
	sort.Strings(nested)
	return fmt.Sprintf("%s/ holds a module of its own below %s/go.mod, which the grade cannot build as part of %s/ "+
		"(move its code into the step's module, or out of %s/): %s", step, step, step, step, report.InlineList(nested, 5))
}

// checkModule refuses a step whose go.mod is not the upstream's in what
// decides which code builds (module, replace, toolchain, requirements).
func (t *Tree) checkModule(ctx context.Context, root, step string) error {
	upMod, err := git(ctx, root, "show", t.Grading.Upstream.Commit+":"+step+"/go.mod")
	if err != nil {
		return fmt.Errorf("reading the upstream's %s/go.mod: %w", step, err)
	}
	subMod, err := os.ReadFile(filepath.Join(t.StepDir, "go.mod"))
	if err != nil {
		return fmt.Errorf("reading the submission's %s/go.mod: %w", step, err)
	}
	problems, err := moduleProblems([]byte(upMod), subMod, step)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		t.notGradable(fmt.Sprintf("%s/go.mod changes what builds the grade; it must keep the workbook's module path and requirements, with no replace, toolchain or godebug lines:\n  - %s",
			step, strings.Join(problems, "\n  - ")))
		return nil
	}
	t.Allowed, err = AllowedModules([]byte(upMod))
	return err
}

// Refuse marks the tree not gradable, with why (e.g. foreign imports found
// after assembly).
func (t *Tree) Refuse(reason string) { t.notGradable(reason) }

func (t *Tree) notGradable(reason string) {
	t.Grading.Gradable = false
	t.Grading.Reason = reason
}

// fromWorkingTree takes the step of Root's own working tree, uncommitted
// changes included: a learner's feedback run.
func (t *Tree) fromWorkingTree(ctx context.Context, root, step string) error {
	head, err := Resolve(ctx, root, "HEAD")
	if err != nil {
		return fmt.Errorf("the checkout %s: %w", root, err)
	}
	status, err := git(ctx, root, "status", "--porcelain", "--", step)
	if err != nil {
		return err
	}
	t.Grading.Submission = report.Revision{Repository: root, Ref: "HEAD", Commit: head, Uncommitted: strings.TrimSpace(status) != ""}
	// Outside the step: what the working tree changed against the upstream
	// commit, by content, untracked files included.
	changed, err := gitList(ctx, root, "diff", "--name-only", "--no-renames", "-z", t.Grading.Upstream.Commit, "--")
	if err != nil {
		return err
	}
	untracked, err := gitList(ctx, root, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return err
	}
	for _, f := range dedupe(append(changed, untracked...)) {
		if !under(f, step) {
			t.Grading.Ignored = append(t.Grading.Ignored, f)
		}
	}
	files, err := gitList(ctx, root, "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", step)
	if err != nil {
		return err
	}
	var special []string
	var sizes []fileSize
	regular := map[string]os.FileMode{}
	for _, f := range dedupe(files) {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f)))
		switch {
		case os.IsNotExist(err):
			continue // deleted in the working tree
		case err != nil:
			return err
		case !fi.Mode().IsRegular():
			special = append(special, f)
			continue
		}
		regular[f] = fi.Mode()
		sizes = append(sizes, fileSize{name: f, size: fi.Size()})
	}
	if reason := sizeProblems(step, sizes); reason != "" && len(special) == 0 {
		t.notGradable(reason)
		return nil
	}
	names := make([]string, 0, len(sizes))
	for _, f := range sizes {
		names = append(names, f.name)
	}
	t.nested = nestedModules(step, names)
	for f, mode := range regular {
		if err := copyFile(filepath.Join(root, filepath.FromSlash(f)), filepath.Join(t.Dir, filepath.FromSlash(f)), mode); err != nil {
			return err
		}
	}
	if len(special) > 0 {
		t.notGradable(fmt.Sprintf("%s/ holds symbolic links or other special files, which could reach outside it: %s",
			step, report.InlineList(special, 5)))
		return nil
	}
	if _, err := os.Stat(filepath.Join(t.StepDir, "go.mod")); err != nil {
		t.notGradable(fmt.Sprintf("the checkout has no %s/go.mod", step))
	}
	return nil
}

// changedOutside lists the paths outside the step that the submission
// changed: content the upstream never had at any commit (so a copy of an
// older upstream does not list the files the upstream changed since), and
// files the submission once had and removed (so files the upstream added
// since are not listed either).
func changedOutside(upstream, submission map[string]entry, step string, upstreamBlobs, submissionPaths map[string]bool) []string {
	var out []string
	for name, e := range submission {
		if !under(name, step) && upstream[name] != e && !upstreamBlobs[e.blob] {
			out = append(out, name)
		}
	}
	for name := range upstream {
		if _, ok := submission[name]; !ok && !under(name, step) && submissionPaths[name] {
			out = append(out, name)
		}
	}
	return out
}

// blobID is git's (SHA-1) object name of a file holding content.
func blobID(content string) string {
	return fmt.Sprintf("%x", sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(content), content))))
}

func under(name, dir string) bool { return name == dir || strings.HasPrefix(name, dir+"/") }

func orHEAD(ref string) string {
	if ref == "" {
		return "HEAD"
	}
	return ref
}

func dedupe(items []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range items {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func copyFile(src, dst string, mode os.FileMode) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	return writeFrom(f, dst, mode)
}
