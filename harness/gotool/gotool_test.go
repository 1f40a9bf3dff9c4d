package gotool

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPathBuildsToolsOutsideTheWorkspace: a grading tree's go.work holds the
// submission's module, whose go.mod could replace a tool's code (issue 24:
// `replace sigs.k8s.io/controller-tools => ./hack/ct` made the grader run the
// submission's controller-gen). Path builds the tool from harness/go.mod
// alone: the control shows the workspace would have built the stand-in.
func TestPathBuildsToolsOutsideTheWorkspace(t *testing.T) {
	ctx := context.Background()
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	files := map[string]string{
		"go.work":               "go 1.26.0\n\nuse (\n\t./harness\n\t./step07\n)\n",
		"step07/go.mod":         "module example.com/step07\n\ngo 1.26.0\n\nreplace sigs.k8s.io/controller-tools => ./hack/ct\n",
		"step07/hack/ct/go.mod": "module sigs.k8s.io/controller-tools\n\ngo 1.26.0\n",
		"step07/hack/ct/cmd/controller-gen/main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"the submission's controller-gen\") }\n",
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(here, "..", name))
		if err != nil {
			t.Fatal(err)
		}
		files["harness/"+name] = string(data)
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	version := func(bin string) string {
		out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s --version: %v\n%s", bin, err, out)
		}
		return string(out)
	}

	// The control: through the workspace, go builds the stand-in.
	cmd := exec.CommandContext(ctx, "go", "tool", "-n", "controller-gen")
	cmd.Dir = filepath.Join(root, "harness")
	cmd.Env = append(os.Environ(), "GOWORK=", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the control (go tool -n in the workspace): %v", err)
	}
	if got := version(strings.TrimSpace(string(out))); !strings.Contains(got, "the submission's") {
		t.Fatalf("the control built %q, not the stand-in: the test no longer shows the attack", got)
	}

	bin, err := Path(ctx, root, "controller-gen")
	if err != nil {
		t.Fatal(err)
	}
	if got := version(bin); strings.Contains(got, "the submission's") || !strings.Contains(got, "v0.") {
		t.Errorf("Path built the submission's controller-gen: --version says %q", got)
	}
}
