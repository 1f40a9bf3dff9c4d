package progress

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/10xdev/gw10/harness/report"
)

// result is a run of the made-up step07's checks a to e: passing lists those
// that pass, the others fail.
func result(partial bool, passing ...string) *report.Report {
	ids := []string{"a", "b", "c", "d", "e"}
	if partial {
		ids = passing
	}
	rep := &report.Report{Dir: "step07", Partial: partial}
	for _, id := range ids {
		c := report.CheckResult{ID: id, Points: 10, Status: report.Fail}
		for _, p := range passing {
			if p == id {
				c.Status, c.Earned = report.Pass, 10
			}
		}
		rep.Checks = append(rep.Checks, c)
	}
	rep.Finish()
	return rep
}

// failing is a --run of the checks ids, each failing.
func failing(ids ...string) *report.Report {
	rep := &report.Report{Dir: "step07", Partial: true}
	for _, id := range ids {
		rep.Checks = append(rep.Checks, report.CheckResult{ID: id, Points: 10, Status: report.Fail})
	}
	rep.Finish()
	return rep
}

func TestProgressAcrossRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".gw10", "progress.json")
	key := Key{Check, "step07", "step07"}
	steps := []struct {
		name string
		rep  *report.Report
		want string
	}{
		{"the first run says nothing", result(false), ""},
		{"the same again", result(false), "Since the last make check: still 0/5."},
		{"two checks fixed", result(false, "a", "b"), "Since the last make check: a and b now pass; 2/5, up from 0/5."},
		{"a selection reports what it ran, not totals", result(true, "c"), "Since the last make check: c now passes."},
		{"a full run after the selection counts against the last full run", result(false, "a", "b", "c"),
			"Since the last make check: c now passes; 3/5, up from 2/5."},
		{"a try-out that breaks a check", failing("c"), "Since the last make check: c passed when it last ran and fails now."},
		{"the full run after it compares with the last full run, where c passed too", result(false, "a", "b", "c"),
			"Since the last make check: still 3/5."},
		{"a check broken", result(false, "a", "c"), "Since the last make check: b passed when it last ran and fails now; 2/5, down from 3/5."},
		{"fixed and broken at once, with the best recalled", result(false, "b"),
			"Since the last make check: b now passes; a and c passed when they last ran and fail now; 1/5, down from 2/5 (your best: 3/5)."},
		{"an interrupted run says nothing and records nothing", func() *report.Report {
			r := result(false, "a", "b", "c", "d", "e")
			r.Interrupted = true
			r.Finish()
			return r
		}(), ""},
		{"many fixed", result(false, "a", "b", "c", "d", "e"), "Since the last make check: a, c, d and 1 more now pass; 5/5, up from 1/5."},
	}
	for _, s := range steps {
		got, err := Update(path, key, s.rep)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got != s.want {
			t.Errorf("%s:\n got %q\nwant %q", s.name, got, s.want)
		}
	}

	// Another directory of the same step has a progress of its own.
	if got, err := Update(path, Key{Check, "step07", "solutions/step07"}, result(false, "a")); err != nil || got != "" {
		t.Errorf("the first run of another directory: %q, %v", got, err)
	}
	// A file that cannot be read is started afresh, not an error.
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Update(path, key, result(false)); err != nil || got != "" {
		t.Errorf("after a corrupt file: %q, %v", got, err)
	}
	if got, _ := Update(path, key, result(false, "a")); got != "Since the last make check: a now passes; 1/5, up from 0/5." {
		t.Errorf("after a corrupt file, the next run: %q", got)
	}
}

// withStages gives rep the stages of a run: those named in failed fail, the
// others pass; after a failed build nothing else runs.
func withStages(rep *report.Report, failed ...string) *report.Report {
	brokenBuild := false
	for _, name := range []string{"build", "unit tests", "start controller"} {
		st := report.Stage{Name: name, Status: report.Pass}
		if brokenBuild {
			st.Status = report.Skip
		}
		for _, f := range failed {
			if f == name {
				st.Status = report.Fail
				brokenBuild = name == "build"
			}
		}
		rep.Stages = append(rep.Stages, st)
	}
	return rep
}

