package mutate

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// TestASeededSampleIsScoredOnARealAPIServer: make test scores the checks
// against a fixed sample of the generated mutants not listed as equivalent
// (make mutants scores them all): each must be killed by a check, which
// names the clause it proves, or not compile. A survivor is a hole in the
// checks (or an equivalent mutant to list, with why).
func TestASeededSampleIsScoredOnARealAPIServer(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	ms, err := Generate(solution)
	if err != nil {
		t.Fatal(err)
	}
	eq, err := LoadEquivalents(EquivalentsFile(filepath.Join("..", ".."), steps.Default()))
	if err != nil {
		t.Fatal(err)
	}
	sample := Sample(Counted(ms, eq), 2, 2)
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
		Mutants: sample, Backend: b, Progress: &progress, Equivalent: eq})
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
			if checks := slices.DeleteFunc(slices.Clone(r.By), func(b string) bool { return strings.HasPrefix(b, "stage ") }); len(checks) > 1 {
				t.Errorf("%s failed %v: the run goes on past its first failing check", r.Mutant.ID, checks)
			}
			if len(r.Clauses) == 0 && !slices.ContainsFunc(r.By, func(b string) bool { return strings.HasPrefix(b, "stage ") }) {
				t.Errorf("%s is killed by %v, which names no clause of the contract", r.Mutant.ID, r.By)
			}
		case Survived:
			t.Errorf("%s (%s) survived every check: a hole in the checks, or an equivalent mutant to list in %s with why",
				r.Mutant.ID, r.Mutant.What, EquivalentsFile("", steps.Default()))
		case Stillborn:
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
