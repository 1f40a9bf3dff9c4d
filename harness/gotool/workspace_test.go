package gotool

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/10xdev/gw10/harness/steps"
)

func TestModuleEnvTurnsTheWorkspaceOffOnlyForModulesItDoesNotUse(t *testing.T) {
	root := t.TempDir()
	work := "go 1.26.0\n\nuse (\n\t./harness\n\t./step07\n)\n"
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte(work), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string][]string{
		filepath.Join(root, "step07"):              nil,
		filepath.Join(root, "harness"):             nil,
		filepath.Join(root, "solutions", "step07"): {"GOWORK=off"},
		filepath.Join(t.TempDir(), "step07"):       nil, // a copy outside the workbook finds no go.work
	} {
		if got := ModuleEnv(root, dir); !slices.Equal(got, want) {
			t.Errorf("ModuleEnv(%s) = %v, want %v", dir, got, want)
		}
	}
}

// TestTheWorkbookWorkspaceHasNoSolution: the committed go.work must not name
// the solution, or a learner's copy without solutions/ cannot build anything.
func TestTheWorkbookWorkspaceHasNoSolution(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps.All() {
		if got := ModuleEnv(root, filepath.Join(root, st.SolutionDir)); !slices.Equal(got, []string{"GOWORK=off"}) {
			t.Errorf("go.work uses %s (ModuleEnv = %v): a learner's copy without solutions/ would not build", st.SolutionDir, got)
		}
		if got := ModuleEnv(root, filepath.Join(root, st.Dir)); got != nil {
			t.Errorf("go.work does not use %s (ModuleEnv = %v)", st.Dir, got)
		}
	}
}
