package step

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTheMaintainersGuideNamesEveryPackage keeps the package table of
// docs/maintainers.md true to `go list ./harness/...`, both ways: a row for
// every package, and no row for a package that does not exist.
func TestTheMaintainersGuideNamesEveryPackage(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	guide, err := os.ReadFile(filepath.Join(root, "docs", "maintainers.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = filepath.Join(root, "harness")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var listed []string
	for _, pkg := range strings.Fields(string(out)) {
		listed = append(listed, "harness"+strings.TrimPrefix(pkg, "github.com/10xdev/gw10/harness"))
	}
	rows := packageRows(string(guide))
	if len(rows) == 0 {
		t.Fatal("docs/maintainers.md has no package table (rows | `harness/…` | … | under ## Packages)")
	}
	for _, pkg := range listed {
		if !slices.Contains(rows, pkg) {
			t.Errorf("docs/maintainers.md's package table has no row for %s", pkg)
		}
	}
	for _, row := range rows {
		if !slices.Contains(listed, row) {
			t.Errorf("docs/maintainers.md's package table has a row for %s, which go list ./harness/... does not list", row)
		}
	}
}

// packageRows are the packages in the first column of the table under
// "## Packages".
func packageRows(guide string) []string {
	_, section, _ := strings.Cut(guide, "\n## Packages\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []string
	for _, line := range strings.Split(section, "\n") {
		first, _, ok := strings.Cut(strings.TrimPrefix(line, "| `"), "` |")
		if ok && strings.HasPrefix(line, "| `harness/") {
			rows = append(rows, first)
		}
	}
	return rows
}
