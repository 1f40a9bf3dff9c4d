package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// run is a report of the made-up step07 with three checks; edit changes it
// before the summary is computed.
func run(edit func(r *Report)) *Report {
	r := &Report{
		Dir: "step07", Cluster: "envtest",
		Stages: []Stage{{Name: "build", Status: Pass}, {Name: "generate", Status: Pass}, {Name: "unit tests", Status: Pass}},
		Checks: []CheckResult{
			{ID: "crd-schema", Title: "the CRD", Points: 10, Earned: 10, Status: Pass},
			{ID: "self-heal", Title: "self-heals", Points: 15, Earned: 15, Status: Pass},
			{ID: "quiescent", Title: "quiet", Points: 5, Earned: 5, Status: Pass},
		},
	}
	edit(r)
	r.Finish()
	return r
}

func fail(c *CheckResult, hint string) {
	c.Status, c.Earned, c.Hint, c.Message = Fail, 0, hint, "expected: True\nobserved: nothing"
}

func skip(c *CheckResult, why string) { c.Status, c.Earned, c.Message = Skip, 0, why }

// TestTheClosingLineAgreesWithTheJSONSummary pins the terminal's last line
// for each kind of run, and holds it to the JSON report of the same run:
// success is claimed exactly when summary.ok is true, and the counts are
// the summary's.
func TestTheClosingLineAgreesWithTheJSONSummary(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(r *Report)
		want string
	}{
		{"every check passes", func(*Report) {},
			"All 3 checks pass (30/30 points). step07 is done: the card's acceptance holds on a real API server."},
		{"some checks fail", func(r *Report) { fail(&r.Checks[1], "watch Services"); fail(&r.Checks[2], "write less") },
			"1/3 checks pass, 10/30 points. Fix self-heal first, then run make check again; make hint ID=self-heal says more; " +
				"make check CHECK_FLAGS=--all shows every failure in full."},
		{"one check fails", func(r *Report) { fail(&r.Checks[2], "write less") },
			"2/3 checks pass, 25/30 points. Fix quiescent first, then run make check again; make hint ID=quiescent says more."},
		{"some checks were skipped", func(r *Report) { skip(&r.Checks[2], "not run: no admin client") },
			"2/3 checks pass, 25/30 points, 1 not run: quiescent no admin client. Run make check again."},
		{"the build failed", func(r *Report) {
			r.Stages = []Stage{{Name: "build", Status: Fail, Detail: "step07/cmd/main.go:3:1: syntax error"}}
			for i := range r.Checks {
				skip(&r.Checks[i], "not run: an earlier stage failed")
			}
		}, "0/3 checks pass, 0/30 points, 3 not run: no check ran, as the build stage failed. " +
			"Fix the build stage (above), then run make check again."},
		{"the unit tests failed and every check passed", func(r *Report) { r.Stages[2].Status, r.Stages[2].Detail = Fail, "x_test.go:9: wrong" },
			"3/3 checks pass, 30/30 points, but the unit tests stage failed. Fix the unit tests stage (above), then run make check again."},
		{"interrupted after the first check", func(r *Report) {
			r.Interrupted = true
			skip(&r.Checks[1], "not run to the end: interrupted")
			skip(&r.Checks[2], "not run: interrupted")
		}, "Interrupted: 1/3 checks pass, 10/30 points, 2 not run. No verdict: the run was stopped before it ended " +
			"(everything it started has been stopped); run make check again."},
		{"interrupted after every check passed", func(r *Report) { r.Interrupted = true },
			"Interrupted: 3/3 checks pass, 30/30 points. No verdict: the run was stopped before it ended " +
				"(everything it started has been stopped); run make check again."},
		{"a selection passes", func(r *Report) { r.Partial = true; r.Checks = r.Checks[1:2] },
			"The selected check passes. Run make check without --run for the whole step."},
		{"two selected pass", func(r *Report) { r.Partial = true; r.Checks = r.Checks[1:] },
			"The 2 selected checks pass. Run make check without --run for the whole step."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(tc.edit)
			var term bytes.Buffer
			r.Terminal(&term)
			lines := strings.Split(strings.TrimRight(term.String(), "\n"), "\n")
			last := lines[len(lines)-1]
			if last != tc.want {
				t.Errorf("closing line\n got: %s\nwant: %s\nwhole output:\n%s", last, tc.want, term.String())
			}

			var js bytes.Buffer
			if err := json.NewEncoder(&js).Encode(r); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Summary     Summary `json:"summary"`
				Partial     bool    `json:"partial"`
				Interrupted bool    `json:"interrupted"`
			}
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			s := doc.Summary
			claims := strings.Contains(last, "All ") || strings.Contains(last, " done") ||
				strings.HasPrefix(last, "The ") && strings.Contains(last, "selected check")
			if claims != s.OK {
				t.Errorf("the closing line %q claims success: %v; the JSON summary's ok: %v", last, claims, s.OK)
			}
			if doc.Interrupted != strings.Contains(last, "No verdict") {
				t.Errorf("JSON interrupted=%v, closing line %q", doc.Interrupted, last)
			}
			if (s.Skipped > 0 || doc.Interrupted) && s.OK {
				t.Errorf("summary.ok with %d checks not run (interrupted: %v)", s.Skipped, doc.Interrupted)
			}
			if !s.OK {
				counts := fmt.Sprintf("%d/%d checks pass, %d/%d points", s.Passed, s.Total, s.Points, s.TotalPoints)
				if !strings.Contains(last, counts) {
					t.Errorf("the closing line %q lacks the JSON summary's %q", last, counts)
				}
			}
		})
	}
}

