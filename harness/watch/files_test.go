package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/report"
)

func TestOnlySavesOfTheControllersCodeMatter(t *testing.T) {
	for rel, want := range map[string]bool{
		"internal/controller/edgeroute_controller.go":      true,
		"api/v1/edgeroute_types.go":                        true,
		"cmd/main.go":                                      true,
		"go.mod":                                           true,
		"internal/controller/conditions_test.go":           false, // the checks do not run the tests
		"api/v1/zz_generated.deepcopy.go":                  false, // the harness writes it
		"config/crd/bases/net.10xdev.io_edgeroutes.yaml":   false,
		"config/rbac/role.yaml":                            false,
		"internal/controller/.edgeroute_controller.go.swp": false,
		"internal/controller/edgeroute_controller.go~":     false,
		"bin/manager":                                      false,
		"README.md":                                        false,
	} {
		if got := matters(rel); got != want {
			t.Errorf("matters(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestTheChecksThatFailedLastRunFirst(t *testing.T) {
	all := []checks.Check{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}
	w := &watcher{all: all, failed: map[string]bool{}}
	if got := ids(w.order()); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("before any run: %v, want the step's order", got)
	}
	w.remember(&report.Report{Checks: []report.CheckResult{
		{ID: "a", Status: report.Pass}, {ID: "b", Status: report.Pass}, {ID: "c", Status: report.Fail}, {ID: "d", Status: report.Fail},
	}})
	if got := ids(w.order()); !slices.Equal(got, []string{"c", "d", "a", "b"}) {
		t.Fatalf("after c and d failed: %v, want c, d first, in the step's order", got)
	}
	// A run stopped by a save: d passed, c did not run; c still failed when it last ran.
	w.remember(&report.Report{Checks: []report.CheckResult{{ID: "d", Status: report.Pass}, {ID: "c", Status: report.Skip}}})
	if got := ids(w.order()); !slices.Equal(got, []string{"c", "a", "b", "d"}) {
		t.Fatalf("after d passed and c was not run: %v", got)
	}
}

// TestNewDirectoriesAreWatchedAndGeneratedFilesAreNot: fsnotify watches
// one directory at a time; a directory made after the start is watched too,
// and what the harness writes is no save.
func TestNewDirectoriesAreWatchedAndGeneratedFilesAreNot(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"api/v1", "internal/controller", "bin", ".git"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := watchFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	saves := make(chan string, 16)
	go fw.run(ctx, saves, func(err error) { t.Errorf("watcher: %v", err) })

	write := func(rel string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, rel), []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Not saves: generated, built, hidden.
	write("api/v1/zz_generated.deepcopy.go")
	write("bin/x.go")
	write(".git/x.go")
	// A save in a directory made after the start (the watch adds it, then sees the file).
	if err := os.MkdirAll(filepath.Join(root, "internal/newpkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(time.Minute)
	for {
		write("internal/newpkg/new.go") // again until seen: the directory's watch is added asynchronously
		select {
		case got := <-saves:
			if got != "internal/newpkg/new.go" {
				t.Fatalf("a save of %s, want only internal/newpkg/new.go", got)
			}
			return
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatal("no save seen in a directory made after the start")
		}
	}
}

func ids(cs []checks.Check) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
