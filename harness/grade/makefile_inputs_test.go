package grade

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/steps"
)

// makeWithStandIn runs a target of the repository Makefile with vars on the
// command line and a stand-in gw10 that records its arguments, one a line.
// It fails the test if anything created marker (an input ran as a command)
// and returns the arguments gw10 received.
func makeWithStandIn(t *testing.T, marker, target string, vars ...string) []string {
	t.Helper()
	return makeWithStandInEnv(t, marker, target, nil, vars...)
}

// makeWithStandInEnv is makeWithStandIn with env added to make's environment
// (a bot may pass its inputs that way).
func makeWithStandInEnv(t *testing.T, marker, target string, env []string, vars ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	dir := t.TempDir()
	args := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "gw10")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + args + "\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// A second makefile replaces the rule that would build bin/gw10.
	extra := filepath.Join(dir, "extra.mk")
	if err := os.WriteFile(extra, []byte("$(GW10):\n\t@:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-f", "Makefile", "-f", extra, target, "GW10=" + fake}, vars...)...)
	cmd.Dir = root
	cmd.Env = append(cleanMakeEnv(os.Environ()), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", target, err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		_ = os.Remove(marker) // the next case starts clean
		t.Fatalf("make %s: an input ran as a command: %s exists\n%s", target, marker, out)
	}
	got, err := os.ReadFile(args)
	if err != nil {
		t.Fatalf("make %s: the stand-in gw10 did not run: %v\n%s", target, err, out)
	}
	return strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
}

// hostileValue spells commands every way a shell or make could run them:
// backticks, $(), make's $(shell), quotes, `;` and a glob.
func hostileValue(marker string) string {
	return "main`touch " + marker + "`$(touch " + marker + ")$(shell touch " + marker + ")\"';touch " + marker + ";'* ${HOME} $$HOME"
}

// TestMakeInputsAreData drives every target of the repository Makefile that
// takes an input (make grade, check, watch, diff, hint, bench, skeleton,
// template, mutants) with hostile values: nothing a value spells may run, and each
// reaches gw10 verbatim as the one argument it names (issues 18 §1, 24).
func TestMakeInputsAreData(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	h := hostileValue(marker)
	flags := "--run $(touch " + marker + ") `touch " + marker + "` ;touch " + marker + " *"
	flagWords := strings.Fields(flags)
	cases := []struct {
		target string
		vars   []string
		want   []string
	}{
		{"grade", []string{"STEP=" + h, "CLUSTER=" + h, "SUBMISSION=" + h, "SUBMISSION_REF=" + h, "UPSTREAM_REF=" + h, "GRADE_OUT=" + h, "CHECK_FLAGS=" + flags},
			append([]string{"grade", "--step", h, "--cluster", h, "--submission", h, "--submission-ref", h, "--upstream-ref", h, "--out", h}, flagWords...)},
		{"check", []string{"STEP=" + h, "CLUSTER=" + h, "CHECK_FLAGS=" + flags},
			append([]string{"check", "--step", h, "--cluster", h}, flagWords...)},
		{"watch", []string{"STEP=" + h, "CHECK_FLAGS=" + flags},
			append([]string{"watch", "--step", h}, flagWords...)},
		{"diff", []string{"STEP=" + h, "VIEW=" + h, "SUBMISSION=" + h, "REF=" + h},
			[]string{"diff", "--step", h, "--view", h, "--submission", h, "--ref", h}},
		{"hint", []string{"ID=" + h}, []string{"hint", "--", h}},
		{"hint", []string{"ID=-v"}, []string{"hint", "--", "-v"}},
		{"bench", []string{"STEP=" + h, "ROUTES=" + h, "CHECK_REPORT=" + h},
			[]string{"bench", "--step", h, "--routes", h, "--repeat", "3", "--check-report", h, "--out", "reports"}},
		{"bench", []string{"BENCH_STEP=" + h, "ROUTES=" + h, "REPEAT=" + h},
			[]string{"bench", "--step", h, "--routes", h, "--repeat", h, "--out", "reports"}},
		// A non-empty FORCE skips the check for uncommitted edits.
		{"skeleton", []string{"FORCE=" + h}, []string{"skeleton"}},
		{"template", []string{"TEMPLATE_OUT=" + h, "UPSTREAM_REF=" + h}, []string{"template", "--out", h, "--ref", h}},
		{"mutants", []string{"SAMPLE=" + h, "SEED=" + h}, []string{"mutants", "--sample", h, "--seed", h}},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			got := makeWithStandIn(t, marker, c.target, c.vars...)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("make %s passed gw10\n%q\nwant\n%q", c.target, got, c.want)
			}
			// The same values from make's environment instead of its command
			// line (make bench takes STEP only from the command line: one
			// exported for make check must not turn the bench from the solution).
			want := c.want
			if c.target == "bench" && strings.HasPrefix(c.vars[0], "STEP=") {
				want = append([]string{"bench", "--step", steps.Default().SolutionDir}, c.want[3:]...)
			}
			got = makeWithStandInEnv(t, marker, c.target, c.vars)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("make %s with the inputs in its environment passed gw10\n%q\nwant\n%q", c.target, got, want)
			}
		})
	}
}

// TestMakeBenchHonoursAStepOnTheCommandLine: making STEP data (an override)
// must not hide that the learner named it: `make bench STEP=step01` benches
// step01, and without STEP the solution.
func TestMakeBenchHonoursAStepOnTheCommandLine(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	st := steps.Default()
	for _, c := range []struct {
		vars []string
		want string
	}{{[]string{"STEP=" + st.Dir}, st.Dir}, {nil, st.SolutionDir}} {
		got := makeWithStandIn(t, marker, "bench", c.vars...)
		if len(got) < 3 || got[1] != "--step" || got[2] != c.want {
			t.Errorf("make bench %v runs gw10 %q, want --step %s", c.vars, got, c.want)
		}
	}
}

// cleanMakeEnv drops what an enclosing make (make test runs these tests)
// exports — its own state and the Makefile's inputs, BENCH_STEP among them —
// so each case sees only the inputs it gives.
func cleanMakeEnv(env []string) []string {
	inputs := map[string]bool{"MAKEFLAGS": true, "MFLAGS": true, "MAKELEVEL": true, "MAKEOVERRIDES": true,
		"STEP": true, "CLUSTER": true, "CHECK_FLAGS": true, "SUBMISSION": true, "SUBMISSION_REF": true,
		"UPSTREAM_REF": true, "GRADE_OUT": true, "VIEW": true, "REF": true, "ID": true, "FORCE": true,
		"TEMPLATE_OUT": true, "SAMPLE": true, "SEED": true, "ROUTES": true, "REPEAT": true, "CHECK_REPORT": true, "BENCH_STEP": true}
	var out []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !inputs[k] {
			out = append(out, kv)
		}
	}
	return out
}