// TestTheTerminalShowsTheFirstFailureInFull: one full block, the first
// failing check's; every other failure in one line with its hint, and its
// first cause beneath when it has one; the run's log once.
func TestTheTerminalShowsTheFirstFailureInFull(t *testing.T) {
	tail := []string{"--- controller started (pid 1) ---", "INFO Starting workers"}
	r := run(func(r *Report) {
		r.Stages[2].Status, r.Stages[2].Detail = Fail, "go test in step07:\n--- FAIL: TestX (0.00s)\n    x_test.go:9: wrong\nFAIL"
		for i, hint := range []string{"mark the schema", "watch Services", "write less"} {
			fail(&r.Checks[i], hint)
			r.Checks[i].Logs = tail
		}
		r.Checks[2].Logs, r.Checks[2].LogsAboutCheck = []string{"ERROR reconciling ns-q/quiet"}, true
		r.Checks[1].Causes = []string{"the Service event woke no EdgeRoute\nsecond line"}
		r.Checks[2].Message = "the status\n  expected: one generation\n  observed: Accepted gen 2, Programmed gen 1\nmore"
	})
	var focused, all bytes.Buffer
	r.Terminal(&focused)
	r.TerminalView(&all, View{All: true})
	out := focused.String()
	if n := strings.Count(out, "\nFAIL "); n != 1 || !strings.Contains(out, "\nFAIL crd-schema: the CRD\n") {
		t.Errorf("want one full block, crd-schema's; got %d:\n%s", n, out)
	}
	for _, want := range []string{
		"  FAIL stage unit tests: x_test.go:9: wrong\n",
		"  FAIL self-heal: watch Services\n       cause: the Service event woke no EdgeRoute\n",
		"  FAIL quiescent: write less\n       observed: Accepted gen 2, Programmed gen 1\n",
		"controller log: no line names this check's objects (the run's last lines are below)\n",
		"controller log, the run's last 2 lines:\n  | --- controller started (pid 1) ---\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the focused output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "Starting workers") != 1 || strings.Contains(out, "reconciling ns-q") {
		t.Errorf("the run's log is not shown once, or a one-line failure's log is shown:\n%s", out)
	}
	everything := all.String()
	if n := strings.Count(everything, "\nFAIL "); n != 4 || strings.Count(everything, "Starting workers") != 1 ||
		!strings.Contains(everything, "controller log, the lines about this check's objects (1):\n       | ERROR reconciling ns-q/quiet") ||
		strings.Contains(everything, "Also failing") {
		t.Errorf("--all: want 4 full blocks (a stage, three checks), the run's log once and quiescent's own line:\n%s", everything)
	}
}

// TestAFailureWithNoLogOfItsOwnShowsNone: a probe check's failure (the
// grader's test called the code, not the controller) carries no log, and
// its block says nothing about the controller's; a one-line failure with
// neither a cause nor an "observed:" line shows its message's first line,
// what the check saw.
func TestAFailureWithNoLogOfItsOwnShowsNone(t *testing.T) {
	r := run(func(r *Report) {
		fail(&r.Checks[0], "write the status once")
		r.Checks[0].Message = "probe_test.go:9: two writes in one call"
		fail(&r.Checks[1], "one generation at a time")
		r.Checks[1].Message = "EdgeRoute ns/a: its status was written one condition at a time: readers saw two generations at once:\n  - rv 5: Accepted gen 2, Programmed gen 1"
	})
	var out bytes.Buffer
	r.Terminal(&out)
	got := out.String()
	if strings.Contains(got, "controller log") {
		t.Errorf("a failure with no log of its own speaks of the controller's log:\n%s", got)
	}
	// A first line that ends with a colon is followed by what it announces.
	if want := "  FAIL self-heal: one generation at a time\n       observed: EdgeRoute ns/a: its status was written one condition at a time: readers saw two generations at once: rv 5: Accepted gen 2, Programmed gen 1\n"; !strings.Contains(got, want) {
		t.Errorf("want %q:\n%s", want, got)
	}
}

