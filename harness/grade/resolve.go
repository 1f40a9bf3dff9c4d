package grade

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// ResolveSubmission says which commit ref names in a submission (a path, a
// git URL or a bundle), resolved as Assemble resolves it: in a bare clone of
// its own (git never runs in the learner's repository), fetching the ref
// when the clone lacks it. The gradebook asks it before it grades, to find
// a grade of that commit it already has.
func ResolveSubmission(ctx context.Context, submission, ref string) (string, error) {
	work, err := os.MkdirTemp("", "gw10-resolve-")
	if err != nil {
		return "", fmt.Errorf("a directory to resolve the submission in: %w", err)
	}
	defer os.RemoveAll(work)
	repo, label, err := clone(ctx, submission, filepath.Join(work, "submission.git"))
	if err != nil {
		return "", err
	}
	commit, err := resolveOrFetch(ctx, repo, orHEAD(ref))
	if err != nil {
		return "", fmt.Errorf("the submission %s at %s: %w", label, orHEAD(ref), err)
	}
	return commit, nil
}
