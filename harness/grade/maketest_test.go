package grade

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeTestInALearnersCopySaysWhatToRun: a learner's copy has no
// solutions/, so the workbook's own suite cannot run there; `make test`
// says so and names make check before it builds anything.
func TestMakeTestInALearnersCopySaysWhatToRun(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(workbookRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), mk, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "test")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("make test in a copy without solutions/: %v, want exit 2\n%s", err, out)
	}
	for _, want := range []string{"a learner's copy does not hold", "make check"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make test does not say %q:\n%s", want, out)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("make test left files behind: %v", entries)
	}
}
