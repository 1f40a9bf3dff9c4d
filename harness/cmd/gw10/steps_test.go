package main

import (
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
)

// TestStepsListsEveryDescriptor: `gw10 steps` prints each registered step's
// field, one a line, in the registry's order; an unknown field is an error.
func TestStepsListsEveryDescriptor(t *testing.T) {
	all := []step.Step{{Name: "a", Dir: "a", SolutionDir: "solutions/a"}, {Name: "b", Dir: "b", SolutionDir: "solutions/b"}}
	for field, want := range map[string]string{"name": "a\nb\n", "dir": "a\nb\n", "solution": "solutions/a\nsolutions/b\n"} {
		var b strings.Builder
		if err := listSteps(&b, all, field); err != nil || b.String() != want {
			t.Errorf("--field %s: %q, %v; want %q", field, b.String(), err, want)
		}
	}
	if err := listSteps(&strings.Builder{}, all, "chapter"); err == nil {
		t.Errorf("an unknown field was accepted")
	}
	var b strings.Builder
	if err := listSteps(&b, steps.All(), "dir"); err != nil || strings.Count(b.String(), "\n") != len(steps.All()) {
		t.Errorf("the registry's steps: %q, %v", b.String(), err)
	}
}
