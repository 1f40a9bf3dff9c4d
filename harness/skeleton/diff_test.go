package skeleton

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTheSolutionViewHidesTheRegionMarkers(t *testing.T) {
	d, err := Diff(DiffOptions{
		Solution: filepath.Join(root, st.SolutionDir), Learner: filepath.Join(root, st.Dir),
		SolutionLabel: st.SolutionDir, LearnerLabel: st.Dir,
		SolutionModule: solutionModule, LearnerModule: learnerModule, HideMarkers: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if d == "" {
		t.Fatal("no diff: the skeleton has no exercises")
	}
	for _, line := range strings.Split(d, "\n") {
		if strings.Contains(line, "//gw10:") {
			t.Errorf("the diff shows a region marker: %q", line)
		}
	}
}

func TestHideMarkers(t *testing.T) {
	src := "package x\n\t//gw10:begin a\n\t//gw10:todo do it\n\treturn 1\n\t//gw10:end\n"
	if got, want := hideMarkers(src), "package x\n\treturn 1\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestCodeDressedAsAMarkerShows: lines that start with //gw10: inside a
// block comment, with code after its end, are code (a submission can hide
// an exec and an import from make diff this way); only a line whose one
// token is a //gw10: line comment is a marker.
func TestCodeDressedAsAMarkerShows(t *testing.T) {
	src := "package main\n\nimport (\n\t\"os\" /*\n//gw10:begin */ \"syscall\" /*\n*/\n)\n\nfunc main() { /*\n//gw10:stub */ _ = syscall.Exec(\"/run/lock/m\", os.Args, nil) /*\n*/\n\t//gw10:end\n}\n"
	got := hideMarkers(src)
	for _, want := range []string{"//gw10:begin */ \"syscall\" /*", "//gw10:stub */ _ = syscall.Exec("} {
		if !strings.Contains(got, want) {
			t.Errorf("hidden: %q\n%s", want, got)
		}
	}
	if strings.Contains(got, "\t//gw10:end") {
		t.Errorf("a real marker shows:\n%s", got)
	}
}

// TestTheLearnerViewShowsOnlyWhatTheLearnerChanged: the pristine skeleton
// shows nothing; an edit in a region, a new file and a removed file show,
// and nothing else does.
func TestTheLearnerViewShowsOnlyWhatTheLearnerChanged(t *testing.T) {
	ctx := context.Background()
	gen := Options{Src: filepath.Join(root, st.SolutionDir), FromModule: solutionModule, ToModule: learnerModule, Step: st.Name}
	learner := filepath.Join(t.TempDir(), st.Dir)
	if err := Generate(ctx, Options{Src: gen.Src, Dst: learner, FromModule: solutionModule, ToModule: learnerModule, Step: st.Name}); err != nil {
		t.Fatal(err)
	}
	d, err := LearnerDiff(ctx, gen, learner, st.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if d != "" {
		t.Fatalf("the pristine skeleton differs from itself:\n%s", d)
	}

	ctrl := filepath.Join(learner, "internal", "controller", "edgeroute_controller.go")
	src, err := os.ReadFile(ctrl)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), "// TODO("+st.Name+"):", "// my attempt:", 1)
	if edited == string(src) {
		t.Fatalf("the skeleton's controller has no TODO(%s)", st.Name)
	}
	if err := os.WriteFile(ctrl, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(learner, "internal", "controller", "mine_test.go"), []byte("package controller\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(learner, "PROJECT")); err != nil {
		t.Fatal(err)
	}
	d, err = LearnerDiff(ctx, gen, learner, st.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var touched []string
	for _, line := range strings.Split(d, "\n") {
		if strings.HasPrefix(line, "+++ ") {
			touched = append(touched, strings.Fields(line)[1])
		}
		if strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++") && strings.TrimSpace(line[1:]) != "" &&
			!strings.Contains(line, "my attempt") && !strings.Contains(line, "package controller") {
			t.Errorf("the learner did not add %q", line)
		}
	}
	for _, want := range []string{st.Dir + "/internal/controller/edgeroute_controller.go", st.Dir + "/internal/controller/mine_test.go", st.Dir + "/PROJECT"} {
		if !strings.Contains(strings.Join(touched, " "), want) {
			t.Errorf("the diff does not show %s:\n%s", want, d)
		}
	}
}
