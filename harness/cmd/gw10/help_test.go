package main

import (
	"os/exec"
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
	for _, target := range []string{"check", "test", "watch", "grade", "gradebook", "bench"} {
		if !strings.Contains(string(out), "\n  "+target+" ") {
			t.Errorf("make help does not list %s:\n%s", target, out)
		}
	}
}
