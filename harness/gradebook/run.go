package gradebook

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/10xdev/gw10/harness/report"
)

// GradesDir is where Run keeps the grades, under its output directory: one
// directory per submission commit, grader commit and repository.
const GradesDir = "grades"

// ErrHarness is wrapped by a Grader's error when the grade stopped on a
// failure of the harness's own (a control plane that did not start on a
// busy machine): Run grades such a submission once more.
var ErrHarness = errors.New("the harness's own stage failed")

// Job is one grade for a Grader to make.
type Job struct {
	Entry Entry
	// Out is the directory for the grade's reports (it exists, holding the
	// submission's SubmissionFile).
	Out string
	// Log receives everything the grade prints.
	Log io.Writer
}

// Grader makes one grade: the reports of Job.Entry's repository at its ref
// in Job.Out, as `gw10 grade --submission` writes them. An error with no
// grade.json written means no grade.
type Grader func(ctx context.Context, job Job) error

// Resolver says which commit an entry's ref names (a grade's clone of the
// repository resolves it the same way).
type Resolver func(ctx context.Context, e Entry) (commit string, err error)

// Options say what Run grades, how, and where.
type Options struct {
	Entries []Entry
	// Out holds the gradebook and, under GradesDir, the grades.
	Out string
	// Jobs is how many grades run at once (at least 1).
	Jobs int
	// GraderCommit is the commit the grader was built from: a stored grade
	// of a submission's commit by this grader is not made again. Empty (a
	// grader built from a working tree): every submission is graded.
	GraderCommit string
	Resolve      Resolver
	Grade        Grader
	// Progress receives one line per submission, and a line naming the
	// grades still running every Heartbeat (default a minute).
	Progress  io.Writer
	Heartbeat time.Duration
}

// Summary counts what a Run did.
type Summary struct {
	Graded, Reused, NoGrade int
	Book                    *Book
}

// plan is one entry's way to its row.
type plan struct {
	entry  Entry
	commit string
	dir    string // its grade's directory
	row    Row
	// sameAs is the earlier entry of the roster this one is a copy of (the
	// same repository at the same commit): one row for both.
	sameAs *plan
	// from is a stored grade of the same commit by the same grader, made
	// for another repository: copied, not graded again.
	from string
	// waitFor is the entry of this run that grades the same commit.
	waitFor *plan
	done    chan struct{}
	err     error
}

// Run grades the roster's entries that have no stored grade, at most Jobs at
// a time, and returns the gradebook of the roster: one row per submission
// (an entry naming the same repository and commit as an earlier one shares
// its row), with a row saying why for an entry that got no grade.
func Run(ctx context.Context, opts Options) (Summary, error) {
	if opts.Jobs < 1 {
		opts.Jobs = 1
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = time.Minute
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	grades := filepath.Join(opts.Out, GradesDir)
	if err := os.MkdirAll(grades, 0o755); err != nil {
		return Summary{}, fmt.Errorf("the gradebook's directory: %w", err)
	}
	// What an interrupted run left.
	if stale, _ := filepath.Glob(filepath.Join(grades, ".grading-*")); len(stale) > 0 {
		for _, s := range stale {
			_ = os.RemoveAll(s)
		}
	}
	p := &progress{w: opts.Progress, total: len(opts.Entries)}
	plans := resolveAll(ctx, opts, p)
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}
	var todo, before []*plan
	byCommit := map[string]*plan{}
	var sum Summary
	for _, pl := range plans {
		if pl.err != nil {
			continue
		}
		switch {
		case pl.sameAs != nil:
		case opts.GraderCommit != "" && isGrade(pl.dir):
			before = append(before, pl)
		case opts.GraderCommit != "" && findGrade(grades, pl.commit, opts.GraderCommit) != "":
			pl.from = findGrade(grades, pl.commit, opts.GraderCommit)
			todo = append(todo, pl)
		case byCommit[pl.commit] != nil:
			pl.waitFor = byCommit[pl.commit]
			todo = append(todo, pl)
		default:
			byCommit[pl.commit] = pl
			todo = append(todo, pl)
		}
	}
	sum.Reused = len(before)
	p.total = len(todo)
	p.printf("gw10 gradebook: %d submissions, %d graded before by this grader, %d to grade, %d at a time\n",
		len(plans), len(before), len(todo), opts.Jobs)
	for _, pl := range before {
		p.line(pl.entry, "graded before: "+headlineOf(pl.dir))
	}

	// Jobs workers take the submissions in the roster's order. One that
	// waits for another grade of its commit waits for an earlier one, which
	// a worker already holds.
	running := &runningSet{since: map[string]time.Time{}}
	stopBeat := heartbeat(p, opts.Heartbeat, running)
	queue := make(chan *plan)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range opts.Jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pl := range queue {
				reused, graded := work(ctx, opts, pl, p, running)
				mu.Lock()
				sum.Reused += reused
				sum.Graded += graded
				mu.Unlock()
			}
		}()
	}
	for _, pl := range todo {
		if ctx.Err() != nil {
			pl.err = ctx.Err()
			close(pl.done)
			continue
		}
		queue <- pl
	}
	close(queue)
	wg.Wait()
	stopBeat()
	if err := ctx.Err(); err != nil {
		return sum, fmt.Errorf("stopped (the grades made so far are kept; run again to grade the rest): %w", err)
	}

	var rows []Row
	for _, pl := range plans {
		switch {
		case pl.sameAs != nil:
			continue
		case pl.err != nil:
			sum.NoGrade++
			rows = append(rows, Row{Learner: pl.entry.Learner, Repository: pl.entry.Repository, Ref: pl.entry.Ref, Commit: pl.commit, NoGrade: oneLine(pl.err.Error())})
			continue
		}
		if err := WriteSubmission(pl.dir, pl.submission()); err != nil {
			return sum, err
		}
		g, err := LoadGraded(pl.dir)
		if err != nil {
			return sum, err
		}
		rows = append(rows, RowOf(g))
	}
	sum.Book = NewBook(rows)
	return sum, nil
}

