package grade

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/sandbox"
	"github.com/10xdev/gw10/harness/step"
)

// What makes a grade, decided here; gw10 grade parses its flags, prints,
// and runs the checks between these decisions:
//
//   - Assemble: the tree, what is ignored, what is not gradable, and
//     whether the grade is official (a committed submission) or feedback;
//   - RefuseForeignImports: a step that imports from outside is not
//     gradable;
//   - SandboxOff and OpenSandbox: where learner code runs, and why not in
//     the sandbox (a grade without one is not official);
//   - Conclude: what the report says of the grading, or no grade at all
//     when the harness itself failed.

// SolutionDirs are the steps' reference solutions, which a grading tree
// leaves out (Options.Leave): learner code there finds none to import,
// build or copy.
func SolutionDirs(all []step.Step) []string {
	var out []string
	for _, st := range all {
		out = append(out, filepath.ToSlash(st.SolutionDir))
	}
	return out
}

// GoEnv is the environment of every go command on the tree: its own
// workspace, cgo off (no C compiler runs on the submission's behalf), and
// no module fetched or changed for it.
func (t *Tree) GoEnv() []string {
	return []string{"GOWORK=" + filepath.Join(t.Dir, "go.work"), "CGO_ENABLED=0", "GOFLAGS=-mod=readonly", "GOPROXY=off"}
}

// RefuseForeignImports makes the tree not gradable when the code of step
// imports packages from outside its module and the workbook's requirements
// (ForeignImports); an error means the imports could not be listed.
func (t *Tree) RefuseForeignImports(ctx context.Context, step string) error {
	foreign, err := ForeignImports(ctx, t.StepDir, t.GoEnv(), t.Allowed)
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		items := make([]string, len(foreign))
		for i, s := range foreign {
			items[i] = report.Inline(s) // an item of the list cannot pass for two
		}
		t.Refuse(fmt.Sprintf("%s/ imports packages from outside its module and the workbook's requirements:\n  - %s",
			step, strings.Join(items, "\n  - ")))
	}
	return nil
}

// SandboxOff reads gw10 grade's --sandbox: "auto" runs learner code in the
// sandbox where one can be made (reason ""), "off" never, with the reason
// every report gives for a grade that is then not official.
func SandboxOff(mode string) (reason string, err error) {
	switch mode {
	case "auto":
		return "", nil
	case "off":
		return "--sandbox=off", nil
	}
	return "", fmt.Errorf("--sandbox is auto or off, not %q", mode)
}

// OpenSandbox opens the sandbox learner code runs in, with the directories
// of hide reading empty, or says why there is none: off (SandboxOff), or
// why one could not be made. Without one the grade goes on, unsandboxed and
// not official (report.Sandbox says so).
func OpenSandbox(ctx context.Context, off string, opts sandbox.Options, hide []string) (*sandbox.Sandbox, report.Sandbox) {
	if off != "" {
		return nil, report.Sandbox{Reason: off}
	}
	opts.Hide = append(slices.Clone(opts.Hide), hide...)
	sb, err := sandbox.Open(ctx, opts)
	if err != nil {
		return nil, report.Sandbox{Reason: err.Error()}
	}
	return sb, report.Sandbox{Enforced: true, User: sb.User()}
}

// HiddenFromLearnerCode are the directories learner code must not read:
// the upstream checkout at root (its solutions/), the reports' directory
// out, and the grader's home and Go caches (credentials, the module and
// build caches).
func HiddenFromLearnerCode(ctx context.Context, root, out string) []string {
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

// NoGrade is an official grade's run whose harness stage failed (the
// runner marks them): a zero would be the machine's grade, not the
// submission's, so there is none, and no report.
type NoGrade struct{ Stage string }

func (e NoGrade) Error() string {
	return fmt.Sprintf("no grade: the %s stage failed, which nothing in a submission causes (a busy machine, most often; see above). "+
		"Grade it again; no reports written.", e.Stage)
}

// Conclude puts the tree's grading into rep: where learner code ran
// (sandboxed) and, for an official grade, the grader that graded it (built
// from graderCommit, "" for a working tree; GraderOf). It returns NoGrade,
// and changes nothing, when an official grade's harness stage failed.
func (t *Tree) Conclude(rep *report.Report, sandboxed report.Sandbox, graderCommit string) error {
	if stage := HarnessFailure(rep); stage != "" && t.Grading.Official {
		return NoGrade{Stage: stage}
	}
	t.Grading.Sandbox = &sandboxed
	if t.Grading.Official {
		t.Grading.Grader = GraderOf(graderCommit, t.Grading.Upstream.Commit)
	}
	rep.Grading = &t.Grading
	return nil
}

// HarnessFailure names the harness's own stage (the runner marks them) that
// failed, or "": such a failure says nothing about the submission.
func HarnessFailure(rep *report.Report) string {
	for _, st := range rep.Stages {
		if st.Status == report.Fail && st.Harness {
			return st.Name
		}
	}
	return ""
}

// GraderOf says where the grader's checks come from (the commit it was
// built from, "" for a working tree), and why they are not the upstream
// commit's when they are not: the grade is then not official.
func GraderOf(built, upstream string) *report.Grader {
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
