package grade

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/gotool"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The upstream's files: what a grading tree must hold whatever the
// submission says.
var upstreamFiles = map[string]string{
	"harness/grade/grade.go":      "package grade\n\nvar Protected = []string{\"harness/\"}\n",
	"harness/checks/step07.go":    "package checks\n\n// the real checks\n",
	"Makefile":                    "grade:\n\tgw10 grade\n",
	".github/workflows/grade.yml": "name: grade\n",
	"go.work":                     "go 1.26.0\n\nuse ./step07\n",
	"README.md":                   "the workbook\n",
	"step07/go.mod":               "module example.com/step07\n",
	"step07/controller.go":        "package step07\n\n// TODO(step07)\n",
}

// newRepo makes a repository of the upstream's files with one commit.
func newRepo(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	run(t, filepath.Dir(dir), "git", "init", "-q", "-b", "main", dir)
	for name, body := range upstreamFiles {
		write(t, dir, name, body)
	}
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "-qm", "workbook ("+name+")")
	return dir
}

func newUpstream(t *testing.T) string { return newRepo(t, "upstream") }

// tamper is what a learner trying to cheat commits besides the solution.
var tamper = map[string]string{
	"harness/grade/grade.go":      "package grade\n\nvar Protected = []string{}\n",
	"harness/checks/step07.go":    "package checks\n\n// every check passes\n",
	"Makefile":                    "grade:\n\techo 100/100\n",
	".github/workflows/grade.yml": "name: grade\non: push\njobs: {}\n",
	"step07/controller.go":        "package step07\n\n// solved\n",
}

func assemble(t *testing.T, opts Options) *Tree {
	t.Helper()
	if opts.Step == "" {
		opts.Step = "step07"
	}
	tree, err := Assemble(context.Background(), opts)
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	t.Cleanup(func() { _ = tree.Remove() })
	return tree
}

// assertPristine checks that everything but step07/ in the tree is the
// upstream's, and step07/controller.go is the submission's.
func assertPristine(t *testing.T, tree *Tree, upstreamFiles map[string]string, wantController string) {
	t.Helper()
	for name, body := range upstreamFiles {
		if strings.HasPrefix(name, "step07/") {
			continue
		}
		if got := read(t, filepath.Join(tree.Dir, name)); got != body {
			t.Errorf("the grading tree's %s is %q, not the upstream's %q", name, got, body)
		}
	}
	if got := read(t, filepath.Join(tree.StepDir, "controller.go")); got != wantController {
		t.Errorf("the grading tree's step07/controller.go is %q, want the submission's %q", got, wantController)
	}
}

func TestATamperedForkIsGradedWithTheUpstreamsHarness(t *testing.T) {
	upstream := newUpstream(t)
	fork := filepath.Join(t.TempDir(), "fork")
	run(t, filepath.Dir(fork), "git", "clone", "-q", upstream, fork)
	for name, body := range tamper {
		write(t, fork, name, body)
	}
	write(t, fork, "notes.md", "my notes\n")
	run(t, fork, "git", "rm", "-q", "go.work")
	run(t, fork, "git", "add", "-A")
	run(t, fork, "git", "commit", "-qm", "solve, and help myself")
	statusBefore := run(t, fork, "git", "status", "--porcelain", "--ignored")
	// The upstream moves on after the fork: what it changed or added is not
	// the learner's doing, and is not listed.
	write(t, upstream, "README.md", "the workbook, revised\n")
	write(t, upstream, "docs/new.md", "a new chapter\n")
	run(t, upstream, "git", "add", "-A")
	run(t, upstream, "git", "commit", "-qm", "upstream moves on")
	upstreamFiles := maps.Clone(upstreamFiles)
	upstreamFiles["README.md"] = "the workbook, revised\n"
	upstreamFiles["docs/new.md"] = "a new chapter\n"

	tree := assemble(t, Options{Root: upstream, Submission: fork})
	g := tree.Grading
	if !g.Official || !g.Gradable {
		t.Fatalf("grading: %+v", g)
	}
	assertPristine(t, tree, upstreamFiles, tamper["step07/controller.go"])
	want := []string{".github/workflows/grade.yml", "Makefile", "go.work", "harness/checks/step07.go", "harness/grade/grade.go", "notes.md"}
	if !reflect.DeepEqual(g.Ignored, want) {
		t.Errorf("ignored %v, want %v", g.Ignored, want)
	}
	head := strings.TrimSpace(run(t, fork, "git", "rev-parse", "HEAD"))
	upHead := strings.TrimSpace(run(t, upstream, "git", "rev-parse", "HEAD"))
	if g.Submission.Commit != head || g.Submission.Ref != "HEAD" || g.Upstream.Commit != upHead {
		t.Errorf("revisions: submission %+v, upstream %+v", g.Submission, g.Upstream)
	}
	if after := run(t, fork, "git", "status", "--porcelain", "--ignored"); after != statusBefore {
		t.Errorf("grading changed the submission's working tree:\n%s", after)
	}
}

