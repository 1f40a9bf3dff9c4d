package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/step"
)

// lockedBuffer is a bytes.Buffer that a stage's ticker and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestASlowStageSaysItStillRuns: a stage that outlasts its tick prints a
// whole "still running" line each tick and starts its line again, with no
// carriage return, ends on its result as a quick stage does, and stops
// ticking with it. In a synctest bubble: the ticks are the fake clock's, so
// a 25 ms stage on a 10 ms tick says so exactly twice, however busy the
// machine.
func TestASlowStageSaysItStillRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		r := &run{opts: Options{Out: &out, StageTick: 10 * time.Millisecond}.withDefaults(), rep: &report.Report{}}
		ok := r.runStages(context.Background(), stage{name: "build", do: func(context.Context) error {
			time.Sleep(25 * time.Millisecond)
			return nil
		}})
		got := out.String()
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if !ok || len(lines) != 3 || strings.Contains(got, "\r") {
			t.Fatalf("want two whole lines saying the stage still runs, then its result, no \\r:\n%q", got)
		}
		for _, l := range lines[:2] {
			if !strings.HasPrefix(l, "  build ...                still running (") {
				t.Errorf("a tick line is %q", l)
			}
		}
		if last := lines[2]; !strings.HasPrefix(last, "  build ...                ok (") {
			t.Errorf("the stage's last line is %q", last)
		}
		time.Sleep(time.Second)
		if out.String() != got {
			t.Errorf("the stage's ticker still writes after it ended:\n%q", out.String())
		}
	})
}

