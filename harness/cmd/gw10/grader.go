package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/10xdev/gw10/harness/grade"
)

// sourceCommit is the commit this binary was built from, stamped by the
// grader's clean build (-ldflags -X main.sourceCommit=…). It is empty for a
// build of a working tree (make's bin/gw10), whose source no commit names.
var sourceCommit string

// graderReexecEnv marks a grader started by gradeCommand from its clean
// build, so that it never builds and starts itself again.
const graderReexecEnv = "GW10_GRADER_FROM_EXPORT"

// gradeCommand is `gw10 grade`. An official grade (--submission) runs the
// checks compiled into the grader, so the grader must be the upstream
// commit's, not whatever the working tree holds (a file planted in harness/
// would otherwise grade the next submission): unless this binary was built
// from that commit, it builds the grader from a clean export of it
// (`git archive`, cached by commit) and hands over to it.
func gradeCommand(ctx context.Context, args []string) error {
	submission, root, upstreamRef := gradeTargets(args)
	if submission == "" || os.Getenv(graderReexecEnv) != "" {
		return runGradeAs(ctx, args, sourceCommit)
	}
	commit, err := grade.Resolve(ctx, root, upstreamRef)
	if err != nil {
		return fmt.Errorf("the upstream's commit to grade in: %w", err)
	}
	if commit == sourceCommit {
		return runGradeAs(ctx, args, sourceCommit)
	}
	return handOverToCleanGrader(ctx, root, commit, "grade", args)
}

// handOverToCleanGrader builds the grader from a clean export of commit
// (cleanGrader, kept under the user's cache) and replaces this process with
// it, running the same subcommand with the same arguments: `gw10 grade` and
// `gw10 gradebook` grade with the upstream commit's checks only.
func handOverToCleanGrader(ctx context.Context, root, commit, subcommand string, args []string) error {
	fmt.Printf("gw10: building the grader from a clean export of the upstream at %.12s (not from the working tree) ...\n", commit)
	cache, err := os.UserCacheDir()
	if err != nil {
		return fmt.Errorf("a place for the grader's build: %w", err)
	}
	bin, err := cleanGrader(ctx, root, commit, filepath.Join(cache, "gw10", "grader"))
	if err != nil {
		return fmt.Errorf("building the grader from %.12s: %w", commit, err)
	}
	argv := append([]string{bin, subcommand}, args...)
	env := append(os.Environ(), graderReexecEnv+"=1")
	return fmt.Errorf("starting the grader built from %.12s: %w", commit, syscall.Exec(bin, argv, env))
}

// gradeTargets reads --submission, --root and --upstream-ref from grade's
// arguments (the flag set parses them again, with the rest).
func gradeTargets(args []string) (submission, root, upstreamRef string) {
	root, upstreamRef = ".", "HEAD"
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		switch name {
		case "submission":
			submission = value
		case "root":
			root = value
		case "upstream-ref":
			upstreamRef = value
		}
	}
	return submission, root, upstreamRef
}

// cleanGrader is the grader built from commit's harness/, exported with
// `git archive` (nothing of the working tree), stamped with the commit and
// kept under dir by commit. Only the harness's own packages
// compile again: its dependencies' paths are the module cache's, so the
// build cache serves them.
func cleanGrader(ctx context.Context, root, commit, dir string) (string, error) {
	bin := filepath.Join(dir, commit, "gw10")
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, nil
	}
	src, err := os.MkdirTemp("", "gw10-grader-src-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	if err := grade.Export(ctx, root, commit, src, "harness"); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	tmp := bin + ".tmp"
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags", "-X main.sourceCommit="+commit, "-o", tmp, "./cmd/gw10")
	cmd.Dir = filepath.Join(src, "harness")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build in the export: %w\n%s", err, out)
	}
	return bin, os.Rename(tmp, bin)
}
