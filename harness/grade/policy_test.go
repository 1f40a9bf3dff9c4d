package grade

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/sandbox"
	"github.com/10xdev/gw10/harness/steps"
)

// TestAGraderNotTheUpstreamCommitsIsNotOfficial: a grader built from a
// working tree, or from another commit, makes every report say the grade is
// not official; one built from the upstream commit says where it came from.
func TestAGraderNotTheUpstreamCommitsIsNotOfficial(t *testing.T) {
	const up = "0123456789abcdef0123456789abcdef01234567"
	for _, c := range []struct{ built, want string }{
		{"", "built from a working tree"},
		{"fedcba9876543210fedcba9876543210fedcba98", "built from fedcba987654, not from the upstream commit 0123456789ab"},
		{up, ""},
	} {
		g := GraderOf(c.built, up)
		if c.want == "" && g.Reason != "" || !strings.Contains(g.Reason, c.want) || g.Commit != c.built {
			t.Errorf("grader built from %q: %+v, want reason %q", c.built, g, c.want)
		}
	}
}

// TestAGradeTheHarnessCouldNotRunIsNoGrade: a control plane that did not
// start (a busy machine) is not a zero for the submission; a failed build is.
func TestAGradeTheHarnessCouldNotRunIsNoGrade(t *testing.T) {
	for _, c := range []struct {
		stage report.Stage
		want  string
	}{
		{report.Stage{Name: "cluster", Status: report.Fail, Harness: true}, "cluster"},
		{report.Stage{Name: "proxy stand-in", Status: report.Fail, Harness: true}, "proxy stand-in"},
		{report.Stage{Name: "cluster", Status: report.Pass, Harness: true}, ""},
		{report.Stage{Name: "build", Status: report.Fail}, ""},
		{report.Stage{Name: "start controller", Status: report.Fail}, ""},
	} {
		rep := &report.Report{Stages: []report.Stage{{Name: "build", Status: report.Pass}, c.stage}}
		if got := HarnessFailure(rep); got != c.want {
			t.Errorf("stage %+v: %q, want %q", c.stage, got, c.want)
		}
	}
}

// TestConcludeSaysWhatTheGradeRestsOn: an official grade names its grader
// and where learner code ran; feedback names no grader; an official grade
// whose harness stage failed is no grade, and nothing is written into it.
func TestConcludeSaysWhatTheGradeRestsOn(t *testing.T) {
	const up = "0123456789abcdef0123456789abcdef01234567"
	harnessFailed := []report.Stage{{Name: "cluster", Status: report.Fail, Harness: true}}
	buildFailed := []report.Stage{{Name: "build", Status: report.Fail}}
	sandboxed := report.Sandbox{Enforced: true, User: "gw10-sandbox-1"}
	for _, c := range []struct {
		name        string
		official    bool
		stages      []report.Stage
		built       string
		wantNoGrade string
		wantGrader  bool
		wantNotOurs bool // the grader's reason says it is not the upstream commit's
	}{
		{name: "an official grade by the upstream commit's grader", official: true, built: up, wantGrader: true},
		{name: "an official grade by a working tree's grader", official: true, built: "", wantGrader: true, wantNotOurs: true},
		{name: "an official grade whose build failed is the submission's", official: true, stages: buildFailed, built: up, wantGrader: true},
		{name: "an official grade whose cluster failed is no grade", official: true, stages: harnessFailed, built: up, wantNoGrade: "cluster"},
		{name: "feedback whose cluster failed still reports", official: false, stages: harnessFailed},
		{name: "feedback names no grader", official: false, built: ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tree := &Tree{Grading: report.Grading{Gradable: true, Official: c.official, Upstream: report.Revision{Commit: up}}}
			rep := &report.Report{Stages: c.stages}
			err := tree.Conclude(rep, sandboxed, c.built)
			var ng NoGrade
			if c.wantNoGrade != "" {
				if !errors.As(err, &ng) || ng.Stage != c.wantNoGrade || !strings.Contains(err.Error(), "Grade it again") {
					t.Fatalf("Conclude: %v, want no grade (the %s stage)", err, c.wantNoGrade)
				}
				if rep.Grading != nil || tree.Grading.Sandbox != nil || tree.Grading.Grader != nil {
					t.Errorf("no grade, but the report holds a grading: %+v", rep.Grading)
				}
				return
			}
			if err != nil {
				t.Fatalf("Conclude: %v", err)
			}
			if rep.Grading != &tree.Grading || rep.Grading.Sandbox == nil || rep.Grading.Sandbox.User != sandboxed.User || !rep.Grading.Sandbox.Enforced {
				t.Errorf("the report's grading %+v is not the tree's with its sandbox", rep.Grading)
			}
			switch g := rep.Grading.Grader; {
			case !c.wantGrader && g != nil:
				t.Errorf("feedback names a grader: %+v", g)
			case c.wantGrader && g == nil:
				t.Error("an official grade names no grader")
			case c.wantGrader && (g.Reason != "") != c.wantNotOurs:
				t.Errorf("grader %+v: want a reason: %v", g, c.wantNotOurs)
			}
		})
	}
}