// TestWhatIsWrittenDuringAStageGetsLinesOfItsOwn: the cluster's progress or
// the controller's log (-v) written while a stage's line is open ends that
// line first, and the stage's result starts it again.
func TestWhatIsWrittenDuringAStageGetsLinesOfItsOwn(t *testing.T) {
	var out bytes.Buffer
	r := &run{opts: Options{Out: &out, StageTick: time.Hour}.withDefaults(), rep: &report.Report{}}
	r.runStages(context.Background(), stage{name: "start controller", do: func(context.Context) error {
		fmt.Fprintln(r.opts.Out, "  | --- controller started (pid 1) ---")
		fmt.Fprintln(r.opts.Out, "  | INFO starting manager")
		return nil
	}}, stage{name: "proxy stand-in", do: func(context.Context) error { return nil }})
	want := "  start controller ...     \n" +
		"  | --- controller started (pid 1) ---\n" +
		"  | INFO starting manager\n" +
		"  start controller ...     ok (Ns)\n" +
		"  proxy stand-in ...       ok (Ns)\n"
	if got := regexp.MustCompile(`\(\d+\.\ds\)`).ReplaceAllString(out.String(), "(Ns)"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestASelectionSaysItSkipsTheUnitTests: with --run the unit-test stage does
// not run, and its line says so instead of vanishing from the stage list.
func TestASelectionSaysItSkipsTheUnitTests(t *testing.T) {
	var out lockedBuffer
	st := step.Step{Name: "step07", UnitTests: "TestConditions", Checks: []checks.Check{{ID: "a"}, {ID: "b"}}}
	r := &run{opts: Options{Out: &out, Step: st, Checks: st.Checks[:1]}.withDefaults(), rep: &report.Report{}}
	binary := ""
	if !r.runStages(context.Background(), r.unitStages(&binary)...) {
		t.Fatal("a selection's skipped unit tests stopped the run")
	}
	if got := out.String(); !strings.HasPrefix(got, "  unit tests ...           skipped (") {
		t.Errorf("the stage list says %q", got)
	}
	if len(r.rep.Stages) != 0 {
		t.Errorf("a stage that did not run is in the report: %+v", r.rep.Stages)
	}
}

// TestAJustStartedControllerIsNotCalledUnregistered: a check that fails
// moments after it restarted the controller must not blame a reconciler
// that has had no time to run (its metrics count from zero).
func TestAJustStartedControllerIsNotCalledUnregistered(t *testing.T) {
	now := time.Date(2026, 12, 4, 2, 0, 0, 0, time.UTC)
	lines := []ctrlproc.Line{
		{At: now.Add(-10 * time.Second), Text: "--- controller started (pid 1) ---"},
		{At: now.Add(-2 * time.Second), Text: "--- controller exited: killed by signal 9 (killed) ---"},
		{At: now.Add(-400 * time.Millisecond), Text: "--- controller started (pid 2) ---"},
	}
	if !justStarted(lines, now, 2500*time.Millisecond) {
		t.Error("a controller started 0.4 s ago was not seen as just started")
	}
	if justStarted(lines[:2], now, 2500*time.Millisecond) {
		t.Error("a controller started 10 s ago was seen as just started")
	}
	if justStarted(nil, now, 2500*time.Millisecond) {
		t.Error("a window without a start was seen as just started")
	}
}

// TestAUnitStageThatRanNoTestSaysSo: a deleted, renamed or skipped unit test
// leaves go test "ok"; the stage must not.
func TestAUnitStageThatRanNoTestSaysSo(t *testing.T) {
	for out, want := range map[string]string{
		"testing: warning: no tests to run\nPASS\nok  \texample.com/x\t0.01s [no tests to run]\n":    "ran no test",
		"=== RUN   TestConditionsFor\n--- SKIP: TestConditionsFor (0.00s)\nPASS\n":                   "skipped TestConditionsFor",
		"=== RUN   TestConditionsFor\n--- PASS: TestConditionsFor (0.00s)\nPASS\n":                   "",
		"=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n    --- SKIP: TestB/x (0.00s)\n": "skipped TestB/x",
	} {
		if got := ranNoTest(out); got != want {
			t.Errorf("ranNoTest(%q) = %q, want %q", out, got, want)
		}
	}
}

// TestTheHarnessMarksItsOwnStages: a stage the harness defines as its own
// reports Harness, pass or fail; a stage of the submission's never does.
func TestTheHarnessMarksItsOwnStages(t *testing.T) {
	r := &run{opts: Options{StageTick: time.Hour}.withDefaults(), rep: &report.Report{}}
	ctx := context.Background()
	failed := fmt.Errorf("the control plane did not start")
	for _, s := range []stage{
		{name: "build", do: func(context.Context) error { return nil }},
		{name: "proxy stand-in", harness: true, do: func(context.Context) error { return nil }},
		{name: "install CRD", do: func(context.Context) error { return failed }},
		{name: "cluster", harness: true, do: func(context.Context) error { return failed }},
	} {
		r.runStages(ctx, s)
	}
	want := []report.Stage{
		{Name: "build", Status: report.Pass},
		{Name: "proxy stand-in", Status: report.Pass, Harness: true},
		{Name: "install CRD", Status: report.Fail, Detail: failed.Error()},
		{Name: "cluster", Status: report.Fail, Detail: failed.Error(), Harness: true},
	}
	if len(r.rep.Stages) != len(want) {
		t.Fatalf("stages %+v, want %+v", r.rep.Stages, want)
	}
	for i, st := range r.rep.Stages {
		st.Duration = 0
		if !reflect.DeepEqual(st, want[i]) {
			t.Errorf("stage %d: %+v, want %+v", i, st, want[i])
		}
	}
}

// TestTheDriverStopsAtTheFirstFailure: runStages runs its stages in order
// and stops at the first that fails; a stage that fails through (the unit
// tests) lets the next run, unless its error is final (stopErr); a skipped
// stage prints its line, adds no row and runs nothing.
func TestTheDriverStopsAtTheFirstFailure(t *testing.T) {
	failed := errors.New("red")
	var ran []string
	st := func(name string, err error) stage {
		return stage{name: name, do: func(context.Context) error { ran = append(ran, name); return err }}
	}
	for _, tc := range []struct {
		name   string
		stages []stage
		goesOn bool
		ran    []string
		rows   int
	}{
		{"all pass", []stage{st("a", nil), st("b", nil)}, true, []string{"a", "b"}, 2},
		{"a failure stops", []stage{st("a", failed), st("b", nil)}, false, []string{"a"}, 1},
		{"a failure through goes on", []stage{{name: "a", failThrough: true, do: st("a", failed).do}, st("b", nil)}, true, []string{"a", "b"}, 2},
		{"a final failure through stops", []stage{{name: "a", failThrough: true, do: st("a", stopErr{failed}).do}, st("b", nil)}, false, []string{"a"}, 1},
		{"a skip runs nothing", []stage{{name: "a", skip: "why", do: st("a", failed).do}, st("b", nil)}, true, []string{"b"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran = nil
			var out bytes.Buffer
			r := &run{opts: Options{Out: &out, StageTick: time.Hour}.withDefaults(), rep: &report.Report{}}
			if got := r.runStages(context.Background(), tc.stages...); got != tc.goesOn {
				t.Errorf("goes on: %v, want %v", got, tc.goesOn)
			}
			if !slices.Equal(ran, tc.ran) || len(r.rep.Stages) != tc.rows {
				t.Errorf("ran %v with %d rows, want %v with %d\n%s", ran, len(r.rep.Stages), tc.ran, tc.rows, out.String())
			}
		})
	}
}
