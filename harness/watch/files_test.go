package watch

import (
	"slices"
	"testing"

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
