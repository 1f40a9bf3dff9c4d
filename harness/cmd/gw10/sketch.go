package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
)

// runSketch saves the step's sketch over the file of the learner's module
// it replaces, where the chapter starts. It never overwrites edits of the
// learner's own unless --force is given.
func runSketch(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sketch", flag.ContinueOnError)
	stepDir := fs.String("step", steps.Default().Dir, "the step whose sketch to save")
	force := fs.String("force", "", "non-empty: overwrite the file even if it holds uncommitted edits")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	root, err := filepath.Abs(".")
	if err != nil {
		return err
	}
	st, err := steps.ForDir(root, *stepDir)
	if err != nil {
		return err
	}
	msg, err := saveSketch(ctx, root, st, *force != "")
	if err != nil {
		return err
	}
	fmt.Println(msg)
	return nil
}

// saveSketch writes st's sketch over its file and says what it did. A file
// that already holds the sketch is left as it is; one with uncommitted
// edits (git status) is refused unless force, and so is one git cannot
// vouch for.
func saveSketch(ctx context.Context, root string, st step.Step, force bool) (string, error) {
	if st.Sketch == "" || st.SketchOver == "" {
		return "", fmt.Errorf("step %s has no sketch", st.Name)
	}
	sketch, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(st.Sketch)))
	if err != nil {
		return "", fmt.Errorf("reading the sketch: %w", err)
	}
	rel := filepath.ToSlash(filepath.Join(st.Dir, filepath.FromSlash(st.SketchOver)))
	target := filepath.Join(root, filepath.FromSlash(rel))
	restore := fmt.Sprintf("git checkout %s brings the scaffold's file back.", rel)
	current, err := os.ReadFile(target)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("reading %s: %w", rel, err)
	}
	if bytes.Equal(current, sketch) {
		return fmt.Sprintf("%s already holds the sketch (%s); %s", rel, st.Sketch, restore), nil
	}
	if !force {
		cmd := exec.CommandContext(ctx, "git", "status", "--porcelain", "--", rel)
		cmd.Dir = root
		out, err := cmd.Output()
		switch {
		case err != nil:
			return "", fmt.Errorf("git cannot tell whether %s holds edits of yours (%v), so the sketch is not saved over it; make sketch FORCE=1 saves it anyway", rel, err)
		case len(bytes.TrimSpace(out)) > 0:
			return "", fmt.Errorf("%s holds edits of yours that are not committed; saving the sketch would lose them. Commit them, or put them aside with git stash, then run make sketch again (FORCE=1 overwrites them)", rel)
		}
	}
	if err := os.WriteFile(target, sketch, 0o644); err != nil {
		return "", fmt.Errorf("saving the sketch over %s: %w", rel, err)
	}
	return fmt.Sprintf("saved the card's sketch (%s) over %s; %s", st.Sketch, rel, restore), nil
}