func TestATemplateCopyWithoutSharedHistoryGrades(t *testing.T) {
	upstream := newUpstream(t)
	// GitHub's "Use this template": the same files, a new first commit.
	copyDir := newRepo(t, "from-template")
	write(t, copyDir, "step07/controller.go", "package step07\n\n// solved in a copy\n")
	write(t, copyDir, "harness/checks/step07.go", "package checks\n\n// always pass\n")
	run(t, copyDir, "git", "commit", "-qam", "solve")
	// A branch only: graded by name, as a workflow passes it.
	run(t, copyDir, "git", "checkout", "-q", "-b", "attempt-2")
	write(t, copyDir, "step07/controller.go", "package step07\n\n// second attempt\n")
	run(t, copyDir, "git", "commit", "-qam", "again")
	run(t, copyDir, "git", "checkout", "-q", "main")

	if out, err := exec.Command("git", "-C", copyDir, "merge-base", "HEAD", upstream).CombinedOutput(); err == nil {
		t.Fatalf("the copy shares history with the upstream: %s", out)
	}
	for ref, want := range map[string]string{"": "// solved in a copy", "attempt-2": "// second attempt"} {
		tree := assemble(t, Options{Root: upstream, Submission: "file://" + copyDir, SubmissionRef: ref})
		g := tree.Grading
		if !g.Gradable || !reflect.DeepEqual(g.Ignored, []string{"harness/checks/step07.go"}) {
			t.Fatalf("ref %q: %+v", ref, g)
		}
		assertPristine(t, tree, upstreamFiles, "package step07\n\n"+want+"\n")
	}
}

func TestAPullRequestRefIsFetched(t *testing.T) {
	upstream := newUpstream(t)
	fork := filepath.Join(t.TempDir(), "fork")
	run(t, filepath.Dir(fork), "git", "clone", "-q", upstream, fork)
	write(t, fork, "step07/controller.go", "package step07\n\n// from the PR\n")
	run(t, fork, "git", "commit", "-qam", "pr")
	sha := strings.TrimSpace(run(t, fork, "git", "rev-parse", "HEAD"))
	run(t, fork, "git", "update-ref", "refs/pull/7/head", sha)
	run(t, fork, "git", "reset", "-q", "--hard", "HEAD~1")

	tree := assemble(t, Options{Root: upstream, Submission: fork, SubmissionRef: "refs/pull/7/head"})
	if tree.Grading.Submission.Commit != sha {
		t.Fatalf("graded %s, want %s", tree.Grading.Submission.Commit, sha)
	}
	assertPristine(t, tree, upstreamFiles, "package step07\n\n// from the PR\n")
}

