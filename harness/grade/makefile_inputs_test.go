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

// TestMakeGradeInputsAreData drives the repository Makefile's real `grade`
// recipe with hostile inputs (backticks, $(), make $(shell), quotes, `;`, a
// glob) and a stand-in gw10 that records its arguments: nothing the inputs
// spell may run, and each reaches gw10 as one literal argument (issue 18 §1).
func TestMakeGradeInputsAreData(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
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
	hostile := "main`touch " + marker + "`$(touch " + marker + ")$(shell touch " + marker + ")\"';touch " + marker + ";'*"
	cmd := exec.Command("make", "--no-print-directory", "-f", "Makefile", "-f", extra, "grade",
		"GW10="+fake,
		"SUBMISSION="+hostile,
		"SUBMISSION_REF="+hostile,
		"UPSTREAM_REF="+hostile,
		"GRADE_OUT="+hostile,
		"STEP="+hostile,
		"CHECK_FLAGS=--run $(touch "+marker+") `touch "+marker+"` ;touch "+marker+" *")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make grade: %v\n%s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("an input ran as a command: %s exists\n%s", marker, out)
	}
	got, err := os.ReadFile(args)
	if err != nil {
		t.Fatalf("stand-in gw10 did not run: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	count := 0
	for _, l := range lines {
		if l == hostile {
			count++
		}
	}
	if count != 5 { // step, submission, submission-ref, upstream-ref, out
		t.Errorf("hostile value reached gw10 verbatim %d times, want 5; args:\n%s", count, got)
	}
	// CHECK_FLAGS splits into words, none evaluated or globbed.
	tail := strings.Join(lines[len(lines)-8:], " ")
	want := "--run $(touch " + marker + ") `touch " + marker + "` ;touch " + marker + " *"
	if tail != want {
		t.Errorf("CHECK_FLAGS words = %q, want %q", tail, want)
	}
}

// TestMakeBenchHonoursAStepOnTheCommandLine: making STEP data (an override)
// must not hide that the learner named it: `make bench STEP=step01` benches
// step01, and without STEP the solution.
func TestMakeBenchHonoursAStepOnTheCommandLine(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	st := steps.Default()
	for step, want := range map[string]string{"STEP=" + st.Dir: "--step " + st.Dir + " ", "": "--step " + st.SolutionDir + " "} {
		args := []string{"--no-print-directory", "-n", "bench"}
		if step != "" {
			args = append(args, step)
		}
		cmd := exec.Command("make", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make %v: %v\n%s", args, err, out)
		}
		if !strings.Contains(string(out), want) {
			t.Errorf("make %v runs:\n%s\nwant %q", args, out, want)
		}
	}
}
