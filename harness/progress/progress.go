// Package progress remembers, across make check runs, each check's latest
// and best result for a step in a learner's directory, and says in one line
// what changed since the last run of the same command ("Since the last make
// check: self-heal now passes; 7/10, up from 5/10"). make check and make watch
// keep records of their own: a watch run has no unit tests stage and a
// learner alternates the two, so comparing one with the other would mix
// verdicts from different runs. The file is .gw10/progress.json at the
// workbook's root (ignored by git).
package progress

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/10xdev/gw10/harness/report"
)

// Path is where the workbook at root keeps the progress of its steps.
func Path(root string) string { return filepath.Join(root, ".gw10", "progress.json") }

// The commands whose runs are remembered, as the line names them.
const (
	Check = "make check"
	Watch = "make watch run"
)

// Key names what a record is about: a step's checks run on a directory (the
// learner's module, or the solution's) by one command (Check or Watch).
type Key struct{ Command, Step, Dir string }

func (k Key) String() string { return k.Command + " " + k.Step + " " + k.Dir }

// file is the JSON of Path: one record per Key.
type file struct {
	Version int                `json:"version"`
	Records map[string]*Record `json:"records"`
}

const version = 2 // 2: records per command

// Record is what is remembered of one Key.
type Record struct {
	// Last is each check's latest result that was a verdict (pass or fail):
	// a run of a selection (--run) updates the checks it ran.
	Last map[string]report.Status `json:"last"`
	// LastFull is each check's result in the last full run: a full run's
	// line compares with it, as its counts do, so a --run try-out in between
	// does not make it say "now passes" of a check the last full run passed
	// too, or keep quiet about one it failed.
	LastFull map[string]report.Status `json:"lastFull,omitempty"`
	// Best is each check's best result: pass once it has passed.
	Best map[string]report.Status `json:"best"`
	// Passed and Total are the last full run's counts (every check ran);
	// BestPassed is the most checks a full run has passed.
	Passed     int `json:"passed"`
	Total      int `json:"total"`
	BestPassed int `json:"bestPassed"`
	// Stages is each stage's latest verdict (build, unit tests, ...): a
	// run that fixes the build says so even when no check ran before it.
	Stages map[string]report.Status `json:"stages,omitempty"`
	// LastRan lists the stages the last run gave a verdict: a stage it did
	// not reach (a failed build stops the run) is compared with an older run.
	LastRan []string `json:"lastRan,omitempty"`
	// NoChecks: the last run reached no check (it stopped at a stage), so
	// the counts are those of an earlier run.
	NoChecks bool `json:"noChecks,omitempty"`
}

// Update compares rep with what path holds under key (the last run of the
// same command), records rep, and returns what changed in one line: "" for
// the first run, an interrupted run or one in which no check ran. Only a
// full run (no --run, nothing skipped) changes the totals.
func Update(path string, key Key, rep *report.Report) (string, error) {
	f, err := load(path)
	if err != nil {
		return "", err
	}
	rec := f.Records[key.String()]
	line := Changes(key.Command, rec, rep)
	if rep.Interrupted {
		return line, nil
	}
	if rec == nil {
		rec = &Record{}
		f.Records[key.String()] = rec
	}
	if !rec.add(rep) {
		return line, nil
	}
	return line, save(path, f)
}