func TestNotGradable(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		reason string
	}{
		{"no step module", func(t *testing.T, dir string) { run(t, dir, "git", "rm", "-q", "-r", "step07") }, "no step07/go.mod"},
		{"a symbolic link out of the step", func(t *testing.T, dir string) {
			if err := os.Symlink("../harness/checks", filepath.Join(dir, "step07", "checks")); err != nil {
				t.Fatal(err)
			}
			run(t, dir, "git", "add", "step07/checks")
		}, "step07/checks"},
		{"a replace in go.mod (another module's code built as the learner's)", func(t *testing.T, dir string) {
			write(t, dir, "step07/go.mod", "module example.com/step07\n\nreplace example.com/solution => ../solutions/step07\n")
			run(t, dir, "git", "add", "step07/go.mod")
		}, "step07/go.mod:3: replace example.com/solution => ../solutions/step07"},
		{"a renamed module", func(t *testing.T, dir string) {
			write(t, dir, "step07/go.mod", "module example.com/solutions/step07/x\n")
			run(t, dir, "git", "add", "step07/go.mod")
		}, "module example.com/solutions/step07/x: the step's module is example.com/step07"},
		{"a toolchain line", func(t *testing.T, dir string) {
			write(t, dir, "step07/go.mod", "module example.com/step07\n\ntoolchain go1.99.0\n")
			run(t, dir, "git", "add", "step07/go.mod")
		}, "toolchain go1.99.0"},
		{"a module nested in the step", func(t *testing.T, dir string) {
			write(t, dir, "step07/internal/tool/go.mod", "module example.com/tool\n")
			run(t, dir, "git", "add", "step07/internal/tool/go.mod")
		}, "holds a module of its own below step07/go.mod, which the grade cannot build as part of step07/ (move its code into the step's module, or out of step07/): step07/internal/tool/go.mod"},
		{"a requirement the workbook does not have", func(t *testing.T, dir string) {
			write(t, dir, "step07/go.mod", "module example.com/step07\n\nrequire example.com/grader-bypass v1.0.0\n")
			run(t, dir, "git", "add", "step07/go.mod")
		}, "require example.com/grader-bypass v1.0.0: not a module the workbook uses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			upstream := newUpstream(t)
			fork := filepath.Join(t.TempDir(), "fork")
			run(t, filepath.Dir(fork), "git", "clone", "-q", upstream, fork)
			tt.change(t, fork)
			run(t, fork, "git", "commit", "-qm", "change")
			tree := assemble(t, Options{Root: upstream, Submission: fork})
			if g := tree.Grading; g.Gradable || !strings.Contains(g.Reason, tt.reason) || g.Submission.Commit == "" {
				t.Fatalf("grading: %+v", g)
			}
		})
	}
}

func TestBadRefsAreErrors(t *testing.T) {
	upstream := newUpstream(t)
	for name, opts := range map[string]Options{
		"upstream":          {Root: upstream, UpstreamRef: "no-such-branch", Step: "step07"},
		"submission":        {Root: upstream, Submission: upstream, SubmissionRef: "no-such-branch", Step: "step07"},
		"no repository":     {Root: upstream, Submission: filepath.Join(t.TempDir(), "absent"), Step: "step07"},
		"an option as ref":  {Root: upstream, Submission: upstream, SubmissionRef: "--upload-pack=touch", Step: "step07"},
		"step outside tree": {Root: upstream, Step: "../x"},
	} {
		t.Run(name, func(t *testing.T) {
			if tree, err := Assemble(context.Background(), opts); err == nil {
				_ = tree.Remove()
				t.Fatalf("no error; grading %+v", tree.Grading)
			}
		})
	}
}

// TestResolveIsTheOneWayToAResolvedRef: Resolve names the commit of a ref
// in the repository it is given — not in one a GIT_DIR of the caller's
// environment points at (git sets it for hooks) — and refuses a ref that
// git would read as an option, a ref that does not exist and a non-commit.
func TestResolveIsTheOneWayToAResolvedRef(t *testing.T) {
	ctx := context.Background()
	repo, other := newUpstream(t), newRepo(t, "other")
	head := strings.TrimSpace(run(t, repo, "git", "rev-parse", "HEAD"))
	if head == strings.TrimSpace(run(t, other, "git", "rev-parse", "HEAD")) {
		t.Fatal("the two repositories share a commit; the test proves nothing")
	}
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	got, err := Resolve(ctx, repo, "HEAD")
	if err != nil || got != head {
		t.Fatalf("Resolve(HEAD) = %q, %v; want %s (the repository's own, not GIT_DIR's)", got, err, head)
	}
	tree := strings.TrimSpace(run(t, repo, "git", "--git-dir="+filepath.Join(repo, ".git"), "rev-parse", "HEAD^{tree}"))
	for _, ref := range []string{"--upload-pack=touch", "-h", "no-such-branch", tree} {
		if c, err := Resolve(ctx, repo, ref); err == nil {
			t.Errorf("Resolve(%q) = %s, want an error", ref, c)
		}
	}
}

