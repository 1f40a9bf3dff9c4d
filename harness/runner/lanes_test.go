package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// runStepSideBySide runs every check of the step as make check does: side
// by side in lanes, on the learner's budget.
func runStepSideBySide(t *testing.T, st step.Step, stepDir, name string, timeouts checks.Timeouts) (*report.Report, string) {
	t.Helper()
	var out bytes.Buffer
	rep, err := Run(context.Background(), Options{
		Root: root, Step: st, StepDir: stepDir, Label: name, Lanes: 4,
		Backend: planes.acquire(t), Out: &out, GoEnv: workspaceFor(t, stepDir), Timeouts: timeouts,
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	rep.Terminal(&out)
	return rep, out.String()
}

// sideBySideMutants fail one check each, which runs beside the others: one
// that must see a Service event reach every route of its namespace (its
// neighbour namespace made before its controller started), one that must
// see a converged controller keep quiet, and one that kills its controller.
var sideBySideMutants = []string{"mapfunc-wakes-one", "ltt-churn", "trust-own-status"}

// TestChecksSideBySideGiveTheSerialVerdicts: with the checks in lanes (make
// check), the solution passes every check, each verdict printed in the
// step's order, and each of a few mutants fails the check a serial run
// fails, with its cause.
func TestChecksSideBySideGiveTheSerialVerdicts(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	t.Parallel() // beside the package's other long runs (planes)
	st := steps.Default()
	t.Run("solution", func(t *testing.T) {
		t.Parallel()
		rep, out := runStepSideBySide(t, st, copyModule(t, filepath.Join(root, st.SolutionDir)), st.SolutionDir, passingTimeouts())
		if !rep.Summary.OK || rep.Summary.Passed != len(st.Checks) {
			t.Fatalf("the reference solution does not pass every check side by side:\n%s", out)
		}
		if strings.Contains(out, "note: the checks run one at a time") {
			t.Errorf("the checks ran one at a time:\n%s", out)
		}
		var order []string
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "PASS" {
				order = append(order, f[1])
			}
		}
		var want []string
		for _, c := range st.Checks {
			want = append(want, c.ID)
		}
		if !slices.Equal(order[:min(len(order), len(want))], want) {
			t.Errorf("the verdicts printed in the order %v, want the step's %v", order, want)
		}
	})
	all := loadMutants(t, filepath.Join("..", "testdata", st.Name, "mutants"))
	for _, name := range sideBySideMutants {
		i := slices.IndexFunc(all, func(m mutant) bool { return m.name == name })
		if i < 0 {
			t.Fatalf("no mutant %s in testdata/%s/mutants", name, st.Name)
		}
		m := all[i]
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			dir := copyModule(t, filepath.Join(root, st.SolutionDir))
			m.apply(t, dir)
			rep, out := runStepSideBySide(t, st, dir, "mutant-"+m.name, mutantTimeouts())
			res := findResult(rep, m.wantCheck)
			if res == nil || res.Status != report.Fail {
				t.Fatalf("mutant %s: check %s did not fail side by side\n%s", m.name, m.wantCheck, out)
			}
			text := strings.Join(append(append([]string{}, res.Causes...), res.Hint, res.Message), "\n")
			if !strings.Contains(text, m.wantCause) {
				t.Fatalf("mutant %s: the failure side by side does not say %q:\n%s", m.name, m.wantCause, out)
			}
			t.Logf("mutant %s caught side by side:\n%s", m.name, out)
		})
	}
}

// TestALaneHandsOutTheNamespacesItsControllerWatches: a lane's check gets
// the first of its namespaces, its neighbours the next ones, and no more
// than were made; the serial path makes them as asked.
func TestALaneHandsOutTheNamespacesItsControllerWatches(t *testing.T) {
	ctx := context.Background()
	made := 0
	create := func(context.Context) (string, error) { made++; return fmt.Sprintf("new-%d", made), nil }
	l := &lane{made: []string{"a", "b", "c"}}
	if ns, _ := l.namespace(ctx, create); ns != "a" {
		t.Errorf("the check's namespace is %q, want a", ns)
	}
	if ns, _ := l.neighbour(ctx, create); ns != "b" {
		t.Errorf("the first neighbour is %q, want b", ns)
	}
	if got := l.unused(); !slices.Equal(got, []string{"c"}) {
		t.Errorf("unused = %v, want [c]", got)
	}
	if ns, _ := l.neighbour(ctx, create); ns != "c" {
		t.Errorf("the second neighbour is %q, want c", ns)
	}
	if _, err := l.neighbour(ctx, create); err == nil {
		t.Error("a third neighbour was handed out, which the lane's controller does not watch")
	}
	if made != 0 {
		t.Errorf("a lane made %d namespaces after its controller started", made)
	}
	serial := &lane{}
	if ns, _ := serial.namespace(ctx, create); ns != "new-1" {
		t.Errorf("the serial path's namespace is %q, want a new one", ns)
	}
	if ns, _ := serial.neighbour(ctx, create); ns != "new-2" || serial.unused() != nil {
		t.Errorf("the serial path's neighbour is %q (unused %v), want a new one", ns, serial.unused())
	}
}

