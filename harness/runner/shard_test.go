package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/10xdev/gw10/harness/steps"
)

// ShardEnv splits the kill table's runs (every step's mutants and variants)
// between machines or jobs: "i/n" runs the i-th of n shares (1 <= i <= n),
// unset runs them all. make test-mutants SHARD=i/n sets it.
const ShardEnv = "GW10_SHARD"

// killTableRuns names every run of the kill table, "<step>/<mutants or
// variants>/<name>", sorted: the order the shards are dealt from.
var killTableRuns = sync.OnceValues(func() ([]string, error) {
	var runs []string
	for _, st := range steps.All() {
		for _, kind := range []string{"mutants", "variants"} {
			files, err := filepath.Glob(filepath.Join("..", "testdata", st.Name, kind, "*.txtar"))
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				runs = append(runs, st.Name+"/"+kind+"/"+strings.TrimSuffix(filepath.Base(f), ".txtar"))
			}
		}
	}
	slices.Sort(runs)
	return runs, nil
})

// inShard reports whether run (as killTableRuns names it) is in this
// process's share: the runs are dealt round-robin in sorted order, so that
// the shares differ by one run at most and the same tree always splits the
// same way.
func inShard(t *testing.T, run string) bool {
	t.Helper()
	i, n, err := parseShard(os.Getenv(ShardEnv))
	if err != nil {
		t.Fatal(err)
	}
	if n == 1 {
		return true
	}
	runs, err := killTableRuns()
	if err != nil {
		t.Fatal(err)
	}
	at := slices.Index(runs, run)
	if at < 0 {
		t.Fatalf("%s is not one of the kill table's runs %v", run, runs)
	}
	return at%n == i-1
}

// parseShard reads "i/n"; empty is "1/1".
func parseShard(s string) (i, n int, err error) {
	if s == "" {
		return 1, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, errI := strconv.Atoi(a)
	n, errN := strconv.Atoi(b)
	if !ok || errI != nil || errN != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("%s=%q: want i/n with 1 <= i <= n, e.g. 2/3", ShardEnv, s)
	}
	return i, n, nil
}

// TestTheShardsDealEveryRunOnce: the shares of any n cover the kill
// table's runs exactly once, and differ in size by one at most.
func TestTheShardsDealEveryRunOnce(t *testing.T) {
	runs, err := killTableRuns()
	if err != nil || len(runs) == 0 {
		t.Fatalf("the kill table's runs: %v, %v", runs, err)
	}
	for n := 1; n <= 4; n++ {
		seen := map[string]int{}
		var sizes []int
		for i := 1; i <= n; i++ {
			t.Setenv(ShardEnv, fmt.Sprintf("%d/%d", i, n))
			size := 0
			for _, r := range runs {
				if inShard(t, r) {
					seen[r]++
					size++
				}
			}
			sizes = append(sizes, size)
		}
		for _, r := range runs {
			if seen[r] != 1 {
				t.Errorf("n=%d: %s is in %d shares, want 1", n, r, seen[r])
			}
		}
		if slices.Max(sizes)-slices.Min(sizes) > 1 {
			t.Errorf("n=%d: shares of sizes %v", n, sizes)
		}
	}
	for _, bad := range []string{"0/2", "3/2", "1", "a/b", "1/0"} {
		if _, _, err := parseShard(bad); err == nil {
			t.Errorf("%s=%s accepted", ShardEnv, bad)
		}
	}
}
