package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// drift is a step's ControllerFlags with the reference's drift flag.
var drift = map[string]string{"dataplane-drift-period": "5s"}

// TestTheDriftPeriodGoesOnlyToABinaryThatHasTheFlag: a controller whose -h
// shows a flag of the step's ControllerFlags (step 01's
// --dataplane-drift-period) is started with the step's value; a controller
// without it (a design that notices drift another way) is started
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
	if got := controllerFlags(context.Background(), with, nil, drift); !slices.Equal(got, []string{"--dataplane-drift-period=5s"}) {
		t.Errorf("a binary with the flag gets %q", got)
	}
	if got := controllerFlags(context.Background(), without, nil, drift); got != nil {
		t.Errorf("a binary without the flag gets %q", got)
	}
}

// TestAGradesFlagCheckRunsTheBinaryInTheSandbox: in a grade the binary's
// -h runs as the sandbox's user, like the controller: a binary that prints
// the flag only when it runs as root is found without it.
func TestAGradesFlagCheckRunsTheBinaryInTheSandbox(t *testing.T) {
	sb := openSandbox(t)
	src := filepath.Join(t.TempDir(), "manager")
	usage := "#!/bin/sh\nif [ \"$(id -u)\" = 0 ]; then echo '  -dataplane-drift-period duration' >&2; fi\necho '  -dataplane-url string' >&2\nexit 2\n"
	if err := os.WriteFile(src, []byte(usage), 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := sb.Install(src, filepath.Join("bin", "manager"))
	if err != nil {
		t.Fatal(err)
	}
	if got := controllerFlags(context.Background(), bin, sb, drift); got != nil {
		t.Errorf("the flag check ran the binary as root: it got %q", got)
	}
	if got := controllerFlags(context.Background(), src, nil, drift); got == nil && os.Getuid() == 0 {
		t.Error("without a sandbox, as root, the binary shows the flag and the check misses it")
	}
}