// work makes one plan's grade: a copy of another grade of its commit, or a
// grade of its own. It says whether it copied one or graded one.
func work(ctx context.Context, opts Options, pl *plan, p *progress, running *runningSet) (reused, graded int) {
	defer close(pl.done)
	if pl.waitFor != nil {
		<-pl.waitFor.done
		if pl.waitFor.err == nil {
			pl.from = pl.waitFor.dir
		}
	}
	if pl.from != "" {
		if pl.err = copyGrade(pl.from, pl.dir, pl.entry); pl.err != nil {
			p.done(pl.entry, "no grade: "+pl.err.Error())
			return 0, 0
		}
		p.done(pl.entry, "the same commit was graded for another repository: its grade, copied: "+headlineOf(pl.dir))
		return 1, 0
	}
	if pl.err = gradeOne(ctx, opts, pl, p, running); pl.err != nil {
		return 0, 0
	}
	return 0, 1
}

func (pl *plan) submission() Submission {
	return Submission{Learner: pl.entry.Learner, Repository: pl.entry.Repository, Ref: pl.entry.Ref}
}

// resolveAll finds each entry's commit (a few at a time: each is a clone)
// and its grade's directory.
func resolveAll(ctx context.Context, opts Options, p *progress) []*plan {
	plans := make([]*plan, len(opts.Entries))
	sem := make(chan struct{}, min(4, max(opts.Jobs, 2)))
	var wg sync.WaitGroup
	for i, e := range opts.Entries {
		plans[i] = &plan{entry: e, done: make(chan struct{})}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			commit, err := opts.Resolve(ctx, e)
			if err != nil {
				plans[i].err = err
				p.line(e, "no grade: "+oneLine(err.Error()))
				return
			}
			plans[i].commit = commit
			plans[i].dir = filepath.Join(opts.Out, GradesDir, gradeDirName(commit, opts.GraderCommit, e.Repository))
		}()
	}
	wg.Wait()
	seen := map[[2]string]*plan{}
	for _, pl := range plans {
		if pl.err != nil {
			continue
		}
		key := [2]string{pl.entry.Repository, pl.commit}
		if first := seen[key]; first != nil {
			pl.sameAs = first
			p.line(pl.entry, fmt.Sprintf("the same repository and commit as line %d: one row for both", first.entry.Line))
			continue
		}
		seen[key] = pl
	}
	return plans
}

// gradeDirName names a grade's directory by what keys it: the submission's
// commit, the grader's, and the repository (the same commit in two
// learners' repositories is graded once, and copied for the second).
func gradeDirName(commit, grader, repository string) string {
	if grader == "" {
		grader = "worktree"
	}
	h := sha256.Sum256([]byte(repository))
	return fmt.Sprintf("%s-%s-%x", short(commit), short(grader), h[:4])
}

// isGrade says whether dir holds a grade.
func isGrade(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, GradeFile))
	return err == nil && st.Mode().IsRegular()
}

// findGrade is a stored grade of commit by grader, for any repository.
func findGrade(grades, commit, grader string) string {
	matches, _ := filepath.Glob(filepath.Join(grades, short(commit)+"-"+short(grader)+"-*"))
	for _, m := range matches {
		g, err := LoadGraded(m)
		if err == nil && g.Report.Grading.Submission.Commit == commit {
			return m
		}
	}
	return ""
}

func headlineOf(dir string) string {
	g, err := LoadGraded(dir)
	if err != nil {
		return err.Error()
	}
	return g.Report.Headline()
}

// copyGrade copies a grade's reports into dst, for another submission of
// the same commit.
func copyGrade(src, dst string, e Entry) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".grading-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, de := range entries {
		if !de.Type().IsRegular() || de.Name() == SubmissionFile {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, de.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, de.Name()), data, 0o644); err != nil {
			return err
		}
	}
	if err := WriteSubmission(tmp, Submission{Learner: e.Learner, Repository: e.Repository, Ref: e.Ref}); err != nil {
		return err
	}
	return replaceDir(tmp, dst)
}

