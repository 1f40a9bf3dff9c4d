package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records a skip or a failure instead of
// ending the goroutine, so the helpers' decisions can be read.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestAMissingNeedFailsUnderCIOnlyWhenCIProvidesIt(t *testing.T) {
	for _, tc := range []struct {
		ci       string
		need     Need
		wantFail bool
	}{
		{"", Sandbox, false},
		{"true", Sandbox, true},
		{"1", Browser, true},
		{"false", Browser, false},
		{"true", Cluster, false},
	} {
		t.Setenv("CI", tc.ci)
		r := &recorder{TB: t}
		Missing(r, tc.need, "not here")
		if got := r.failed != ""; got != tc.wantFail {
			t.Errorf("CI=%q, %s missing: failed %v (%q), skipped %q; want failed %v", tc.ci, tc.need, got, r.failed, r.skipped, tc.wantFail)
		}
		if r.failed == "" && !strings.Contains(r.skipped, "SKIPPED") {
			t.Errorf("CI=%q, %s missing: the skip is not loud: %q", tc.ci, tc.need, r.skipped)
		}
	}
}

// TestASkippedTestIsRecordedByPackageAndTopLevelName: make test reads the
// record to run, after the unit tier, exactly the tests it skipped.
func TestASkippedTestIsRecordedByPackageAndTopLevelName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "skipped")
	for _, name := range []string{"TestA/sub", "TestB"} {
		if err := record(path, name); err != nil {
			t.Fatal(err)
		}
	}
	dir, _ := os.Getwd()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := dir + "\tTestA\n" + dir + "\tTestB\n"; string(got) != want {
		t.Errorf("recorded %q, want %q", got, want)
	}
}
