package grade

import (
	"context"
	"fmt"
	"github.com/10xdev/gw10/harness/words"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/10xdev/gw10/harness/step"
)

// Omission is a path of the workbook a learner's copy does not hold, and
// why. With a Stub, the copy holds that text in its place (a guide the
// README links to says where it went, instead of a broken link).
type Omission struct {
	Path, Why, Stub string
}

// LearnerCopyOmits lists what `make template` leaves out of a learner's
// copy: every step's reference solution, the harness's test data made of
// the solution's code (mutants and variants are patches of it, quoting its
// regions), the guides that discuss the answers, and the instructor's
// grading workflow.
func LearnerCopyOmits(all []step.Step) []Omission {
	guide := func(title string) string {
		return "# " + title + "\n\nThis guide is not part of a learner's copy of the workbook: it discusses the\n" +
			"answers. It is in the instructor's repository, which `make template` made\nthis copy from.\n"
	}
	var out []Omission
	for _, st := range all {
		out = append(out,
			Omission{Path: filepath.ToSlash(st.SolutionDir), Why: "the reference solution"},
			Omission{Path: "harness/testdata/" + st.Name, Why: "mutants and variants: patches of the solution, quoting its code"})
	}
	return append(out,
		Omission{Path: "docs/instructors.md", Why: "the answer key and the grading guide", Stub: guide("Instructors' guide")},
		Omission{Path: "docs/maintainers.md", Why: "how the workbook is built, with lines of the solution", Stub: guide("Maintainers' guide")},
		Omission{Path: ".github/workflows/grade-submission.yml", Why: "the instructor's grading workflow (it runs only in the grading repository)"},
		Omission{Path: ".github/workflows/grade-cohort.yml", Why: "the instructor's cohort grading workflow (it runs only in the grading repository)"},
		Omission{Path: ".ci", Why: "the workbook's own CI (make test, which needs the solution)"},
	)
}

// TemplateOptions say what learner's copy to write.
type TemplateOptions struct {
	// Root is the instructor's git checkout; Ref its commit to copy (default
	// HEAD: committed content only, never the working tree's edits).
	Root, Ref string
	// Out is the new repository's directory; it must not exist, or be empty.
	Out string
	// Omit is what the copy leaves out (LearnerCopyOmits).
	Omit []Omission
}

// Template writes a learner's copy of the workbook: the files of Root at
// Ref but those omitted, its go.work without the modules omitted, as the first and only commit of a new git
// repository at Out (no history: the upstream's history holds the
// solution). It returns that commit and the upstream commit it copies.
func Template(ctx context.Context, opts TemplateOptions) (commit, upstream string, err error) {
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return "", "", err
	}
	upstream, err = Resolve(ctx, root, orHEAD(opts.Ref))
	if err != nil {
		return "", "", fmt.Errorf("the workbook %s at %s: %w", root, orHEAD(opts.Ref), err)
	}
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return "", "", err
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return "", "", fmt.Errorf("%s exists and is not empty: a learner's copy goes into a new directory", out)
	}
	if strings.HasPrefix(out+string(filepath.Separator), root+string(filepath.Separator)) {
		return "", "", fmt.Errorf("%s is inside the workbook %s: put the learner's copy elsewhere (e.g. TEMPLATE_OUT=../gw10-learner)", out, root)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", "", fmt.Errorf("creating %s: %w", out, err)
	}
	keep := func(name string) bool {
		for _, o := range opts.Omit {
			if under(name, o.Path) {
				return false
			}
		}
		return true
	}
	if _, err := extract(ctx, root, upstream, out, keep, nil); err != nil {
		return "", "", fmt.Errorf("copying the workbook at %s: %w", words.ShortCommit(upstream), err)
	}
	if err := removeEmptyDirs(out); err != nil {
		return "", "", err
	}
	if err := dropFromWorkspace(out, func(dir string) bool { return !keep(dir) }); err != nil {
		return "", "", err
	}
	for _, o := range opts.Omit {
		if o.Stub == "" {
			continue
		}
		if _, err := git(ctx, root, "cat-file", "-e", upstream+":"+o.Path); err != nil {
			continue // not in this commit: nothing to stand in for
		}
		target := filepath.Join(out, filepath.FromSlash(path.Clean(o.Path)))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return "", "", err
		}
		if err := os.WriteFile(target, []byte(o.Stub), 0o644); err != nil {
			return "", "", fmt.Errorf("writing %s: %w", target, err)
		}
	}
	if err := stripUpstreamOnly(out); err != nil {
		return "", "", err
	}
	id := []string{"-c", "user.name=gw10 template", "-c", "user.email=gw10-template@invalid", "-c", "commit.gpgsign=false"}
	for _, args := range [][]string{
		{"init", "--quiet", "--initial-branch=main"},
		{"add", "--all"},
		append(id, "commit", "--quiet", "--no-verify", "-m", "gw10, a learner's copy\n\nMade by make template from the workbook at "+upstream+".\n"),
	} {
		if _, err := git(ctx, out, args...); err != nil {
			return "", "", fmt.Errorf("making %s a git repository: %w", out, err)
		}
	}
	commit, err = Resolve(ctx, out, "HEAD")
	return commit, upstream, err
}

// The lines of a Markdown file of the workbook between these two (each a
// line of its own) are for the instructor's repository only: a README's
// make test, the instructors' targets, links into the guides a learner's
// copy holds as stubs. make template leaves them out of the copy.
const (
	upstreamOnlyBegin = "<!-- upstream-only -->"
	upstreamOnlyEnd   = "<!-- /upstream-only -->"
)

// stripUpstreamOnly removes the upstream-only regions of every Markdown file
// under dir (.git aside). A region left open, or closed without being
// opened, is an error: the copy would lose the rest of the file, or ship
// what it should not.
func stripUpstreamOnly(dir string) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		text, err := upstreamOnlyRemoved(string(data))
		if err != nil {
			rel, _ := filepath.Rel(dir, p)
			return fmt.Errorf("%s: %w", rel, err)
		}
		if text == string(data) {
			return nil
		}
		return os.WriteFile(p, []byte(text), 0o644)
	})
}

// upstreamOnlyRemoved is text without its upstream-only regions (markers
// included).
func upstreamOnlyRemoved(text string) (string, error) {
	var out []string
	open := 0 // the line that opened the current region, 1-based; 0: none
	for i, line := range strings.SplitAfter(text, "\n") {
		switch strings.TrimSpace(line) {
		case upstreamOnlyBegin:
			if open != 0 {
				return "", fmt.Errorf("line %d opens an upstream-only region inside the one line %d opened", i+1, open)
			}
			open = i + 1
			continue
		case upstreamOnlyEnd:
			if open == 0 {
				return "", fmt.Errorf("line %d closes an upstream-only region that was never opened", i+1)
			}
			open = 0
			continue
		}
		if open == 0 {
			out = append(out, line)
		}
	}
	if open != 0 {
		return "", fmt.Errorf("the upstream-only region line %d opens is never closed (%s)", open, upstreamOnlyEnd)
	}
	return strings.Join(out, ""), nil
}

// removeEmptyDirs removes the directories under dir that hold no file (the
// archive's entries for a directory whose files were all left out): an
// empty solutions/ would say there is one.
func removeEmptyDirs(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if err := removeEmptyDirs(sub); err != nil {
			return err
		}
		if left, err := os.ReadDir(sub); err == nil && len(left) == 0 {
			if err := os.Remove(sub); err != nil {
				return err
			}
		}
	}
	return nil
}
