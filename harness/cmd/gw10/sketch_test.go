package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/step"
)

// TestMakeSketchNeverLosesTheLearnersEdits: the sketch lands over a
// committed file, and again over itself; over uncommitted edits, or where
// git cannot tell, it is refused with what to do, and the file keeps its
// edits, unless forced.
func TestMakeSketchNeverLosesTheLearnersEdits(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	st := step.Step{Name: "stepX", Dir: "stepX", Sketch: "docs/stepX-sketch.go.txt", SketchOver: "internal/controller/c.go"}
	const scaffold, sketch, edits = "package controller // scaffold\n", "package controller // sketch\n", "package controller // mine\n"
	setup := func(t *testing.T, git bool) (root, file string) {
		root = t.TempDir()
		file = filepath.Join(root, "stepX", "internal", "controller", "c.go")
		for path, text := range map[string]string{file: scaffold, filepath.Join(root, "docs", "stepX-sketch.go.txt"): sketch} {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if git {
			for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "scaffold"}} {
				cmd := exec.Command("git", args...)
				cmd.Dir = root
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
		}
		return root, file
	}
	holds := func(t *testing.T, file, want string) {
		t.Helper()
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s holds %q, want %q", file, got, want)
		}
	}

	t.Run("committed", func(t *testing.T) {
		root, file := setup(t, true)
		msg, err := saveSketch(ctx, root, st, false)
		if err != nil || !strings.Contains(msg, "git checkout stepX/internal/controller/c.go") {
			t.Fatalf("saveSketch: %q, %v; want it saved, saying how to bring the scaffold back", msg, err)
		}
		holds(t, file, sketch)
		// Once saved, the file differs from git's, and is the sketch: again is no error.
		if msg, err := saveSketch(ctx, root, st, false); err != nil || !strings.Contains(msg, "already holds the sketch") {
			t.Errorf("saveSketch over the sketch: %q, %v", msg, err)
		}
	})
	t.Run("edited", func(t *testing.T) {
		root, file := setup(t, true)
		if err := os.WriteFile(file, []byte(edits), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := saveSketch(ctx, root, st, false)
		if err == nil || !strings.Contains(err.Error(), "git stash") || !strings.Contains(err.Error(), "FORCE=1") {
			t.Fatalf("saveSketch over uncommitted edits: %v; want a refusal saying what to do", err)
		}
		holds(t, file, edits)
		if _, err := saveSketch(ctx, root, st, true); err != nil {
			t.Fatalf("saveSketch forced: %v", err)
		}
		holds(t, file, sketch)
	})
	t.Run("no git", func(t *testing.T) {
		root, file := setup(t, false)
		if _, err := saveSketch(ctx, root, st, false); err == nil || !strings.Contains(err.Error(), "FORCE=1") {
			t.Fatalf("saveSketch where git cannot tell: %v; want a refusal", err)
		}
		holds(t, file, scaffold)
	})
}