// TestABlockerSideBySideIsTheSerialRunsPrerequisite: a controller whose
// status writes are refused fails its first check with a proof that holds
// for the rest of the run; side by side, the later checks name it as their
// prerequisite, as a serial run's do: each check's verdict and causes are
// the serial run's. (Not the tally of what the controller did before the
// proof ended a wait, "after … the controller reconciled N times": it
// depends on how far the controller got in that moment, in a serial run too.)
func TestABlockerSideBySideIsTheSerialRunsPrerequisite(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	t.Parallel() // beside the package's other long runs (planes)
	st := steps.Default()
	all := loadMutants(t, filepath.Join("..", "testdata", st.Name, "mutants"))
	i := slices.IndexFunc(all, func(m mutant) bool { return m.name == "update-not-status" })
	if i < 0 {
		t.Fatal("no mutant update-not-status")
	}
	dir := copyModule(t, filepath.Join(root, st.SolutionDir))
	all[i].apply(t, dir)
	var serialOut bytes.Buffer
	serial, err := Run(context.Background(), Options{
		Root: root, Step: st, StepDir: dir, Label: "serial", Backend: planes.acquire(t), Out: &serialOut,
		GoEnv: workspaceFor(t, dir), Timeouts: mutantTimeouts(),
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, serialOut.String())
	}
	side, out := runStepSideBySide(t, st, dir, "side", mutantTimeouts())
	for _, want := range serial.Checks {
		got := findResult(side, want.ID)
		switch {
		case got == nil:
			t.Errorf("%s: no verdict side by side", want.ID)
		case got.Status != want.Status:
			t.Errorf("%s: %s side by side, %s serially", want.ID, got.Status, want.Status)
		case !slices.Equal(normalized(got.Causes), normalized(want.Causes)):
			t.Errorf("%s: side by side the causes are\n%s\nserially\n%s", want.ID, strings.Join(got.Causes, "\n"), strings.Join(want.Causes, "\n"))
		}
	}
	t.Logf("serially:\n%s\nside by side:\n%s", serialOut.String(), out)
}

// normalized drops from causes what differs between two runs of one
// controller: the tally of a wait, the generated namespaces' suffixes,
// times and counts (how many refused writes a proof saw before it ended
// the wait).
func normalized(causes []string) []string {
	var out []string
	for _, c := range causes {
		if strings.HasPrefix(c, "after ") && strings.Contains(c, " the controller reconciled ") {
			continue
		}
		out = append(out, volatile.ReplaceAllString(c, "#"))
	}
	return out
}

var volatile = regexp.MustCompile(`gw10-[a-z-]+-[a-z0-9]{5}|\b(once|twice|[0-9]+ times)\b|[0-9]+(\.[0-9]+)?(ms|s|µs)?`)

// fakeBackend is a cluster that is never reached: enough for decisions
// made before the checks.
type fakeBackend struct {
	cluster.Backend
	outlives bool
}

func (b fakeBackend) Outlives() bool { return b.outlives }

// TestChecksRunSideBySideOnlyInALearnersRunWithTheFlag: make check's lanes
// need the scaffold's --namespaces flag (without it: one at a time, and
// the run says why), a cluster the run owns, and no -v; a grade (Lanes 0)
// and a run that stops at its first failure run one at a time, silently.
func TestChecksRunSideBySideOnlyInALearnersRunWithTheFlag(t *testing.T) {
	dir := t.TempDir()
	manager := func(name, usage string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\ncat >&2 <<'EOF'\n"+usage+"\nEOF\nexit 2\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	scaffold := manager("scaffold", "Usage of manager:\n  -namespaces string\n    \tComma-separated namespaces\n  -dataplane-url string")
	rewritten := manager("rewritten", "Usage of manager:\n  -dataplane-url string\n  -namespaces-to-skip string")
	st := steps.Default()
	for _, tc := range []struct {
		name     string
		binary   string
		opts     Options
		outlives bool
		side     bool
		note     string
	}{
		{"make check", scaffold, Options{Lanes: 4}, false, true, ""},
		{"a grade", scaffold, Options{}, false, false, ""},
		{"a grade given lanes", scaffold, Options{Lanes: 4, FixedSeeds: true}, false, false, ""},
		{"make mutants", scaffold, Options{Lanes: 4, FailFast: true}, false, false, ""},
		{"one check", scaffold, Options{Lanes: 4, Checks: st.Checks[:1]}, false, false, ""},
		{"-v", scaffold, Options{Lanes: 4, Verbose: true}, false, false, "with -v"},
		{"an existing cluster", scaffold, Options{Lanes: 4}, true, false, "outlives the run"},
		{"no --namespaces", rewritten, Options{Lanes: 4}, false, false, "cmd/main.go has no --namespaces flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Step = st
			if opts.Checks == nil {
				opts.Checks = st.Checks
			}
			r := &run{opts: opts, world: world{backend: fakeBackend{outlives: tc.outlives}, ctrl: &controller{cfg: ctrlproc.Config{Binary: tc.binary}}}}
			side, note := r.concurrently(context.Background())
			if side != tc.side || (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
				t.Errorf("side by side %v, note %q; want %v, a note saying %q", side, note, tc.side, tc.note)
			}
		})
	}
}

// TestAnUnknownNamespacesFlagIsRecognised: a binary without the scaffold's
// --namespaces flag says so in the flag package's words (or pflag's) when
// StartIn gives it one; nothing else is taken for it.
func TestAnUnknownNamespacesFlagIsRecognised(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  bool
	}{
		{[]string{"flag provided but not defined: -namespaces", "Usage of manager:"}, true},
		{[]string{"Error: unknown flag: --namespaces"}, true},
		{[]string{"flag provided but not defined: -namespaces-extra"}, false},
		{[]string{"unable to start manager", "namespaces: forbidden"}, false},
		{nil, false},
	} {
		if got := unknownFlag(tc.lines, namespacesFlag); got != tc.want {
			t.Errorf("unknownFlag(%q) = %v, want %v", tc.lines, got, tc.want)
		}
	}
}
