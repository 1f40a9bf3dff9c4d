package grade

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/skeleton"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/steptest"
	"github.com/10xdev/gw10/harness/testenv"

	"golang.org/x/mod/modfile"
)

// workbookRoot is the repository this test runs in.
func workbookRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skipf("%s is not a git checkout: make template copies a commit", root)
	}
	return root
}

// solutionRegionLines are the distinctive lines (30 characters or more) of
// every step's solution regions: the answers.
func solutionRegionLines(t *testing.T, root string) map[string]bool {
	t.Helper()
	lines := map[string]bool{}
	for _, st := range steps.All() {
		regions, err := skeleton.RegionLines(filepath.Join(root, st.SolutionDir))
		if err != nil {
			t.Fatal(err)
		}
		for rel, rl := range regions {
			// A line the skeleton has outside its TODOs (a table row's
			// shape, say) gives nothing away.
			given, _ := os.ReadFile(filepath.Join(root, st.Dir, filepath.FromSlash(rel)))
			for _, l := range rl {
				if len(l) >= 30 && !strings.Contains(string(given), l) {
					lines[l] = true
				}
			}
		}
	}
	if len(lines) == 0 {
		t.Fatal("the solutions have no region lines: nothing to look for")
	}
	return lines
}

// TestTheLearnersCopyHoldsNoSolutionAndWorks: make template writes a new
// repository of one commit with none of what LearnerCopyOmits lists (no
// file quoting two or more lines of the solution's regions, no object of
// the upstream's history), in which the step builds, the harness's
// packages resolve, and the harness grades it — as a submission to the
// upstream and as the learner's own feedback run — without refusing
// anything (docs/instructors.md says a learner's copy has no solutions/).
// TestMakeCheckRunsInTheLearnersCopy runs make check in one.
func TestTheLearnersCopyHoldsNoSolutionAndWorks(t *testing.T) {
	ctx := context.Background()
	root := workbookRoot(t)
	st := steps.Default()
	omit := LearnerCopyOmits(steps.All())
	out := filepath.Join(t.TempDir(), "gw10-learner")
	commit, upstream, err := Template(ctx, TemplateOptions{Root: root, Ref: "HEAD", Out: out, Omit: omit})
	if err != nil {
		t.Fatal(err)
	}
	if upstream == "" || commit == "" {
		t.Fatalf("commits %q (copy), %q (upstream)", commit, upstream)
	}

	for _, o := range omit {
		data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(o.Path)))
		switch {
		case o.Stub != "" && err == nil && string(data) != o.Stub:
			t.Errorf("%s is not the stub that stands in for it:\n%s", o.Path, data)
		case o.Stub == "" && !os.IsNotExist(err):
			if _, serr := os.Stat(filepath.Join(out, filepath.FromSlash(o.Path))); !os.IsNotExist(serr) {
				t.Errorf("the copy holds %s (%s)", o.Path, o.Why)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "solutions")); !os.IsNotExist(err) {
		t.Errorf("the copy holds a solutions/ directory (stat: %v)", err)
	}
	regions := solutionRegionLines(t, root)
	err = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var quoted []string
		for line := range regions {
			if strings.Contains(string(data), line) {
				quoted = append(quoted, line)
			}
		}
		if len(quoted) >= 2 {
			rel, _ := filepath.Rel(out, path)
			t.Errorf("%s ships %d lines of the solution's regions, e.g. %q: add it to LearnerCopyOmits", rel, len(quoted), quoted[0])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every link of the copy's docs lands: none into what it leaves out,
	// none to an anchor of a guide it holds as a stub (upstream-only
	// regions hold those links, and are gone).
	var docs []string
	_ = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(out, path)
			docs = append(docs, rel)
			if strings.Contains(read(t, path), "upstream-only") {
				t.Errorf("%s still holds an upstream-only marker", rel)
			}
		}
		return nil
	})
	broken, links, err := steptest.BrokenLinks(out, docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Errorf("in the learner's copy, %s", b)
	}
	if links < 50 {
		t.Errorf("the copy's %d docs hold %d relative links: has the link syntax changed?", len(docs), links)
	}
	if readme := read(t, filepath.Join(out, "README.md")); strings.Contains(readme, "make test ") || strings.Contains(readme, st.SolutionDir+"/") {
		t.Errorf("the copy's README offers what needs solutions/ (make test, or the solution's directory):\n%s", readme)
	}
	// make help there lists the learner's targets, not those that need the
	// instructors' repository.
	if help, err := exec.Command("make", "-s", "-C", out, "help", "NO_COLOR=1").CombinedOutput(); err != nil {
		t.Errorf("make help in the copy: %v\n%s", err, help)
	} else if !strings.Contains(string(help), "\n  check ") || !strings.Contains(string(help), "\n  hint ") ||
		strings.Contains(string(help), "\n  test ") || strings.Contains(string(help), "\n  gradebook ") {
		t.Errorf("make help in the copy lists what needs solutions/, or not the learner's targets:\n%s", help)
	}
	if n := strings.TrimSpace(run(t, out, "git", "rev-list", "--count", "--all")); n != "1" {
		t.Errorf("the copy has %s commits, want 1 (the upstream's history holds the solution)", n)
	}
	if objs := run(t, out, "git", "rev-list", "--objects", "--all"); strings.Contains(objs, st.SolutionDir) {
		t.Errorf("the copy's objects name %s:\n%s", st.SolutionDir, objs)
	}

	// The copy's go.work names no solution (the upstream's names each), and
	// the copy's workspace resolves: go list -m lists its modules, the step
	// builds, and every package of the harness resolves there (go list:
	// compiling the harness again in a new directory costs a minute on a
	// busy machine, and make test builds it anyway).
	if uses := workspaceUses(t, out); !slices.Equal(uses, []string{"./harness", "./" + filepath.ToSlash(st.Dir)}) {
		t.Errorf("the copy's go.work uses %v, want the harness and the step (the copy holds no solutions/)", uses)
	}
	goIn := func(args ...string) (string, error) {
		cmd := exec.Command("go", args...)
		cmd.Dir = out
		cmd.Env = append(os.Environ(), "GOWORK=", "GOFLAGS=-mod=readonly")
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	want := "github.com/10xdev/gw10/harness\ngithub.com/10xdev/gw10/" + filepath.ToSlash(st.Dir) + "\n"
	if got, err := goIn("list", "-m"); err != nil || got != want {
		t.Errorf("go list -m in the copy: %v\n%s\nwant the harness and the step:\n%s", err, got, want)
	}
	for _, args := range [][]string{
		{"build", "./" + st.Dir + "/..."},
		{"list", "-e", "-deps", "-f", "{{with .Error}}{{.}}{{end}}{{range .DepsErrors}}{{.}}{{end}}", "./harness/..."},
	} {
		if got, err := goIn(args...); err != nil || strings.TrimSpace(got) != "" {
			t.Errorf("go %s in the copy: %v\n%s", strings.Join(args, " "), err, got)
		}
	}
	// go.work.sum holds what the copy's workspace needs: go wrote nothing.
	if status := run(t, out, "git", "status", "--porcelain"); status != "" {
		t.Errorf("go changed the copy's files (is go.work.sum missing a line?):\n%s", status)
	}

	// The upstream grades a repository made from the copy, refusing nothing;
	// what the copy leaves out reads as ignored, never as a reason.
	tree := assemble(t, Options{Root: root, Submission: out, Step: st.Dir, Leave: []string{st.SolutionDir}})
	if !tree.Grading.Gradable || !tree.Grading.Official {
		t.Errorf("the upstream does not grade the learner's copy: %+v", tree.Grading)
	}
	// The stubs the copy holds in place of the guides, and its go.work, are
	// the template's, not the learner's changes: an untouched copy has
	// nothing ignored.
	if len(tree.Grading.Ignored) > 0 {
		t.Errorf("an untouched learner's copy lists changes outside the step: %v", tree.Grading.Ignored)
	}
	if uses := workspaceUses(t, tree.Dir); slices.ContainsFunc(uses, func(u string) bool { return strings.Contains(u, "solutions") }) {
		t.Errorf("the grading tree's go.work uses %v: it names solutions/, which the tree does not hold", uses)
	}
	goEnv := []string{"GOWORK=" + filepath.Join(tree.Dir, "go.work"), "CGO_ENABLED=0"}
	if foreign, err := ForeignImports(ctx, tree.StepDir, goEnv, tree.Allowed); err != nil || len(foreign) > 0 {
		t.Errorf("the copy's step imports from outside: %v %v", foreign, err)
	}
	// And the copy's own make grade (feedback on its working tree).
	own := assemble(t, Options{Root: out, Step: st.Dir, Leave: []string{st.SolutionDir}})
	if !own.Grading.Gradable {
		t.Errorf("the learner's copy does not grade itself: %+v", own.Grading)
	}
}

