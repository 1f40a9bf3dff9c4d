package checks

import (
	"context"
	"strings"
)

// A Probe is a grader-owned Go test compiled beside the learner's code, for
// the clauses no cluster can provoke: a controller-runtime client reads from
// its informer's cache, so an API server's failure never reaches a cached
// Get, and only a test that builds the reconciler with a failing client can
// prove what it does then. It is added to the build with `go test -overlay`
// (nothing is written to the learner's module) in a package of its own, so
// that none of the learner's test files (a TestMain starting a control
// plane) run with it; in a grade it runs in the sandbox, as the unit tests do.
type Probe struct {
	// Package is the probe's package directory, relative to the step module
	// (it need not exist: "internal/gw10probe").
	Package string
	// File is the test file's name in it; Source its text, in which every
	// "MODULE" is replaced by the step module's path.
	File, Source string
	// Run is the `go test -run` pattern of its tests.
	Run string
}

// ProbeResult is what a probe's test binary did.
type ProbeResult struct {
	// Compiled is false when the probe did not compile against the learner's
	// code (Output then holds the compiler's errors).
	Compiled bool
	// Passed: the binary exited 0 and ran a test (none skipped).
	Passed bool
	Output string
}

// Lines are the output's lines that contain any of the markers, trimmed.
func (r ProbeResult) Lines(markers ...string) []string {
	var out []string
	for _, l := range strings.Split(r.Output, "\n") {
		for _, m := range markers {
			if strings.Contains(l, m) {
				out = append(out, strings.TrimSpace(l))
				break
			}
		}
	}
	return out
}

// ProbeFunc compiles and runs a probe against the step's code.
type ProbeFunc func(ctx context.Context, p Probe) (ProbeResult, error)