// Changes says what rep changed since rec, the record of command's runs:
// the checks that now pass, those that passed when they last ran and fail now, and for
// a full run the count against the last full run's. It is empty when there
// is nothing to compare.
func Changes(command string, rec *Record, rep *report.Report) string {
	if rec == nil || rep.Interrupted {
		return ""
	}
	var parts []string
	stageFixed, stageBroken := flips(rep.Stages, func(st report.Stage) (string, report.Status) { return st.Name, st.Status }, rec.Stages)
	parts = append(parts, rec.stageFlips(stageFixed, "ok", "failed")...)
	parts = append(parts, rec.stageFlips(stageBroken, "FAILED", "ok")...)
	last := rec.Last
	if full(rep) && rec.LastFull != nil {
		last = rec.LastFull
	}
	fixed, broken := flips(rep.Checks, func(c report.CheckResult) (string, report.Status) { return c.ID, c.Status }, last)
	if len(fixed) > 0 {
		parts = append(parts, names(fixed)+" now "+verb(fixed, "passes", "pass"))
	}
	if len(broken) > 0 {
		// "When it last ran": the last run may have run no check (a compile
		// error), and a --run try-out runs only some.
		parts = append(parts, names(broken)+" "+verb(broken, "passed when it last ran and fails", "passed when they last ran and fail")+" now")
	}
	s := rep.Summary
	if full(rep) && rec.Total > 0 {
		// After a run that reached no check, the counts compared are older.
		when := ""
		if rec.NoChecks {
			when = " when the checks last ran"
		}
		switch {
		case s.Passed > rec.Passed:
			parts = append(parts, fmt.Sprintf("%d/%d, up from %d/%d%s", s.Passed, s.Total, rec.Passed, rec.Total, when))
		case s.Passed < rec.Passed:
			down := fmt.Sprintf("%d/%d, down from %d/%d%s", s.Passed, s.Total, rec.Passed, rec.Total, when)
			if rec.BestPassed > rec.Passed {
				down += fmt.Sprintf(" (your best: %d/%d)", rec.BestPassed, rec.Total)
			}
			parts = append(parts, down)
		case len(fixed)+len(broken) == 0 && rec.NoChecks:
			parts = append(parts, fmt.Sprintf("%d/%d, as when the checks last ran", s.Passed, s.Total))
		case len(fixed)+len(broken) == 0:
			parts = append(parts, fmt.Sprintf("still %d/%d", s.Passed, s.Total))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Since the last " + command + ": " + strings.Join(parts, "; ") + "."
}

// stageFlips says of stages whose verdict flipped to now (from was), those
// the last run reached apart from those it stopped before (a failed build
// stops a run): "start controller FAILED (ok in an earlier run; the
// previous run stopped before it)".
func (rec *Record) stageFlips(stages []string, now, was string) []string {
	var reached, before []string
	for _, st := range stages {
		if rec.LastRan == nil || slices.Contains(rec.LastRan, st) {
			reached = append(reached, st)
		} else {
			before = append(before, st)
		}
	}
	var parts []string
	if len(reached) > 0 {
		parts = append(parts, fmt.Sprintf("%s now %s (%s when %s last ran)", names(reached), now, was, verb(reached, "it", "they")))
	}
	if len(before) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s (%s in an earlier run; the previous run stopped before %s)", names(before), now, was, verb(before, "it", "them")))
	}
	return parts
}

// flips lists the items that pass now and failed last time (fixed), and
// those that fail now and passed last time (broken).
func flips[T any](items []T, verdict func(T) (string, report.Status), last map[string]report.Status) (fixed, broken []string) {
	for _, it := range items {
		name, now := verdict(it)
		switch {
		case now == report.Pass && last[name] == report.Fail:
			fixed = append(fixed, name)
		case now == report.Fail && last[name] == report.Pass:
			broken = append(broken, name)
		}
	}
	return fixed, broken
}

// full says whether rep is a verdict on every check of the step.
func full(rep *report.Report) bool {
	return !rep.Partial && !rep.Interrupted && rep.Summary.Skipped == 0 && rep.Summary.Total > 0
}

// add records rep and says whether anything was recorded.
func (rec *Record) add(rep *report.Report) bool {
	if rec.Last == nil {
		rec.Last = map[string]report.Status{}
	}
	if rec.Best == nil {
		rec.Best = map[string]report.Status{}
	}
	changed := false
	ran := []string{}
	for _, st := range rep.Stages {
		if st.Status != report.Pass && st.Status != report.Fail {
			continue
		}
		if rec.Stages == nil {
			rec.Stages = map[string]report.Status{}
		}
		rec.Stages[st.Name] = st.Status
		ran = append(ran, st.Name)
		changed = true
	}
	if changed {
		rec.LastRan = ran
	}
	checked := false
	for _, c := range rep.Checks {
		if c.Status != report.Pass && c.Status != report.Fail {
			continue
		}
		rec.Last[c.ID] = c.Status
		if rec.Best[c.ID] != report.Pass {
			rec.Best[c.ID] = c.Status
		}
		changed, checked = true, true
	}
	if changed {
		rec.NoChecks = !checked
	}
	if full(rep) {
		rec.LastFull = map[string]report.Status{}
		for _, c := range rep.Checks {
			rec.LastFull[c.ID] = c.Status
		}
		rec.Passed, rec.Total = rep.Summary.Passed, rep.Summary.Total
		rec.BestPassed = max(rec.BestPassed, rec.Passed)
		changed = true
	}
	return changed
}

// names lists at most three check IDs.
func names(ids []string) string {
	const most = 3
	if len(ids) > most {
		return strings.Join(ids[:most], ", ") + fmt.Sprintf(" and %d more", len(ids)-most)
	}
	if len(ids) == 1 {
		return ids[0]
	}
	return strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
}

func verb(ids []string, one, many string) string {
	if len(ids) == 1 {
		return one
	}
	return many
}

func load(path string) (*file, error) {
	f := &file{Version: version, Records: map[string]*Record{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, err
	}
	var got file
	if err := json.Unmarshal(data, &got); err != nil || got.Version != version || got.Records == nil {
		return f, nil // unreadable or of another version: start afresh
	}
	return &got, nil
}

// save writes f to path through a temporary file, so that a run stopped
// while writing never leaves half a file.
func save(path string, f *file) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".progress-*.json")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
