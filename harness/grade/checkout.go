package grade

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/10xdev/gw10/harness/report"
)

// Checkout is one directory of a submission at one commit, extracted for
// reading (make diff SUBMISSION=…): nothing of it runs. Remove it when done.
type Checkout struct {
	// Dir holds the extracted directory (Dir/<step>/…).
	Dir string
	// Revision names the submission and the commit read.
	Revision report.Revision
	work     string
}

// Remove deletes the checkout and the clone it came from.
func (c *Checkout) Remove() error { return os.RemoveAll(c.work) }

// FetchStep extracts step/ of the submission (a path or git URL) at ref
// (default HEAD; a branch, tag, commit or a ref only the origin holds, such
// as refs/pull/N/head) into a new temporary directory. It goes through a
// bare clone and git archive, as grading does: no hook or configuration of
// the learner's repository runs, and symbolic links are refused.
func FetchStep(ctx context.Context, submission, ref, step string) (*Checkout, error) {
	step = path.Clean(filepath.ToSlash(step))
	if step == "." || strings.HasPrefix(step, "../") || path.IsAbs(step) {
		return nil, fmt.Errorf("the step %q is not a directory inside the workbook", step)
	}
	work, err := os.MkdirTemp("", "gw10-diff-")
	if err != nil {
		return nil, fmt.Errorf("creating a scratch directory: %w", err)
	}
	c := &Checkout{Dir: filepath.Join(work, "submission"), work: work}
	if err := c.fetch(ctx, submission, orHEAD(ref), step); err != nil {
		_ = c.Remove()
		return nil, err
	}
	return c, nil
}

func (c *Checkout) fetch(ctx context.Context, submission, ref, step string) error {
	repo, label, err := clone(ctx, submission, filepath.Join(c.work, "submission.git"))
	if err != nil {
		return err
	}
	commit, err := resolveOrFetch(ctx, repo, ref)
	if err != nil {
		return fmt.Errorf("the submission %s at %s: %w", label, ref, err)
	}
	c.Revision = report.Revision{Repository: label, Ref: ref, Commit: commit}
	files, err := lsTree(ctx, repo, commit)
	if err != nil {
		return err
	}
	found := false
	for name, e := range files {
		if !under(name, step) {
			continue
		}
		found = true
		if e.mode != "100644" && e.mode != "100755" {
			return fmt.Errorf("the submission %s at %s: %s is a symbolic link or submodule, which could reach outside %s/", label, short(commit), name, step)
		}
	}
	if !found {
		return fmt.Errorf("the submission %s at %s has no %s/", label, short(commit), step)
	}
	if reason := sizeProblems(step, treeSizes(files, step, "")); reason != "" {
		return fmt.Errorf("the submission %s at %s: %s", label, short(commit), reason)
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	if _, err := extract(ctx, repo, commit, c.Dir, func(name string) bool { return under(name, step) }, &extractLimits{}, "--", step); err != nil {
		return fmt.Errorf("extracting %s/ of the submission %s at %s: %w", step, label, short(commit), err)
	}
	return nil
}
