// Package grade decides whether a learner's submission can be graded: the
// grade must come from the workbook's checks, so the harness, the solutions
// and the build files must be as the upstream left them.
package grade

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"

	"github.com/10xdev/gw10/harness/report"
)

// Protected are the paths a gradable submission leaves untouched: what
// builds and runs the checks, and what they compare against.
var Protected = []string{"harness/", "solutions/", "Makefile", "go.work", "go.work.sum"}

// DefaultBases are tried in order when no base is given: the upstream's
// branch when the fork has it as a remote, then origin's.
var DefaultBases = []string{"upstream/main", "origin/main"}

// Classify splits the changed files into those outside the step and, of
// those, the ones that make the submission not gradable.
func Classify(changed []string, step string) (outside, forbidden []string) {
	outside, forbidden = []string{}, []string{}
	prefix := strings.TrimSuffix(step, "/") + "/"
	for _, f := range changed {
		if strings.HasPrefix(f, prefix) {
			continue
		}
		outside = append(outside, f)
		for _, p := range Protected {
			if f == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(f, p)) {
				forbidden = append(forbidden, f)
				break
			}
		}
	}
	return outside, forbidden
}

// Check computes the integrity of the checkout at root against base (a git
// revision; empty: the first of DefaultBases that exists, else HEAD). Changes
// count from the merge-base of HEAD and base to the working tree, untracked
// files included.
func Check(ctx context.Context, root, base, step string) (*report.Integrity, error) {
	if base == "" {
		base = "HEAD"
		for _, b := range DefaultBases {
			if _, err := git(ctx, root, "rev-parse", "--verify", "--quiet", b+"^{commit}"); err == nil {
				base = b
				break
			}
		}
	}
	mb, err := git(ctx, root, "merge-base", "HEAD", base)
	if err != nil {
		return nil, fmt.Errorf("finding the merge-base of HEAD and %s: %w", base, err)
	}
	mb = strings.TrimSpace(mb)
	diff, err := git(ctx, root, "diff", "--name-only", "--no-renames", mb)
	if err != nil {
		return nil, fmt.Errorf("listing changes since %s: %w", mb, err)
	}
	untracked, err := git(ctx, root, "ls-files", "--others", "--exclude-standard")
	if err != nil {
		return nil, fmt.Errorf("listing untracked files: %w", err)
	}
	seen := map[string]bool{}
	var changed []string
	for _, f := range strings.Fields(diff + "\n" + untracked) {
		if !seen[f] {
			seen[f] = true
			changed = append(changed, f)
		}
	}
	sort.Strings(changed)
	outside, forbidden := Classify(changed, step)
	return &report.Integrity{Base: mb, Gradable: len(forbidden) == 0, Changed: outside, Forbidden: forbidden}, nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