// TestTheStageThatStoppedTheRunIsShownInFull: the card's sketch fails the
// unit tests (which do not stop a run) and then start controller (which
// does, for a missing RBAC marker): the block in full is start
// controller's, its hint the marker to add; the unit tests get one line, and
// the closing line names the stage that stopped the run.
func TestTheStageThatStoppedTheRunIsShownInFull(t *testing.T) {
	r := run(func(r *Report) {
		r.Stages[2].Status, r.Stages[2].Detail = Fail, "go test in step07:\n--- FAIL: TestX (0.00s)\n    x_test.go:9: wrong\nFAIL"
		r.Stages = append(r.Stages, Stage{Name: "start controller", Status: Fail, Detail: "the controller runs but its workers have not started after 3s\n" +
			"cause: the controller is forbidden to list \"services\"\nhint:  add the RBAC marker above Reconcile: // +kubebuilder:rbac:groups=\"\",resources=services,verbs=get;list;watch"})
		for i := range r.Checks {
			r.Checks[i].Status, r.Checks[i].Message = Skip, "not run"
		}
	})
	r.Finish()
	var out bytes.Buffer
	r.Terminal(&out)
	got := out.String()
	for _, want := range []string{
		"\nFAIL stage start controller (",
		"hint:  add the RBAC marker above Reconcile: // +kubebuilder:rbac:groups=\"\",resources=services,verbs=get;list;watch",
		"\n  FAIL stage unit tests: x_test.go:9: wrong\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\nFAIL stage unit tests") {
		t.Errorf("the unit tests, which did not stop the run, are shown in full:\n%s", got)
	}
	if l := r.ClosingLine(View{}); !strings.Contains(l, "no check ran, as the start controller stage failed. Fix the start controller stage (above)") {
		t.Errorf("the closing line does not name the stage that stopped the run: %q", l)
	}
}

// TestTheWatchsClosingLineSaysSave: in gw10 watch a save runs the checks
// again, and make watch is what takes their flags.
func TestTheWatchsClosingLineSaysSave(t *testing.T) {
	v := View{Command: "make watch", Again: "save again"}
	r := run(func(r *Report) { fail(&r.Checks[1], "watch Services"); fail(&r.Checks[2], "write less") })
	if got, want := r.ClosingLine(v), "1/3 checks pass, 10/30 points. Fix self-heal first, then save again; make hint ID=self-heal says more; "+
		"make watch CHECK_FLAGS=--all shows every failure in full."; got != want {
		t.Errorf("closing line:\n got %q\nwant %q", got, want)
	}
	r = run(func(r *Report) {
		r.Stages = []Stage{{Name: "build", Status: Fail, Detail: "step07/cmd/main.go:3:1: syntax error"}}
		for i := range r.Checks {
			skip(&r.Checks[i], "not run: an earlier stage failed")
		}
	})
	if got, want := r.ClosingLine(v), "0/3 checks pass, 0/30 points, 3 not run: no check ran, as the build stage failed. "+
		"Fix the build stage (above), then save again."; got != want {
		t.Errorf("closing line after a compile error:\n got %q\nwant %q", got, want)
	}
}

// TestControlCharactersReachTheTerminalAsText: a controller's log line with a
// clear-screen sequence is shown, not obeyed.
func TestControlCharactersReachTheTerminalAsText(t *testing.T) {
	var out bytes.Buffer
	if _, err := (plainText{&out}).Write([]byte("log \x1b[2J\x1b[H cleared\r\tok\n")); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "log \\x1b[2J\\x1b[H cleared\\x0d\tok\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestAPassingCheckShowsItsFirstNote: a passing check's notes are evidence
// at length; the terminal shows the first and says where the rest are,
// --all shows them all, and a failing check's are all shown.
func TestAPassingCheckShowsItsFirstNote(t *testing.T) {
	r := run(func(r *Report) {
		r.Checks[0].Notes = []string{"wrote once", "wrote twice", "wrote thrice"}
		fail(&r.Checks[1], "watch Services")
		r.Checks[1].Notes = []string{"saw a", "saw b"}
		r.Checks[2].Notes = []string{"idle"}
	})
	var focused, all bytes.Buffer
	r.Terminal(&focused)
	r.TerminalView(&all, View{All: true})
	out := focused.String()
	for _, want := range []string{
		"crd-schema: wrote once (+2 more)\n",
		"(2 notes more in all, marked \"+n more\" above: the rest of what those checks measured, in the timeline and in make check CHECK_FLAGS=--all)\n",
		"self-heal: saw a\nself-heal: saw b\n",
		"quiescent: idle\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the focused output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "wrote twice") {
		t.Errorf("the focused output shows a passing check's second note:\n%s", out)
	}
	if everything := all.String(); !strings.Contains(everything, "crd-schema: wrote once\ncrd-schema: wrote twice\ncrd-schema: wrote thrice\n") || strings.Contains(everything, "+n more") {
		t.Errorf("--all does not show every note:\n%s", everything)
	}
}