// TestSandboxModes: --sandbox is auto (the sandbox where one can be made)
// or off, which every report then gives as why learner code ran as the
// grader's user; nothing else.
func TestSandboxModes(t *testing.T) {
	if off, err := SandboxOff("auto"); off != "" || err != nil {
		t.Errorf("auto: %q, %v", off, err)
	}
	off, err := SandboxOff("off")
	if off != "--sandbox=off" || err != nil {
		t.Errorf("off: %q, %v", off, err)
	}
	if _, err := SandboxOff("none"); err == nil || !strings.Contains(err.Error(), "auto or off") {
		t.Errorf("none: %v", err)
	}
	sb, rs := OpenSandbox(context.Background(), off, sandbox.Options{}, nil)
	if sb != nil || rs.Enforced || rs.Reason != off {
		t.Errorf("--sandbox=off opened %v, %+v", sb, rs)
	}
}

// TestLearnerCodeReadsNoneOfTheGradersFiles: the upstream checkout, the
// reports and the grader's home are hidden from learner code.
func TestLearnerCodeReadsNoneOfTheGradersFiles(t *testing.T) {
	hide := HiddenFromLearnerCode(context.Background(), "/up", "/reports")
	want := []string{"/up", "/reports"}
	if home, err := os.UserHomeDir(); err == nil {
		want = append(want, home)
	}
	for _, dir := range want {
		if !slices.Contains(hide, dir) {
			t.Errorf("%s is not hidden from learner code: %v", dir, hide)
		}
	}
}

// TestAGradingTreeLeavesOutEverySolution: what Options.Leave gets.
func TestAGradingTreeLeavesOutEverySolution(t *testing.T) {
	all := steps.All()
	dirs := SolutionDirs(all)
	if len(dirs) != len(all) {
		t.Fatalf("SolutionDirs = %v for %d steps", dirs, len(all))
	}
	for i, st := range all {
		if dirs[i] != filepath.ToSlash(st.SolutionDir) || !strings.HasPrefix(dirs[i], "solutions/") {
			t.Errorf("SolutionDirs[%d] = %q, step %s's solution is %s", i, dirs[i], st.Name, st.SolutionDir)
		}
	}
}

// TestRefuseForeignImports: a step that imports another module's packages
// is not gradable, the import named; with that module allowed it is.
func TestRefuseForeignImports(t *testing.T) {
	dir := workspaceWithAnotherModule(t)
	write(t, dir, "step/main.go", "package main\n\nimport \"example.com/other/answers\"\n\nfunc main() { _ = answers.X }\n")
	for _, c := range []struct {
		allowed  []string
		gradable bool
	}{
		{[]string{"example.com/step"}, false},
		{[]string{"example.com/step", "example.com/other"}, true},
	} {
		tree := &Tree{Dir: dir, StepDir: filepath.Join(dir, "step"), Allowed: c.allowed, Grading: report.Grading{Gradable: true}}
		if env := tree.GoEnv(); !slices.Contains(env, "GOWORK="+filepath.Join(dir, "go.work")) || !slices.Contains(env, "CGO_ENABLED=0") || !slices.Contains(env, "GOPROXY=off") {
			t.Errorf("GoEnv = %v: not the tree's workspace, cgo off, no proxy", env)
		}
		if err := tree.RefuseForeignImports(context.Background(), "step"); err != nil {
			t.Fatal(err)
		}
		g := tree.Grading
		if g.Gradable != c.gradable || !c.gradable && !strings.Contains(g.Reason, "step/ imports packages from outside") || !c.gradable && !strings.Contains(g.Reason, "example.com/other/answers") {
			t.Errorf("allowed %v: gradable %v (%s), want %v", c.allowed, g.Gradable, g.Reason, c.gradable)
		}
	}
}