// workspaceUses are the directories the go.work in dir uses, as written.
func workspaceUses(t *testing.T, dir string) []string {
	t.Helper()
	name := filepath.Join(dir, "go.work")
	wf, err := modfile.ParseWork(name, []byte(read(t, name)), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uses []string
	for _, u := range wf.Use {
		uses = append(uses, u.Path)
	}
	return uses
}

// TestTheTemplateDocsListWhatItLeavesOut: docs/instructors.md's table of
// what a learner's copy leaves out names every path LearnerCopyOmits does.
func TestTheTemplateDocsListWhatItLeavesOut(t *testing.T) {
	doc := read(t, filepath.Join("..", "..", "docs", "instructors.md"))
	start := strings.Index(doc, "## A learner's copy: `make template`")
	if start < 0 {
		t.Fatal("docs/instructors.md has no section on make template")
	}
	section := doc[start:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	for _, o := range LearnerCopyOmits(steps.All()) {
		if !strings.Contains(section, "`"+o.Path+"`") && !strings.Contains(section, "`"+o.Path+"/`") {
			t.Errorf("docs/instructors.md does not say a learner's copy leaves out %s (%s)", o.Path, o.Why)
		}
	}
}

// TestTemplateRefusesAnOccupiedOrInsideDirectory: a learner's copy goes
// into a new directory outside the workbook, never over files.
func TestTemplateRefusesAnOccupiedOrInsideDirectory(t *testing.T) {
	ctx := context.Background()
	upstream := newUpstream(t)
	busy := t.TempDir()
	write(t, busy, "keep.txt", "mine\n")
	for _, out := range []string{busy, filepath.Join(upstream, "learner")} {
		if _, _, err := Template(ctx, TemplateOptions{Root: upstream, Out: out}); err == nil {
			t.Errorf("Template into %s: no error", out)
		}
	}
	if got := read(t, filepath.Join(busy, "keep.txt")); got != "mine\n" {
		t.Errorf("keep.txt = %q", got)
	}
}

// TestMakeCheckRunsInTheLearnersCopy: make check in a learner's copy, as a
// learner runs it first: the skeleton builds, the harness's own stages
// pass, every check runs and fails on the skeleton's TODOs (not on the
// harness), and the summary a learner reads ends it with a non-zero exit.
func TestMakeCheckRunsInTheLearnersCopy(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make check needs make: %v", err)
	}
	root := workbookRoot(t)
	out := filepath.Join(t.TempDir(), "gw10-learner")
	if _, _, err := Template(context.Background(), TemplateOptions{Root: root, Ref: "HEAD", Out: out, Omit: LearnerCopyOmits(steps.All())}); err != nil {
		t.Fatal(err)
	}
	makeCheckInTheCopy(t, root, out)
}

// makeCheckInTheCopy runs `make check` in the learner's copy at out and
// asserts what the learner sees. Only the harness binary is not the copy's
// own build: compiling the harness in a new directory misses the build cache
// (its directory is in every package's cache key) and costs a minute, so the
// workbook's gw10 (the same harness) stands in as the copy's bin/gw10 and
// make is told it is up to date (-o); the recipe of check is the copy's.
func makeCheckInTheCopy(t *testing.T, root, out string) {
	t.Helper()
	st := steps.Default()
	gw10 := filepath.Join(out, "bin", "gw10")
	build := exec.Command("go", "build", "-tags", "gw10checkonly", "-o", gw10, "./harness/cmd/gw10") // as make builds it
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building gw10 for the copy: %v\n%s", err, b)
	}
	cmd := exec.Command("make", "--no-print-directory", "-o", "bin/gw10", "check")
	cmd.Dir = out
	cmd.Env = append(cleanMakeEnv(t, os.Environ()), "GOWORK=", "NO_COLOR=1")
	b, err := cmd.CombinedOutput()
	got := string(b)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(got, "check] Error 1") {
		// make's 2 for a failed recipe; gw10's 1 for failing checks (3
		// would be the harness's own failure, 2 a usage error).
		t.Fatalf("make check in the learner's copy: %v, want make to fail with gw10's exit status 1 (checks failed)\n%s", err, got)
	}
	for _, stage := range []string{"build", "generate", "cluster", "install CRD", "controller identity", "proxy stand-in", "start controller"} {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(stage) + ` \.\.\. +ok \(`).MatchString(got) {
			t.Errorf("make check in the copy: the %s stage did not pass:\n%s", stage, got)
		}
	}
	if st.UnitTests != "" && !regexp.MustCompile(`(?m)^  unit tests \.\.\. +FAIL \(`).MatchString(got) {
		t.Errorf("make check in the copy: the skeleton's unit test (%s) did not fail as it must:\n%s", st.UnitTests, got)
	}
	points := 0
	for _, c := range st.Checks {
		points += c.Points
		if !regexp.MustCompile(`(?m)^  FAIL ` + regexp.QuoteMeta(c.ID) + ` +\d`).MatchString(got) {
			t.Errorf("make check in the copy: check %s did not run and fail on the skeleton:\n%s", c.ID, got)
		}
	}
	summary := fmt.Sprintf("0/%d checks pass, 0/%d points, and the unit tests stage failed. Fix %s first", len(st.Checks), points, st.Checks[0].ID)
	if !strings.Contains(got, summary) {
		t.Errorf("make check in the copy does not end on the learner's summary %q:\n%s", summary, got)
	}
	if strings.Contains(got, "not run: an earlier stage failed") || regexp.MustCompile(`(?m)^gw10: (?:.*error|.*failed)`).MatchString(got) {
		t.Errorf("make check in the copy reports a harness error, not the skeleton's failures:\n%s", got)
	}
}

// TestUpstreamOnlyRegionsLeaveTheCopy: make template drops the lines
// between the upstream-only markers, markers included, and refuses a region
// left open or closed twice rather than ship half a file.
func TestUpstreamOnlyRegionsLeaveTheCopy(t *testing.T) {
	got, err := upstreamOnlyRemoved("a\n" + upstreamOnlyBegin + "\nmake test\n" + upstreamOnlyEnd + "\nb\n")
	if err != nil || got != "a\nb\n" {
		t.Errorf("got %q, %v; want \"a\\nb\\n\"", got, err)
	}
	for _, bad := range []string{
		"a\n" + upstreamOnlyBegin + "\nb\n",
		"a\n" + upstreamOnlyEnd + "\nb\n",
		upstreamOnlyBegin + "\n" + upstreamOnlyBegin + "\n" + upstreamOnlyEnd + "\n",
	} {
		if _, err := upstreamOnlyRemoved(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
