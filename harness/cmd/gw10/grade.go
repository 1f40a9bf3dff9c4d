package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/gotool"
	"github.com/10xdev/gw10/harness/grade"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/runner"
	"github.com/10xdev/gw10/harness/sandbox"
	"github.com/10xdev/gw10/harness/steps"
)

// runGrade grades a step in a tree assembled from the upstream at a pinned
// commit and the submission's step only (see package grade), and writes the
// JSON, JUnit and Markdown reports (the Markdown also to
// $GITHUB_STEP_SUMMARY when set). Without --submission it grades this
// checkout's working tree: feedback for the learner, not an official grade.
func runGrade(ctx context.Context, args []string) error { return runGradeAs(ctx, args, "") }

// runGradeAs is runGrade by a grader built from graderCommit ("": from a
// working tree); an official grade whose grader is not the upstream
// commit's says so in every report.
func runGradeAs(ctx context.Context, args []string, graderCommit string) error {
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	var f checkFlags
	f.register(fs)
	submission := fs.String("submission", "", "the learner's repository (path or git URL) whose step to grade; empty: this checkout's working tree (feedback, not official)")
	submissionRef := fs.String("submission-ref", "HEAD", "the submission's commit, branch or tag to grade")
	upstreamRef := fs.String("upstream-ref", "HEAD", "the commit of --root (the upstream) to grade in")
	out := fs.String("out", "reports", "directory for grade.json, junit.xml and summary.md")
	sandboxMode := fs.String("sandbox", "auto", "auto: run learner code in the sandbox (as root or through sudo -n), else grade unsandboxed and say it is not official; off: unsandboxed, not official")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if f.run != "" {
		return fmt.Errorf("grade runs every check; use check --run for a selection")
	}
	noSandbox, err := grade.SandboxOff(*sandboxMode)
	if err != nil {
		return err
	}
	g := gradeRun{submission: *submission, submissionRef: *submissionRef, upstreamRef: *upstreamRef, out: *out, graderCommit: graderCommit, noSandbox: noSandbox}
	return g.run(ctx, f)
}

// gradeRun is one grade's inputs beyond the check flags.
type gradeRun struct {
	submission, submissionRef, upstreamRef, out string
	// graderCommit is the commit this grader was built from ("": a working
	// tree); an official grade needs the upstream commit's.
	graderCommit string
	// noSandbox, when set, says why learner code runs unsandboxed
	// (grade.SandboxOff).
	noSandbox string
	sandbox   sandbox.Options
	// selection, for tests only, grades these checks (the unit tests run
	// all the same); unitWall bounds the unit tests (default: the runner's).
	selection []string
	unitWall  time.Duration
}

func (gr gradeRun) run(ctx context.Context, f checkFlags) error {
	submission, submissionRef, upstreamRef, out := &gr.submission, &gr.submissionRef, &gr.upstreamRef, &gr.out
	if f.jsonOut == "" {
		f.jsonOut = filepath.Join(*out, "grade.json")
	}
	if f.junit == "" {
		f.junit = filepath.Join(*out, "junit.xml")
	}
	if f.md == "" {
		f.md = filepath.Join(*out, "summary.md")
	}
	if f.timeline == defaultTimeline {
		f.timeline = filepath.Join(*out, "timeline.html")
	}
	release, err := lockOut(*out)
	if err != nil {
		return err
	}
	defer release()
	// Fresh or not at all: a run that stops early leaves no reports behind.
	if err := report.RemoveReports(f.jsonOut, f.junit, f.md, f.timeline); err != nil {
		return err
	}

	tree, err := grade.Assemble(ctx, grade.Options{
		Root: f.root, UpstreamRef: *upstreamRef, Step: f.step,
		Submission: *submission, SubmissionRef: *submissionRef,
		Leave: grade.SolutionDirs(steps.All()),
	})
	if err != nil {
		return fmt.Errorf("assembling the grading tree: %w", err)
	}
	defer func() { _ = tree.Remove() }()
	// Learner code runs in the sandbox; where none can be made, the first
	// line says the grade is not official, and so does every report.
	sb, sandboxed := grade.OpenSandbox(ctx, gr.noSandbox, gr.sandbox, grade.HiddenFromLearnerCode(ctx, f.root, *out))
	if !sandboxed.Enforced {
		fmt.Printf("gw10: UNSANDBOXED, NOT AN OFFICIAL GRADE: learner code runs as this user (%s)\n", sandboxed.Reason)
	}
	g := tree.Grading
	fmt.Println(gradingHeader(f.step, g))
	if sb != nil {
		fmt.Printf("gw10: learner code runs in the sandbox as %s\n", sb.User())
	}

	rep, runErr := gradeTree(ctx, f, tree, gradeLearnerCode{sb: sb, selection: gr.selection, unitWall: gr.unitWall})
	if sb != nil {
		// Every learner process is dead, and its files gone, before a
		// report is written.
		if err := sb.Close(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("ending the sandbox (no reports written): %w", err)
		}
		sandboxed.CutOff = sb.Events()
	}
	if rep == nil {
		return runErr
	}
	if err := tree.Conclude(rep, sandboxed, gr.graderCommit); err != nil {
		fmt.Fprintf(os.Stderr, "gw10: %v\n", err) // grade.NoGrade
		return exitError{3}
	}
	rep.Finish()
	rep.TerminalView(os.Stdout, f.view())
	if runErr != nil {
		fmt.Fprintln(os.Stderr, "gw10: run", runErr, "— no reports written")
		return exitError{130}
	}
	if err := writeReports(rep, f); err != nil {
		return err
	}
	fmt.Printf("Reports in %s/.\n", *out)
	if summary := os.Getenv("GITHUB_STEP_SUMMARY"); summary != "" {
		fh, err := os.OpenFile(summary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("writing $GITHUB_STEP_SUMMARY: %w", err)
		}
		defer fh.Close()
		if err := rep.Markdown(fh); err != nil {
			return fmt.Errorf("writing $GITHUB_STEP_SUMMARY: %w", err)
		}
	}
	return exitFor(rep)
}