// noChecks is a run in which no check ran (the build failed, say).
func noChecks() *report.Report {
	r := &report.Report{Dir: "step07"}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		r.Checks = append(r.Checks, report.CheckResult{ID: id, Points: 10, Status: report.Skip})
	}
	r.Finish()
	return r
}

// TestAFixedStageIsSaid: a run that fixes the build (no check ran the run
// before) or the unit tests says so, and one that breaks them too.
func TestAFixedStageIsSaid(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".gw10", "progress.json")
	key := Key{Check, "step07", "step07"}
	steps := []struct {
		name string
		rep  *report.Report
		want string
	}{
		{"the first run: unit tests fail", withStages(result(false), "unit tests"), ""},
		{"the build breaks: no check runs", withStages(noChecks(), "build"), "Since the last make check: build now FAILED (ok when it last ran)."},
		{"the build fixed (the unit tests' last verdict was a failure, and they pass now too)", withStages(result(false, "a")),
			"Since the last make check: build now ok (failed when it last ran); unit tests ok (failed in an earlier run; the previous run stopped before it); a now passes; 1/5, up from 0/5 when the checks last ran."},
		{"only the unit tests break", withStages(result(false, "a"), "unit tests"),
			"Since the last make check: unit tests now FAILED (ok when it last ran); still 1/5."},
		{"the build breaks again", withStages(noChecks(), "build"), "Since the last make check: build now FAILED (ok when it last ran)."},
		{"the build fixed, the controller does not start: its last run was two runs ago", withStages(noChecks(), "unit tests", "start controller"),
			"Since the last make check: build now ok (failed when it last ran); start controller FAILED (ok in an earlier run; the previous run stopped before it)."},
		{"every stage ok again, the checks as they were: compared with the run that reached them", withStages(result(false, "a")),
			"Since the last make check: unit tests and start controller now ok (failed when they last ran); 1/5, as when the checks last ran."},
	}
	for _, s := range steps {
		got, err := Update(path, key, s.rep)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got != s.want {
			t.Errorf("%s:\n got %q\nwant %q", s.name, got, s.want)
		}
	}
}

// TestMakeCheckComparesWithMakeCheck: make check and make watch keep records
// of their own, and the line names the command it compares with. A watch
// run (no unit tests stage) between two make checks changes neither the
// stages nor the counts the second make check is compared with.
func TestMakeCheckComparesWithMakeCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".gw10", "progress.json")
	check, watch := Key{Check, "step07", "step07"}, Key{Watch, "step07", "step07"}
	watchRun := func(passing ...string) *report.Report {
		r := result(false, passing...)
		r.Stages = []report.Stage{{Name: "build", Status: report.Pass}}
		return r
	}
	steps := []struct {
		name string
		key  Key
		rep  *report.Report
		want string
	}{
		{"a make check: the unit tests fail, 0/5", check, withStages(result(false), "unit tests"), ""},
		{"the first watch run says nothing", watch, watchRun("a"), ""},
		{"the next watch run compares with the watch run", watch, watchRun("a", "b", "c", "d", "e"),
			"Since the last make watch run: b, c, d and 1 more now pass; 5/5, up from 1/5."},
		{"make check again: against the last make check, not the watch run", check, withStages(result(false, "a", "b", "c")),
			"Since the last make check: unit tests now ok (failed when it last ran); a, b and c now pass; 3/5, up from 0/5."},
		{"and make check once more", check, withStages(result(false, "a", "b", "c")), "Since the last make check: still 3/5."},
	}
	for _, s := range steps {
		got, err := Update(path, s.key, s.rep)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got != s.want {
			t.Errorf("%s:\n got %q\nwant %q", s.name, got, s.want)
		}
	}
}
