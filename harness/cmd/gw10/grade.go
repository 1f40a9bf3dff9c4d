package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
	g := gradeRun{submission: *submission, submissionRef: *submissionRef, upstreamRef: *upstreamRef, out: *out, graderCommit: graderCommit}
	switch *sandboxMode {
	case "auto":
	case "off":
		g.noSandbox = "--sandbox=off"
	default:
		return fmt.Errorf("--sandbox is auto or off, not %q", *sandboxMode)
	}
	return g.run(ctx, f)
}

// gradeRun is one grade's inputs beyond the check flags.
type gradeRun struct {
	submission, submissionRef, upstreamRef, out string
	// graderCommit is the commit this grader was built from ("": a working
	// tree); an official grade needs the upstream commit's.
	graderCommit string
	// noSandbox, when set, says why learner code runs unsandboxed.
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
		Leave: solutionDirs(),
	})
	if err != nil {
		return fmt.Errorf("assembling the grading tree: %w", err)
	}
	defer func() { _ = tree.Remove() }()
	// Learner code runs in the sandbox; where none can be made, the first
	// line says the grade is not official, and so does every report.
	sb, sandboxed := gr.openSandbox(ctx, hiddenFromLearnerCode(ctx, f.root, *out))
	if !sandboxed.Enforced {
		fmt.Printf("gw10: UNSANDBOXED, NOT AN OFFICIAL GRADE: learner code runs as this user (%s)\n", sandboxed.Reason)
	}
	g := tree.Grading
	fmt.Printf("gw10: grading %s/ of %s at %s (%.12s) in the upstream at %s (%.12s)\n",
		f.step, report.Inline(g.Submission.Repository), report.Inline(g.Submission.Ref), g.Submission.Commit, report.Inline(g.Upstream.Ref), g.Upstream.Commit)
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
	if stage := harnessFailure(rep); stage != "" && tree.Grading.Official {
		// A zero here would be the machine's grade, not the submission's.
		fmt.Fprintf(os.Stderr, "gw10: no grade: the %s stage failed, which nothing in a submission causes (a busy machine, most often; see above). "+
			"Grade it again; no reports written.\n", stage)
		return exitError{3}
	}
	tree.Grading.Sandbox = &sandboxed
	if tree.Grading.Official {
		tree.Grading.Grader = graderOf(gr.graderCommit, tree.Grading.Upstream.Commit)
	}
	rep.Grading = &tree.Grading
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

// harnessFailure names the harness's own stage (the runner marks them) that
// failed, or "": such a failure says nothing about the submission.
func harnessFailure(rep *report.Report) string {
	for _, st := range rep.Stages {
		if st.Status == report.Fail && st.Harness {
			return st.Name
		}
	}
	return ""
}

// graderOf says where the grader's checks come from, and why they are not
// the upstream commit's when they are not.
func graderOf(built, upstream string) *report.Grader {
	g := &report.Grader{Commit: built}
	switch {
	case built == "":
		g.Reason = fmt.Sprintf("the grader was built from a working tree, not from the upstream commit %.12s "+
			"(make grade SUBMISSION=… builds it from a clean export of that commit)", upstream)
	case built != upstream:
		g.Reason = fmt.Sprintf("the grader was built from %.12s, not from the upstream commit %.12s", built, upstream)
	}
	return g
}

// openSandbox opens the grade's sandbox, where the directories of hide
// read empty, or says why there is none.
func (gr gradeRun) openSandbox(ctx context.Context, hide []string) (*sandbox.Sandbox, report.Sandbox) {
	if gr.noSandbox != "" {
		return nil, report.Sandbox{Reason: gr.noSandbox}
	}
	opts := gr.sandbox
	opts.Hide = append(slices.Clone(opts.Hide), hide...)
	sb, err := sandbox.Open(ctx, opts)
	if err != nil {
		return nil, report.Sandbox{Reason: err.Error()}
	}
	return sb, report.Sandbox{Enforced: true, User: sb.User()}
}

// hiddenFromLearnerCode are the directories learner code must not read:
// the upstream checkout (its solutions/), the reports' directory, and the
// grader's home and Go caches (credentials, the module and build caches).
func hiddenFromLearnerCode(ctx context.Context, root, out string) []string {
	hide := []string{root, out}
	if home, err := os.UserHomeDir(); err == nil {
		hide = append(hide, home)
	}
	for _, v := range []string{"GOMODCACHE", "GOCACHE"} {
		if p, err := exec.CommandContext(ctx, "go", "env", v).Output(); err == nil && strings.TrimSpace(string(p)) != "" {
			hide = append(hide, strings.TrimSpace(string(p)))
		}
	}
	return hide
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
	// cgo off: no C compiler runs on the submission's behalf; no module is
	// fetched or changed for it.
	goEnv := []string{"GOWORK=" + filepath.Join(tree.Dir, "go.work"), "CGO_ENABLED=0", "GOFLAGS=-mod=readonly", "GOPROXY=off"}
	foreign, err := grade.ForeignImports(ctx, tree.StepDir, goEnv, tree.Allowed)
	if err != nil {
		return nil, err
	}
	if len(foreign) > 0 {
		tree.Refuse(fmt.Sprintf("%s/ imports packages from outside its module and the workbook's requirements:\n  - %s",
			f.step, strings.Join(inline(foreign), "\n  - ")))
		return gradeTree(ctx, f, tree, lc)
	}
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

// solutionDirs are the reference solutions, which a grading tree leaves out:
// learner code there finds none to import, build or copy.
func solutionDirs() []string {
	var out []string
	for _, st := range steps.All() {
		out = append(out, filepath.ToSlash(st.SolutionDir))
	}
	return out
}

// inline is each of items on one line (report.Inline): an item of a list a
// reason gives cannot pass for two.
func inline(items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = report.Inline(s)
	}
	return out
}
