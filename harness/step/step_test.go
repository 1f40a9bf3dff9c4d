package step

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTheMaintainersGuideNamesEveryPackage keeps docs/maintainers.md true to
// `go list ./harness/...`.
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
	for _, pkg := range strings.Fields(string(out)) {
		rel := "harness" + strings.TrimPrefix(pkg, "github.com/10xdev/gw10/harness")
		if !strings.Contains(string(guide), "`"+rel+"`") {
			t.Errorf("docs/maintainers.md does not describe package %s", rel)
		}
	}
}