// TestTheLocalCheckoutIsFeedback: without --submission, the working tree's
// step is graded, uncommitted changes included, in its own HEAD; changes
// elsewhere are listed, not used.
func TestTheLocalCheckoutIsFeedback(t *testing.T) {
	dir := newUpstream(t)
	write(t, dir, "step07/controller.go", "package step07\n\n// work in progress\n")
	write(t, dir, "step07/extra.go", "package step07\n")
	write(t, dir, "harness/grade/grade.go", tamper["harness/grade/grade.go"])
	write(t, dir, "scratch.txt", "untracked\n")

	tree := assemble(t, Options{Root: dir})
	g := tree.Grading
	if g.Official || !g.Gradable || !g.Submission.Uncommitted {
		t.Fatalf("grading: %+v", g)
	}
	if !reflect.DeepEqual(g.Ignored, []string{"harness/grade/grade.go", "scratch.txt"}) {
		t.Errorf("ignored: %v", g.Ignored)
	}
	assertPristine(t, tree, upstreamFiles, "package step07\n\n// work in progress\n")
	if _, err := os.Stat(filepath.Join(tree.StepDir, "extra.go")); err != nil {
		t.Errorf("the untracked step file was not graded: %v", err)
	}
}

// workbook is the real workbook root, seen from harness/grade.
var workbook, _ = filepath.Abs(filepath.Join("..", ".."))

// TestGeneratedDriftIsReportedAndTheSubmissionUntouched grades a clone of
// this workbook whose committed ClusterRole grants everything: the drift is
// reported, and only the grading tree's copy is regenerated.
func TestGeneratedDriftIsReportedAndTheSubmissionUntouched(t *testing.T) {
	testenv.Long(t, "runs controller-gen")
	ctx := context.Background()
	sub := filepath.Join(t.TempDir(), "submission")
	run(t, filepath.Dir(sub), "git", "clone", "-q", "--no-hardlinks", workbook, sub)
	st := steps.Default() // the real step, in a clone of the real workbook
	role := filepath.Join(sub, filepath.FromSlash(st.Dir), "config", "rbac", "role.yaml")
	granted := read(t, role) + "- apiGroups: ['*']\n  resources: ['*']\n  verbs: ['*']\n"
	write(t, sub, st.Dir+"/config/rbac/role.yaml", granted)
	run(t, sub, "git", "commit", "-qam", "grant myself everything")

	tree := assemble(t, Options{Root: workbook, Submission: sub, Step: st.Dir})
	if !tree.Grading.Gradable {
		t.Fatalf("grading: %+v", tree.Grading)
	}
	gen, err := gotool.Path(ctx, tree.Dir, "controller-gen")
	if err != nil {
		t.Fatal(err)
	}
	drift, err := GeneratedDrift(ctx, gen, tree.StepDir, []string{"GOWORK=" + filepath.Join(tree.Dir, "go.work")})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(drift, []string{"config/rbac/role.yaml"}) {
		t.Errorf("drift %v, want the role only", drift)
	}
	if got := read(t, filepath.Join(tree.StepDir, "config", "rbac", "role.yaml")); strings.Contains(got, "'*'") || strings.Contains(got, `"*"`) {
		t.Errorf("the grading tree's role still grants everything:\n%s", got)
	}
	if read(t, role) != granted {
		t.Error("grading rewrote the submission's role.yaml")
	}
	if st := run(t, sub, "git", "status", "--porcelain"); st != "" {
		t.Errorf("grading changed the submission's working tree:\n%s", st)
	}
}

// TestTheGradingTreeHoldsNoSolutions: the reference solution is left out, so
// learner code finds none to import, build or copy.
func TestTheGradingTreeHoldsNoSolutions(t *testing.T) {
	upstream := newUpstream(t)
	write(t, upstream, "solutions/step07/controller.go", "package step07\n\n// the answer\n")
	run(t, upstream, "git", "add", "-A")
	run(t, upstream, "git", "commit", "-qm", "the solution")
	fork := filepath.Join(t.TempDir(), "fork")
	run(t, filepath.Dir(fork), "git", "clone", "-q", upstream, fork)
	tree := assemble(t, Options{Root: upstream, Submission: fork, Leave: []string{"solutions/step07"}})
	if _, err := os.Stat(filepath.Join(tree.Dir, "solutions", "step07")); !os.IsNotExist(err) {
		t.Errorf("the grading tree holds solutions/step07 (stat: %v)", err)
	}
	if _, err := os.Stat(filepath.Join(tree.Dir, "harness", "grade", "grade.go")); err != nil {
		t.Errorf("the grading tree lost the harness: %v", err)
	}
}

