package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeHelpIsPlainTextWhenPiped: `make help | less` or into a file shows
// no colour codes, and lists the two commands the README opens with.
func TestMakeHelpIsPlainTextWhenPiped(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	out, err := exec.Command("make", "-s", "-C", workbook, "help").CombinedOutput()
	if err != nil {
		t.Fatalf("make help: %v\n%s", err, out)
	}
	if strings.ContainsRune(string(out), '\x1b') {
		t.Errorf("make help wrote terminal escape codes to a pipe:\n%q", out)
	}
	for _, target := range []string{"check", "test", "watch", "grade", "bench"} {
		if !strings.Contains(string(out), "\n  "+target+" ") {
			t.Errorf("make help does not list %s:\n%s", target, out)
		}
	}
}

// TestMakeGradePassesItsInputsAsText: a grade's inputs come from whoever
// starts it (a bot may forward a learner's branch name); backticks, $(),
// quotes and ; reach gw10 as one argument each and run nothing. gw10 is a
// stand-in that records its arguments.
func TestMakeGradePassesItsInputsAsText(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	args := filepath.Join(dir, "args")
	stub := filepath.Join(dir, "gw10")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \""+args+"\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hostile := map[string]string{
		"SUBMISSION":     "https://example.com/x.git\"; touch " + marker + "; echo \"",
		"SUBMISSION_REF": "main`touch " + marker + "`$(touch " + marker + ")$(shell touch " + marker + ")';touch " + marker + ";'",
		"UPSTREAM_REF":   "$$(touch " + marker + ")",
		"GRADE_OUT":      "out dir; touch " + marker,
	}
	cmd := exec.Command("make", "-s", "-C", workbook, "-o", stub, "grade", "GW10="+stub)
	for k, v := range hostile {
		cmd.Args = append(cmd.Args, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make grade: %v\n%s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an input of make grade ran as a command")
	}
	got, err := os.ReadFile(args)
	if err != nil {
		t.Fatal(err)
	}
	for flag, name := range map[string]string{"--submission": "SUBMISSION", "--submission-ref": "SUBMISSION_REF", "--upstream-ref": "UPSTREAM_REF", "--out": "GRADE_OUT"} {
		if !strings.Contains(string(got), "\n"+flag+"\n"+hostile[name]+"\n") {
			t.Errorf("gw10 did not get %s as one argument %q:\n%s", flag, hostile[name], got)
		}
	}
}