// gradeLearnerCode says how learner code runs: in sb unless it is nil,
// and, in tests, a selection of the checks and the unit tests' wall time.
type gradeLearnerCode struct {
	sb        *sandbox.Sandbox
	selection []string
	unitWall  time.Duration
}

// gradeTree runs every check (or, in tests, a selection) on the assembled
// tree; a submission that is not gradable runs none.
func gradeTree(ctx context.Context, f checkFlags, tree *grade.Tree, lc gradeLearnerCode) (*report.Report, error) {
	if !tree.Grading.Gradable {
		rep := &report.Report{Dir: f.step, Cluster: f.cluster}
		if st, ok := stepOfFlags(f); ok {
			for _, c := range st.Checks {
				rep.Checks = append(rep.Checks, runner.NotRun(st, c, "not run: the submission is not gradable"))
			}
		}
		return rep, nil
	}
	if err := tree.RefuseForeignImports(ctx, f.step); err != nil {
		return nil, err
	}
	if !tree.Grading.Gradable {
		return gradeTree(ctx, f, tree, lc)
	}
	goEnv := tree.GoEnv()
	gen, err := gotool.Path(ctx, tree.Dir, "controller-gen")
	if err != nil {
		return nil, err
	}
	// The grade uses what the markers generate; the committed files are
	// compared with it, on the copy (the submission is never written to).
	drift, err := grade.GeneratedDrift(ctx, gen, tree.StepDir, goEnv)
	if err != nil {
		fmt.Println("note: the generated files could not be compared with the markers (the generate stage below says why)")
	}
	for _, d := range drift {
		tree.Grading.GeneratedDrift = append(tree.Grading.GeneratedDrift, f.step+"/"+d)
	}
	f.root = tree.Dir
	opts, err := runnerOptions(ctx, f)
	if err != nil {
		return nil, err
	}
	opts.GoEnv = append(opts.GoEnv, goEnv...)
	opts.StageCache = false // a grade runs every stage, sandboxed or not
	opts.Lanes = 0          // and its checks one at a time: their causes and times are the contract
	// A grade runs the step's fixed seeds only: the same code gets the same
	// sequences, and so the same results, every time it is graded.
	if len(opts.Seeds) > 0 {
		fmt.Println("note: a grade runs the step's fixed sequence seeds; --seed is for make check")
	}
	opts.Seeds, opts.FixedSeeds = nil, true
	opts.Sandbox, opts.UnitWall = lc.sb, lc.unitWall
	if len(lc.selection) > 0 {
		if opts.Checks, err = checks.Select(opts.Step.Checks, lc.selection); err != nil {
			return nil, err
		}
		opts.UnitTestsAlways = true
	}
	return runner.Run(ctx, opts)
}

// gradingHeader is a grade's first line: what it grades, and in which
// upstream. A feedback run on a working tree says there that the learner's
// uncommitted changes are graded too.
func gradingHeader(step string, g report.Grading) string {
	uncommitted := ""
	if g.Submission.Uncommitted {
		uncommitted = ", with its uncommitted changes,"
	}
	return fmt.Sprintf("gw10: grading %s/ of %s at %s (%.12s)%s in the upstream at %s (%.12s)",
		step, report.Inline(g.Submission.Repository), report.Inline(g.Submission.Ref), g.Submission.Commit, uncommitted, report.Inline(g.Upstream.Ref), g.Upstream.Commit)
}
