package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/10xdev/gw10/harness/grade"
	"github.com/10xdev/gw10/harness/gradebook"
	"github.com/10xdev/gw10/harness/steps"
)

// gradebookCommand is `gw10 gradebook`: grade a roster (`--roster`), or
// `gw10 gradebook merge <dirs>`: the gradebook of grades made elsewhere
// (the cohort workflow's artifacts, other runs), or `gw10 gradebook plan`:
// the cohort workflow's matrix of a roster.
func gradebookCommand(ctx context.Context, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "merge":
			return runGradebookMerge(args[1:], os.Stdout)
		case "plan":
			return runGradebookPlan(args[1:], os.Stdout)
		}
	}
	return runGradebook(ctx, args)
}

// gradebookFlags are gw10 gradebook's.
type gradebookFlags struct {
	roster, out, jobs, root, upstreamRef, step, cluster string
}

func (f *gradebookFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.roster, "roster", "", "the roster: one submission a line (path, git URL or bundle; optional ref and learner name), or CSV")
	fs.StringVar(&f.out, "out", "reports/gradebook", "directory for gradebook.csv, gradebook.html and the grades (grades/)")
	fs.StringVar(&f.jobs, "jobs", "", "how many grades run at once (default: "+strconv.Itoa(defaultJobs())+" here: one per two cores, at most the sandbox's pool of 4 users)")
	fs.StringVar(&f.root, "root", ".", "the workbook root: the upstream every submission is graded in")
	fs.StringVar(&f.upstreamRef, "upstream-ref", "HEAD", "the commit of --root to grade in (and to build the grader from)")
	fs.StringVar(&f.step, "step", steps.Default().Dir, "the step directory taken from each submission")
	fs.StringVar(&f.cluster, "cluster", "envtest", "where each grade runs: envtest, kind or existing")
}

// defaultJobs: a grade keeps about two cores busy (the API server, etcd,
// the controller and the compiler), and the sandbox's pool has 4 users.
func defaultJobs() int { return min(max(runtime.NumCPU()/2, 1), 4) }

// runGradebook grades every submission of the roster that has no grade by
// this grader yet, each as `gw10 grade --submission` grades one (this
// binary, run once per grade), and writes the gradebook.
func runGradebook(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("gradebook", flag.ContinueOnError)
	var f gradebookFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (gw10 gradebook --roster <file>, or gw10 gradebook merge <dirs>)", fs.Args())
	}
	jobs := defaultJobs()
	if f.jobs != "" {
		n, err := strconv.Atoi(f.jobs)
		if err != nil || n < 1 {
			return fmt.Errorf("--jobs (JOBS) is a number of grades at once, at least 1, not %q", f.jobs)
		}
		jobs = n
	}
	entries, err := readRoster(f.roster)
	if err != nil {
		return err
	}
	// The grader: the upstream commit's, as for one grade (gradeCommand).
	commit, err := grade.Resolve(ctx, f.root, f.upstreamRef)
	if err != nil {
		return fmt.Errorf("the upstream's commit to grade in: %w", err)
	}
	if commit != sourceCommit && os.Getenv(graderReexecEnv) == "" {
		return handOverToCleanGrader(ctx, f.root, commit, "gradebook", args)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("this grader's binary: %w", err)
	}
	release, err := lockOut(f.out)
	if err != nil {
		return err
	}
	defer release()
	if sourceCommit == "" {
		fmt.Println("gw10 gradebook: the grader was built from a working tree: every grade says NOT AN OFFICIAL GRADE, and every submission is graded again")
	}
	start := time.Now()
	sum, err := gradebook.Run(ctx, gradebook.Options{
		Entries: entries, Out: f.out, Jobs: jobs, GraderCommit: sourceCommit,
		Resolve: func(ctx context.Context, e gradebook.Entry) (string, error) {
			return grade.ResolveSubmission(ctx, e.Repository, e.Ref)
		},
		Grade:    subprocessGrader(exe, f, commit),
		Progress: os.Stdout,
	})
	if err != nil {
		return err
	}
	csvPath, htmlPath, err := sum.Book.Write(f.out)
	if err != nil {
		return err
	}
	fmt.Printf("gw10 gradebook: %d graded now, %d graded before, %d without a grade, in %s. Gradebook: %s, %s\n",
		sum.Graded, sum.Reused, sum.NoGrade, time.Since(start).Round(time.Second), csvPath, htmlPath)
	if sum.NoGrade > 0 {
		fmt.Fprintf(os.Stderr, "gw10 gradebook: %s no grade (the gradebook's rows say why); run it again to grade only those\n", plural(sum.NoGrade, "submission has", "submissions have"))
		return exitError{1}
	}
	return nil
}