func TestModuleProblems(t *testing.T) {
	up := "module example.com/step07\n\ngo 1.26.0\n\ngodebug default=go1.26\n\nrequire (\n\tk8s.io/api v0.37.2\n\tgithub.com/x/y/v2 v2.1.0 // indirect\n)\n"
	for _, c := range []struct{ name, sub, want string }{
		{"the upstream's own", up, ""},
		{"a newer patch of a required module", strings.Replace(up, "v0.37.2", "v0.37.3", 1), ""},
		{"fewer requirements", "module example.com/step07\n\ngo 1.26.0\n", ""},
		{"another major", strings.Replace(up, "k8s.io/api v0.37.2", "k8s.io/api v1.0.0", 1), "another major version"},
		{"a newer go line", strings.Replace(up, "go 1.26.0", "go 1.99.0", 1), "go 1.99.0: newer"},
		{"a godebug change", strings.Replace(up, "default=go1.26", "default=go1.20", 1), "godebug default=go1.20"},
		{"an exclude", up + "\nexclude k8s.io/api v0.37.1\n", "exclude k8s.io/api"},
		{"a tool", up + "\ntool example.com/evil\n", "tool example.com/evil"},
		{"does not parse", "module", "does not parse"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := moduleProblems([]byte(up), []byte(c.sub), "step07")
			if err != nil {
				t.Fatal(err)
			}
			joined := strings.Join(got, "\n")
			if c.want == "" && len(got) > 0 || c.want != "" && !strings.Contains(joined, c.want) {
				t.Errorf("problems %q, want %q", got, c.want)
			}
		})
	}
}

