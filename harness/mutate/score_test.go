package mutate

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/steps"
)

// TestASeededSampleIsScoredOnARealAPIServer: make test scores the checks
// against a fixed sample of generated mutants (make mutants scores them all):
// each gets an outcome from a full run on envtest, a killed one names what
// killed it, and the score line counts them.
func TestASeededSampleIsScoredOnARealAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("full runs on envtest")
	}
	ms, err := Generate(solution)
	if err != nil {
		t.Fatal(err)
	}
	sample := Sample(ms, 2, 2)
	ctx := context.Background()
	b, err := cluster.NewEnvtestBackend(ctx, t.TempDir(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop(context.Background()) })
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	rs, err := Score(ctx, Options{Root: root, Step: steps.Default(), Module: filepath.Join(root, steps.Default().SolutionDir),
		Mutants: sample, Backend: b, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(sample) {
		t.Fatalf("%d results for %d mutants", len(rs), len(sample))
	}
	for _, r := range rs {
		switch r.Outcome {
		case Killed:
			if len(r.By) == 0 {
				t.Errorf("%s is killed by nothing named", r.Mutant.ID)
			}
		case Survived, Stillborn:
		default:
			t.Errorf("%s: outcome %q", r.Mutant.ID, r.Outcome)
		}
	}
	t.Logf("seed 2's sample:\n%s%s", progress.String(), Summary(rs))
}

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard()) // the harness's clients log nothing a test needs
	os.Exit(m.Run())
}