// replaceDir moves a finished grade's directory into place.
func replaceDir(tmp, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// gradeOne makes one grade in a hidden directory of its own and moves it
// into place once its grade.json is written; a grade the harness itself
// could not make is made once more.
func gradeOne(ctx context.Context, opts Options, pl *plan, p *progress, running *runningSet) error {
	label := entryLabel(pl.entry)
	for attempt := 1; ; attempt++ {
		tmp, err := os.MkdirTemp(filepath.Join(opts.Out, GradesDir), ".grading-")
		if err != nil {
			return err
		}
		if err := WriteSubmission(tmp, pl.submission()); err != nil {
			return err
		}
		logf, err := os.Create(filepath.Join(tmp, "grade.log"))
		if err != nil {
			return err
		}
		p.line(pl.entry, fmt.Sprintf("grading %s at %s (%s) ...", report.Inline(pl.entry.Repository), report.Inline(orHEAD(pl.entry.Ref)), short(pl.commit)))
		running.add(label)
		start := time.Now()
		gerr := opts.Grade(ctx, Job{Entry: pl.entry, Out: tmp, Log: logf})
		running.remove(label)
		logf.Close()
		took := time.Since(start).Round(time.Second)
		if isGrade(tmp) {
			g, err := LoadGraded(tmp)
			if err != nil {
				return err
			}
			// Stored under the commit the grade names: a branch that moved
			// since it was resolved is stored as what was graded.
			dst := pl.dir
			if c := g.Report.Grading.Submission.Commit; c != pl.commit {
				dst = filepath.Join(filepath.Dir(pl.dir), gradeDirName(c, opts.GraderCommit, pl.entry.Repository))
				pl.dir, pl.commit = dst, c
			}
			if err := replaceDir(tmp, dst); err != nil {
				return err
			}
			_ = os.Remove(failedLog(pl.dir)) // an earlier run's, now answered
			p.done(pl.entry, fmt.Sprintf("%s (%s)", g.Report.Headline(), took))
			return nil
		}
		// No grade: keep the log where the next run does not read it as one.
		failed := failedLog(pl.dir)
		_ = os.Rename(filepath.Join(tmp, "grade.log"), failed)
		_ = os.RemoveAll(tmp)
		if gerr == nil {
			gerr = errors.New("the grade wrote no grade.json")
		}
		if errors.Is(gerr, ErrHarness) && attempt == 1 && ctx.Err() == nil {
			p.line(pl.entry, fmt.Sprintf("no grade: %s; grading it once more (%s)", oneLine(gerr.Error()), took))
			continue
		}
		err = fmt.Errorf("%s (its output: %s)", oneLine(gerr.Error()), failed)
		p.done(pl.entry, "no grade: "+err.Error())
		return err
	}
}

// failedLog is where the output of a grade that wrote no grade.json is
// kept, beside the grades (a run reads no grade from it).
func failedLog(dir string) string { return dir + ".failed.log" }

func orHEAD(ref string) string {
	if ref == "" {
		return "HEAD"
	}
	return ref
}

// oneLine is the last non-empty line of s, on one line.
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return report.Inline(strings.TrimSpace(lines[len(lines)-1]))
}

// entryLabel names an entry on the terminal: its roster line and its
// learner, or its repository.
func entryLabel(e Entry) string {
	who := e.Learner
	if who == "" {
		who = e.Repository
	}
	return fmt.Sprintf("line %d (%s)", e.Line, report.Inline(who))
}

// progress writes the run's lines, one at a time.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	finished int
	total    int
}

func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, args...)
}

func (p *progress) line(e Entry, what string) {
	p.printf("gw10 gradebook: %s: %s\n", entryLabel(e), what)
}

// done is the last line of an entry that was to be graded, counted.
func (p *progress) done(e Entry, what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished++
	fmt.Fprintf(p.w, "gw10 gradebook: [%d/%d] %s: %s\n", p.finished, p.total, entryLabel(e), what)
}

// runningSet is the grades running now, for the heartbeat.
type runningSet struct {
	mu    sync.Mutex
	since map[string]time.Time
}

func (r *runningSet) add(label string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.since[label] = time.Now()
}

func (r *runningSet) remove(label string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.since, label)
}

func (r *runningSet) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for label, t := range r.since {
		// A grade that just started is news in its own line already.
		if took := time.Since(t); took >= 30*time.Second {
			parts = append(parts, fmt.Sprintf("%s for %s", label, took.Round(time.Second)))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// heartbeat writes which grades are still running every d, until stopped.
func heartbeat(p *progress, d time.Duration, running *runningSet) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if s := running.String(); s != "" {
					p.printf("gw10 gradebook: still grading %s\n", s)
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