func readRoster(path string) ([]gradebook.Entry, error) {
	if path == "" {
		return nil, errors.New("no roster (make gradebook ROSTER=<file>, gw10 gradebook --roster <file>)")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the roster: %w", err)
	}
	defer f.Close()
	base, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	entries, err := gradebook.ParseRoster(f, base)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}

// subprocessGrader grades one submission with this binary's `grade`
// command, as `make grade SUBMISSION=… SUBMISSION_REF=…` does: its output
// goes to the job's log, and a stop (Ctrl-C, SIGTERM) reaches it as a
// SIGTERM, so that it ends its sandbox before it exits.
func subprocessGrader(exe string, f gradebookFlags, upstreamCommit string) gradebook.Grader {
	return func(ctx context.Context, job gradebook.Job) error {
		cmd := exec.CommandContext(ctx, exe, gradeArgs(f, upstreamCommit, job)...)
		cmd.Stdout, cmd.Stderr = job.Log, job.Log
		cmd.Env = gradeEnv(os.Environ())
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 2 * time.Minute
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			return fmt.Errorf("%w (a busy machine, most often)", gradebook.ErrHarness)
		}
		if err != nil {
			return fmt.Errorf("gw10 grade: %w", err)
		}
		return nil
	}
}

// gradeArgs are one grade's arguments: the gradebook's upstream, step and
// cluster, the entry's repository and ref.
func gradeArgs(f gradebookFlags, upstreamCommit string, job gradebook.Job) []string {
	ref := job.Entry.Ref
	if ref == "" {
		ref = "HEAD"
	}
	return []string{"grade", "--root", f.root, "--step", f.step, "--cluster", f.cluster, "--upstream-ref", upstreamCommit,
		"--submission", job.Entry.Repository, "--submission-ref", ref, "--out", job.Out}
}

// gradeEnv is a grade's environment: the gradebook's, with the grader
// marked as the one to run (no build of its own) and no job summary (a
// cohort's two hundred summaries are the gradebook's job).
func gradeEnv(env []string) []string {
	out := []string{graderReexecEnv + "=1"}
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); name != "GITHUB_STEP_SUMMARY" && name != graderReexecEnv {
			out = append(out, kv)
		}
	}
	return out
}

// runGradebookMerge is `gw10 gradebook merge [--out dir] <dirs>`: the
// gradebook of every grade under the directories, wherever it was made.
func runGradebookMerge(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gradebook merge", flag.ContinueOnError)
	out := fs.String("out", "reports/gradebook-merged", "directory for gradebook.csv and gradebook.html (make gradebook's reports/gradebook is left as it is)")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if fs.NArg() == 0 {
		return errors.New("no directories to merge (gw10 gradebook merge [--out dir] <dir>...)")
	}
	book, errs := gradebook.Merge(fs.Args())
	for _, e := range errs {
		fmt.Fprintf(os.Stderr, "gw10 gradebook merge: skipped: %v\n", e)
	}
	if len(book.Rows) == 0 {
		return fmt.Errorf("no grade.json under %q", fs.Args())
	}
	csvPath, htmlPath, err := book.Write(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "gw10 gradebook merge: %d submissions. Gradebook: %s, %s\n", len(book.Rows), csvPath, htmlPath)
	return nil
}

// maxMatrix is GitHub Actions' limit of jobs one matrix makes.
const maxMatrix = 256

// planEntry is one job of the cohort workflow's matrix.
type planEntry struct {
	ID         string `json:"id"`
	Line       int    `json:"line"`
	Learner    string `json:"learner"`
	Repository string `json:"repository"`
	Ref        string `json:"ref"`
}

// runGradebookPlan is `gw10 gradebook plan --roster <file>`: the roster as
// the cohort workflow's matrix, one JSON line. The workflow fetches each
// repository by URL, so a path is refused.
func runGradebookPlan(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gradebook plan", flag.ContinueOnError)
	roster := fs.String("roster", "", "the roster (git URLs only)")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	entries, err := readRoster(*roster)
	if err != nil {
		return err
	}
	if len(entries) > maxMatrix {
		return fmt.Errorf("%s: %d submissions; a workflow's matrix holds at most %d: split the roster and run the workflow once per part", *roster, len(entries), maxMatrix)
	}
	var plan []planEntry
	var errs []error
	for i, e := range entries {
		if !gradebook.IsURL(e.Repository) {
			errs = append(errs, fmt.Errorf("line %d: %q is not a git URL (the workflow cannot reach a path of this machine)", e.Line, e.Repository))
			continue
		}
		ref := e.Ref
		if ref == "" {
			ref = "HEAD"
		}
		plan = append(plan, planEntry{ID: strconv.Itoa(i + 1), Line: e.Line, Learner: e.Learner, Repository: e.Repository, Ref: ref})
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %w", *roster, errors.Join(errs...))
	}
	data, err := json.Marshal(plan)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", data)
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
