package checks

import (
	"context"
	"strings"
)

// A Probe is a grader-owned Go test that calls the learner's code, for the
// clauses no cluster can provoke: a controller-runtime client reads from
// its informer's cache, so an API server's failure never reaches a cached
// Get, and only a test that builds the reconciler with a client of its own
// can make a read fail. The runner compiles it with `go test -overlay`
// (nothing is written to the learner's module) in a package directory of
// a name the learner cannot know, linking copies of the learner's packages
// that run none of their code by themselves (harness/inert: no init, no
// initializer that calls module code); in a grade it runs in the sandbox.
//
// What the test's process prints and its exit status can only explain a
// failure: the learner's code runs in that process and could say anything.
// The verdict is read outside it, at the API front and the proxy stand-in
// the test's clients are pointed at (Env).
type Probe struct {
	// File is the test file's name; Source its text, in which every
	// "MODULE" is replaced by the step module's path.
	File, Source string
	// Run is the `go test -run` pattern of its tests.
	Run string
	// Env is added to the test's environment (the addresses it is given);
	// Connect are the loopback host:port addresses it may dial in the
	// sandbox. Both are per run: the runner's build ignores them.
	Env, Connect []string
}

// ProbeResult is what a probe's test binary did.
type ProbeResult struct {
	// Compiled is false when the probe could not be built against the
	// learner's code: it does not compile, or an initializer of the
	// learner's packages could run their code (Refused). Output then says why.
	Compiled bool
	// Refused are the learner's package-level initializers that could run
	// code of theirs in the probe, one "file:line: ..." each.
	Refused []string
	// Exited0 says the binary exited with status 0: an explanation, never a verdict.
	Exited0 bool
	Output  string
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

// ProbeFunc compiles (once per run) and runs a probe against the step's code.
type ProbeFunc func(ctx context.Context, p Probe) (ProbeResult, error)
