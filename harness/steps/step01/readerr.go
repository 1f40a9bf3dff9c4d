package step01

import (
	"context"
	_ "embed"
	"strings"

	"github.com/10xdev/gw10/harness/checks"
)

// readErrProbe is the grader's own test of the learner's reconciler for
// S-READERR (see checks.Probe for why a test and not the cluster).
//
//go:embed probes/readerr_test.go.tmpl
var readErrProbe string

var readErrorCheck = checks.Check{
	ID:      "read-error",
	Title:   "a Service that cannot be read (an error other than NotFound) changes nothing: no push, no withdraw, no status write, and Reconcile returns the error",
	SeedRef: "Task 2: handle the Service read error (the card's defect 2)",
	Points:  10,
	Clauses: []string{ClauseReadErr},
	Probe:   true,
	Hint:    "when reading the Service fails with anything but NotFound, the route's status and data plane must stay as they are, and Reconcile must fail (S-READERR)",
	LongHint: `A read of the Service can fail without the Service being gone: the API server
answers 500 or 429, a request times out, the connection drops. Such an error says
nothing about the Service, so it is neither "missing" (withdraw, Accepted=False) nor
"present" (push): the reconciler knows nothing new and must change nothing. Return
the error: the queue retries the key with backoff, and the next pass observes again.
Only apierrors.IsNotFound means the Service is gone. A controller-runtime client reads
from its informer cache, where a failing API server rarely shows, so this check does
not use the cluster: it compiles a test of its own beside your package (nothing is
written to your files), builds an EdgeRouteReconciler whose exported client fields hold
a fake client on which every read of a Service fails, and calls Reconcile once for a
programmed route. Keep the type, its exported Client and Programmer fields (or any
exported client.Reader / dataplane.DataPlane fields) and Reconcile's signature.`,
	Run: func(ctx context.Context, t *checks.T) {
		if lines := runProbe(ctx, t, "^TestGW10ServiceReadError$", "a failing Service read", "S-READERR"); lines != nil {
			t.Fatalf("when reading the Service fails with an error other than NotFound, Reconcile must return it and change "+
				"nothing (the contract's S-READERR); it did not:\n%s", strings.Join(lines, "\n"))
		}
	},
}

// runProbe runs one test of the grader's probe (compiled beside the
// learner's package, see checks.Probe) and returns nil when it passed, else
// the lines of its output that name one of clauses or a panic (its last
// lines when none does). A probe that cannot run or does not compile ends
// the check, saying so; what names what the test exercises.
func runProbe(ctx context.Context, t *checks.T, run, what string, clauses ...string) []string {
	if t.Probe == nil {
		t.Fatalf("the harness gave check %s no way to compile a test beside the controller (a harness bug, please report it)", t.Name())
	}
	res, err := t.Probe(ctx, checks.Probe{
		Package: "internal/gw10probe",
		File:    "readerr_test.go",
		Source:  readErrProbe,
		Run:     run,
	})
	t.Must(err, "running the grader's test of %s", what)
	if !res.Compiled {
		t.Fatalf("the grader's test of %s does not compile against your code: it builds an "+
			"EdgeRouteReconciler of package internal/controller and calls its Reconcile(ctx, ctrl.Request) "+
			"(keep the type, the package and the signature):\n%s", what, res.Output)
	}
	if res.Passed {
		return nil
	}
	lines := res.Lines(append(clauses, "panic:")...)
	if len(lines) == 0 {
		lines = lastLines(res.Output, 20)
	}
	return dedupe(lines)
}

func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// dedupe keeps the first of equal lines once each fault's subtest has said
// the same thing with another error.
func dedupe(lines []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lines {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}
