package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestTwoGradesCannotShareAReportsDirectory: the second grade into one
// --out fails at once, naming the first; once the first is done, it may.
func TestTwoGradesCannotShareAReportsDirectory(t *testing.T) {
	dir := t.TempDir() + "/reports"
	release, err := lockOut(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockOut(dir)
	if err == nil {
		t.Fatal("a second grade locked the same reports directory")
	}
	for _, want := range []string{fmt.Sprintf("pid %d", os.Getpid()), dir, "GRADE_OUT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	release()
	again, err := lockOut(dir)
	if err != nil {
		t.Fatalf("after the first grade released it: %v", err)
	}
	again()
}
