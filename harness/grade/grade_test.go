package grade

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name               string
		changed            []string
		outside, forbidden []string
	}{
		{"only the step", []string{"step01/internal/controller/edgeroute_controller.go", "step01/api/v1/edgeroute_types.go"}, []string{}, []string{}},
		{"docs are allowed but listed", []string{"README.md", "docs/notes.md", "step01/x.go"}, []string{"README.md", "docs/notes.md"}, []string{}},
		{"the harness is protected", []string{"harness/checks/step01.go"}, []string{"harness/checks/step01.go"}, []string{"harness/checks/step01.go"}},
		{"solutions, Makefile and go.work are protected", []string{"solutions/step01/x.go", "Makefile", "go.work", "go.work.sum"},
			[]string{"solutions/step01/x.go", "Makefile", "go.work", "go.work.sum"}, []string{"solutions/step01/x.go", "Makefile", "go.work", "go.work.sum"}},
		{"a step module's own Makefile is the learner's", []string{"step01/Makefile"}, []string{}, []string{}},
		{"a look-alike name is not protected", []string{"harnessing.md", "Makefile.local"}, []string{"harnessing.md", "Makefile.local"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outside, forbidden := Classify(tt.changed, "step01")
			if !reflect.DeepEqual(outside, tt.outside) || !reflect.DeepEqual(forbidden, tt.forbidden) {
				t.Fatalf("got outside=%v forbidden=%v, want %v %v", outside, forbidden, tt.outside, tt.forbidden)
			}
		})
	}
}

func run(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckAgainstAnUpstreamBase builds an upstream and a learner's fork of it.
func TestCheckAgainstAnUpstreamBase(t *testing.T) {
	ctx := context.Background()
	upstream := t.TempDir()
	run(t, upstream, "git", "init", "-q", "-b", "main")
	write(t, upstream, "harness/h.go", "package h\n")
	write(t, upstream, "step01/s.go", "package s\n")
	write(t, upstream, "README.md", "hi\n")
	run(t, upstream, "git", "add", "-A")
	run(t, upstream, "git", "commit", "-qm", "workbook")

	fork := filepath.Join(t.TempDir(), "fork")
	run(t, filepath.Dir(fork), "git", "clone", "-q", upstream, fork)
	run(t, fork, "git", "remote", "rename", "origin", "upstream")

	// The learner's work, committed: gradable.
	write(t, fork, "step01/s.go", "package s\n// solved\n")
	write(t, fork, "README.md", "my notes\n")
	run(t, fork, "git", "commit", "-qam", "solve")
	in, err := Check(ctx, fork, "", "step01")
	if err != nil {
		t.Fatal(err)
	}
	if !in.Gradable || !reflect.DeepEqual(in.Changed, []string{"README.md"}) {
		t.Fatalf("after solving: %+v", in)
	}

	// A harness edit, even uncommitted, is not gradable.
	write(t, fork, "harness/h.go", "package h\n// always pass\n")
	in, err = Check(ctx, fork, "", "step01")
	if err != nil {
		t.Fatal(err)
	}
	if in.Gradable || !reflect.DeepEqual(in.Forbidden, []string{"harness/h.go"}) {
		t.Fatalf("after editing the harness: %+v", in)
	}

	// So is a new file under solutions/, untracked.
	run(t, fork, "git", "checkout", "--", "harness/h.go")
	write(t, fork, "solutions/step01/extra.go", "package x\n")
	in, err = Check(ctx, fork, "upstream/main", "step01")
	if err != nil {
		t.Fatal(err)
	}
	if in.Gradable || !reflect.DeepEqual(in.Forbidden, []string{"solutions/step01/extra.go"}) {
		t.Fatalf("after adding to solutions/: %+v", in)
	}
}
