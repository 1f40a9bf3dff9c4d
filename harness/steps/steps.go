// Package steps is the workbook's list of steps: each step's descriptor is
// defined in its own package (steps/step01, ...) and registered here.
package steps

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps/step01"
)

// All returns every step of the workbook, in course order.
func All() []step.Step { return []step.Step{step01.Step()} }

// Default is the step `make check` runs when none is named: the newest.
func Default() step.Step {
	all := All()
	return all[len(all)-1]
}

// Find returns the step named name.
func Find(name string) (step.Step, error) {
	var names []string
	for _, s := range All() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return step.Step{}, fmt.Errorf("no step %q (the steps are: %s)", name, strings.Join(names, ", "))
}

// ForDir returns the step whose learner module or solution is dir (relative
// to root, or absolute).
func ForDir(root, dir string) (step.Step, error) {
	for _, s := range All() {
		if s.Is(root, dir) {
			return s, nil
		}
	}
	var dirs []string
	for _, s := range All() {
		dirs = append(dirs, s.Dir, s.SolutionDir)
	}
	return step.Step{}, fmt.Errorf("%s is not a step of the workbook (use one of: %s)", filepath.Clean(dir), strings.Join(dirs, ", "))
}
