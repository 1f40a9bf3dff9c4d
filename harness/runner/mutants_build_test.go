package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// TestEveryMutantAndVariantCompiles: a patch of the solution compiles (go
// vet type-checks every package without linking)
// unless its mutant is meant to fail the build stage. A patch that no longer
// compiles after the solution changed (an import it removes that new code
// uses) would fail at the build stage in the kill table, minutes later and
// for the wrong reason; here it fails in seconds and says which.
func TestEveryMutantAndVariantCompiles(t *testing.T) {
	testenv.Long(t, "compiles every mutant and variant")
	st := steps.Default()
	for _, kind := range []string{"mutants", "variants"} {
		for _, m := range loadMutants(t, filepath.Join("..", "testdata", st.Name, kind)) {
			t.Run(kind+"/"+m.name, func(t *testing.T) {
				t.Parallel()
				dir := copyModule(t, filepath.Join(root, st.SolutionDir))
				m.apply(t, dir)
				cmd := exec.Command("go", "vet", "./...")
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
				out, err := cmd.CombinedOutput()
				switch {
				case m.wantStage == "build" && err == nil:
					t.Errorf("%s must fail the build stage, and compiles", m.name)
				case m.wantStage != "build" && err != nil:
					t.Errorf("%s does not compile (the solution changed? update its patch): %v\n%s", m.name, err, out)
				}
			})
		}
	}
}