// TestForeignImportsNamesAnotherModuleOfTheWorkspace: in a workspace, the
// step could import another module's packages (the harness) without a
// requirement; the gate names them.
func TestForeignImportsNamesAnotherModuleOfTheWorkspace(t *testing.T) {
	dir := workspaceWithAnotherModule(t)
	write(t, dir, "step/main.go", "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/step/inner\"\n)\n\nfunc main() { fmt.Println(inner.Y) }\n")
	write(t, dir, "step/inner/inner.go", "package inner\n\nconst Y = 2\n")
	write(t, dir, "step/main_test.go", "package main\n\nimport (\n\t\"testing\"\n\n\t\"example.com/other/answers\"\n)\n\nfunc TestX(t *testing.T) { _ = answers.X }\n")
	env := []string{"GOWORK=" + filepath.Join(dir, "go.work"), "GOFLAGS=", "GOPROXY=off"}
	got, err := ForeignImports(context.Background(), filepath.Join(dir, "step"), env, []string{"example.com/step"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.Contains(got[0], "example.com/other/answers (module example.com/other)") {
		t.Errorf("foreign imports %q, want example.com/other/answers only", got)
	}
	got, err = ForeignImports(context.Background(), filepath.Join(dir, "step"), env, []string{"example.com/step", "example.com/other"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("with the other module allowed, foreign imports %q", got)
	}
}

// workspaceWithAnotherModule is a workspace of two modules, example.com/step
// in step/ (its go.mod only) and example.com/other, whose package answers
// the step could import without a requirement.
func workspaceWithAnotherModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "go.work", "go 1.26.0\n\nuse (\n\t./step\n\t./other\n)\n")
	write(t, dir, "other/go.mod", "module example.com/other\n\ngo 1.26.0\n")
	write(t, dir, "other/answers/answers.go", "package answers\n\nconst X = 1\n")
	write(t, dir, "step/go.mod", "module example.com/step\n\ngo 1.26.0\n")
	return dir
}

// TestASubmissionsBinIsNotTaken: files committed under the step's bin/
// (build output; a //go:embed of a script there ran code no view of make
// diff showed) are left out of the grading tree and listed as ignored.
func TestASubmissionsBinIsNotTaken(t *testing.T) {
	upstream := newUpstream(t)
	fork := filepath.Join(t.TempDir(), "fork")
	run(t, filepath.Dir(fork), "git", "clone", "-q", upstream, fork)
	write(t, fork, "step07/bin/fixtures.sh", "#!/bin/sh\necho payload\n")
	run(t, fork, "git", "add", "-A", "-f")
	run(t, fork, "git", "commit", "-qm", "a payload in bin/")
	tree := assemble(t, Options{Root: upstream, Submission: fork})
	if _, err := os.Stat(filepath.Join(tree.StepDir, "bin", "fixtures.sh")); err == nil {
		t.Error("the grading tree holds the submission's bin/fixtures.sh")
	}
	if !slices.Contains(tree.Grading.Ignored, "step07/bin/fixtures.sh") {
		t.Errorf("ignored %v, want step07/bin/fixtures.sh among them", tree.Grading.Ignored)
	}
}

// TestASubmissionTooLargeIsNotRead: a step whose files break the limits is
// not gradable, the reason naming the files and the limits, from the tree's
// sizes alone (a committed 1 GiB file was extracted and read whole); make
// diff's checkout refuses it the same way, and extraction stops at the
// limits whatever the tree said.
func TestASubmissionTooLargeIsNotRead(t *testing.T) {
	big := func(name string, size int64) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(size); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	for _, tt := range []struct {
		name   string
		change func(t *testing.T, dir string)
		reason []string
	}{
		{"a file over the file limit", big("step07/data/huge.bin", 64<<20),
			[]string{"step07/ is too large to grade", "step07/data/huge.bin (64 MiB)", "(1 MiB, grade.MaxFileBytes)"}},
		{"files over the step's limit", func(t *testing.T, dir string) {
			for i := range 9 {
				big(fmt.Sprintf("step07/data/part%d.bin", i), MaxFileBytes)(t, dir)
			}
		}, []string{"its files hold 9.0 MiB (", "more than a step may (8 MiB, grade.MaxStepBytes)"}},
		{"too many files", func(t *testing.T, dir string) {
			for i := range MaxStepFiles {
				write(t, dir, fmt.Sprintf("step07/many/f%04d.txt", i), "x")
			}
		}, []string{fmt.Sprintf("it holds %d files, more than a step may (%d, grade.MaxStepFiles)", MaxStepFiles+2, MaxStepFiles)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			upstream := newUpstream(t)
			fork := filepath.Join(t.TempDir(), "fork")
			run(t, filepath.Dir(fork), "git", "clone", "-q", upstream, fork)
			tt.change(t, fork)
			run(t, fork, "git", "add", "-A")
			run(t, fork, "git", "commit", "-qm", "change")
			tree := assemble(t, Options{Root: upstream, Submission: fork})
			for _, want := range tt.reason {
				if g := tree.Grading; g.Gradable || !strings.Contains(g.Reason, want) {
					t.Fatalf("the reason does not say %q: %+v", want, g)
				}
			}
			if _, err := os.Stat(filepath.Join(tree.StepDir, "go.mod")); err == nil {
				t.Errorf("the step was extracted")
			}
			if _, err := FetchStep(context.Background(), fork, "", "step07"); err == nil || !strings.Contains(err.Error(), tt.reason[len(tt.reason)-1]) {
				t.Errorf("make diff's checkout: %v", err)
			}
		})
	}
	t.Run("extraction stops at the limits", func(t *testing.T) {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		if err := tw.WriteHeader(&tar.Header{Name: "step07/huge.bin", Mode: 0o644, Size: MaxFileBytes + 1, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(make([]byte, MaxFileBytes+1)); err != nil {
			t.Fatal(err)
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		dst := t.TempDir()
		_, err := untar(&buf, dst, func(string) bool { return true }, &extractLimits{})
		if err == nil || !strings.Contains(err.Error(), "step07/huge.bin holds 1.0 MiB (1048577 bytes), more than a file of the step may (1 MiB)") {
			t.Errorf("untar: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dst, "step07", "huge.bin")); err == nil {
			t.Errorf("the file was written")
		}
	})
}
