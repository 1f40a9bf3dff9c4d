package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/10xdev/gw10/harness/checks"
)

// TestTheDriftPeriodGoesOnlyToABinaryThatHasTheFlag: a controller whose -h
// shows --dataplane-drift-period is started with the harness's short one; a
// controller without it (a design that notices drift another way) is started
// as before, since an unknown flag would stop it at its start.
func TestTheDriftPeriodGoesOnlyToABinaryThatHasTheFlag(t *testing.T) {
	dir := t.TempDir()
	script := func(name, usage string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\ncat >&2 <<'EOF'\n"+usage+"EOF\nexit 2\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	with := script("with", "Usage of manager:\n  -dataplane-drift-period duration\n    \tHow often ... (default 30s)\n  -dataplane-url string\n")
	without := script("without", "Usage of manager:\n  -dataplane-url string\n")
	if got := driftArgs(context.Background(), with); !slices.Equal(got, []string{"--dataplane-drift-period=" + checks.DriftPeriod.String()}) {
		t.Errorf("a binary with the flag gets %q", got)
	}
	if got := driftArgs(context.Background(), without); got != nil {
		t.Errorf("a binary without the flag gets %q", got)
	}
}
