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

// TestTheWorkbookWorkspaceUsesEveryStepAndSolution: the committed go.work
// (the instructor's) uses every step's module and its solution, so go build,
// go vet and gopls see all of them from the root; make template writes a
// learner's copy's without the solutions (package grade's template test).
func TestTheWorkbookWorkspaceUsesEveryStepAndSolution(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps.All() {
		for _, dir := range []string{st.Dir, st.SolutionDir} {
			if got := ModuleEnv(root, filepath.Join(root, dir)); got != nil {
				t.Errorf("go.work does not use %s (ModuleEnv = %v)", dir, got)
			}
		}
	}
}
