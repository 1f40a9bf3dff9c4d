package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/skeleton"
	"github.com/10xdev/gw10/harness/steps"
)

// TestDiffWithoutTheSolutionSaysWhereToRunIt: a learner's copy has no
// solutions/; make diff says so instead of failing on a missing path.
func TestDiffWithoutTheSolutionSaysWhereToRunIt(t *testing.T) {
	st := steps.Default()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, st.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	err := runDiff(context.Background(), []string{"--root", root, "--step", st.Dir})
	if err == nil || !strings.Contains(err.Error(), "which this checkout does not have") {
		t.Fatalf("want the missing solution explained, got %v", err)
	}
}

// TestDiffTakesAnAbsoluteLearnerPath: an instructor diffs a submission
// checked out elsewhere with STEP=/path/to/its/module.
func TestDiffTakesAnAbsoluteLearnerPath(t *testing.T) {
	st := steps.Default()
	abs, err := filepath.Abs(filepath.Join(workbook, st.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := diffTo(context.Background(), []string{"--root", workbook, "--step", abs}, io.Discard, io.Discard); err != nil {
		t.Fatalf("diff of %s: %v", abs, err)
	}
	if err := runDiff(context.Background(), []string{"--root", workbook, "--step", filepath.Join(t.TempDir(), "missing")}); err == nil ||
		!strings.Contains(err.Error(), "no learner module to diff") {
		t.Fatalf("a missing learner module: %v", err)
	}
}

// gitRun runs git in dir with a fixed identity, failing the test on error.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=learner", "-c", "user.email=l@example.com", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// solvedCopy writes, under repo/<step>, the solution as a learner who filled
// every region with the answer has it: the skeleton's files with the
// solution's content and the learner's module path (region markers kept:
// they are comments, and a learner who copies the solution copies them).
// all adds the solution-only files (the envtest tests) too.
func solvedCopy(t *testing.T, repo string, all bool) {
	t.Helper()
	st := steps.Default()
	sol := filepath.Join(workbook, st.SolutionDir)
	err := filepath.WalkDir(sol, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(sol, path)
		rel = filepath.ToSlash(rel)
		if rel == "bin" || (!all && skeleton.Skipped(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		data = []byte(strings.ReplaceAll(string(data), st.SolutionModule, st.Module))
		dst := filepath.Join(repo, st.Dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// newSubmission makes a learner's repository holding a solved step01/ (see
// solvedCopy) in one commit on main.
func newSubmission(t *testing.T, all bool) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "learner")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, repo, "init", "--quiet")
	solvedCopy(t, repo, all)
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "--quiet", "-m", "solved")
	return repo
}

func diffOf(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	if err := diffTo(context.Background(), append([]string{"--root", workbook}, args...), &out, &errOut); err != nil {
		t.Fatalf("gw10 diff %v: %v\n%s", args, err, errOut.String())
	}
	return out.String(), errOut.String()
}

// headers returns the files a unified diff names, and fails the test on a
// header that is not repository-relative (an absolute or temporary path).
func headers(t *testing.T, d string) []string {
	t.Helper()
	var names []string
	for _, line := range strings.Split(d, "\n") {
		if strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ") {
			name := strings.Fields(line)[1]
			if filepath.IsAbs(name) || strings.Contains(name, "//") || strings.Contains(name, os.TempDir()) {
				t.Errorf("a diff header is not relative to the repository: %q", line)
			}
			names = append(names, name)
		}
	}
	return names
}

// TestDiffOfASolvedSubmissionShowsOnlyTheRegions: make diff SUBMISSION=…
// (the skeleton view) of a learner who pasted the answer shows the regions
// filled and nothing else — no //gw10: marker on either side, headers
// relative to the repository — and the solution view shows nothing at all
// (issue 18 §7).
func TestDiffOfASolvedSubmissionShowsOnlyTheRegions(t *testing.T) {
	st := steps.Default()
	repo := newSubmission(t, false)

	d, _ := diffOf(t, "--step", st.Dir, "--submission", repo)
	if strings.Contains(d, "//gw10:") {
		t.Errorf("the diff shows //gw10: markers:\n%s", d)
	}
	// What may differ: lines of the solution's regions (+), the skeleton's
	// TODO comments and stubs (-), and imports the stubs did not need (+).
	regions, err := skeleton.RegionLines(filepath.Join(workbook, st.SolutionDir))
	if err != nil {
		t.Fatal(err)
	}
	regionLines := map[string]bool{}
	regionFiles := map[string]bool{}
	for rel, lines := range regions {
		regionFiles[st.Dir+"/"+rel] = true
		for _, l := range lines {
			regionLines[strings.ReplaceAll(l, st.SolutionModule, st.Module)] = true
		}
	}
	if d == "" {
		t.Fatal("no diff: the skeleton has no regions to fill")
	}
	for _, name := range headers(t, d) {
		name = strings.TrimPrefix(name, "skeleton/")
		if !regionFiles[name] {
			t.Errorf("the diff touches %s, which has no exercise region", name)
		}
	}
	for _, line := range strings.Split(d, "\n") {
		if line == "" || strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ") || strings.HasPrefix(line, "@@") || strings.HasPrefix(line, " ") {
			continue
		}
		text := strings.TrimSpace(line[1:])
		switch {
		case text == "":
		case line[0] == '+' && (regionLines[text] || strings.HasSuffix(text, `"`)): // a region line, or an import
		case line[0] == '-':
		default:
			t.Errorf("the diff shows a line outside the regions: %q", line)
		}
	}

	d, _ = diffOf(t, "--step", st.Dir, "--submission", repo, "--view", "solution")
	if !strings.Contains(d, "is identical to the solution") {
		t.Errorf("the solution view of a solved copy is not empty:\n%s", d)
	}
	// A copy of every solution file, the envtest tests too, still diffs to
	// nothing against the solution.
	all := newSubmission(t, true)
	if d, _ = diffOf(t, "--step", st.Dir, "--submission", all, "--view", "solution"); !strings.Contains(d, "is identical to the solution") {
		t.Errorf("the solution view of a verbatim copy is not empty:\n%s", d)
	}
}

// TestDiffShowsALearnerAddedTestFile: the file where a unit-stage attack
// lives (a new *_test.go) shows in every view, by default (issue 24).
func TestDiffShowsALearnerAddedTestFile(t *testing.T) {
	st := steps.Default()
	repo := newSubmission(t, false)
	attack := filepath.Join(repo, st.Dir, "internal", "controller", "zz_init_test.go")
	if err := os.WriteFile(attack, []byte("package controller\n\nfunc init() { /* rewrite bin/manager */ }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "--quiet", "-m", "attack")
	want := st.Dir + "/internal/controller/zz_init_test.go"
	for _, view := range []string{"", "learner", "solution"} {
		d, _ := diffOf(t, "--step", st.Dir, "--submission", repo, "--view", view)
		if !slices.Contains(headers(t, d), want) || !strings.Contains(d, "+func init()") {
			t.Errorf("VIEW=%q does not show %s:\n%s", view, want, d)
		}
	}
	// A directory (STEP=) shows it too, with the same repository-relative headers.
	d, _ := diffOf(t, "--step", filepath.Join(repo, st.Dir))
	if !slices.Contains(headers(t, d), want) {
		t.Errorf("STEP=%s does not show %s:\n%s", filepath.Join(repo, st.Dir), want, d)
	}
}

// TestDiffShowsCodeHiddenBehindEscapes: a line whose code is followed by
// ESC[2K and a carriage return (a terminal would erase the code and show
// the decoy after it) reaches the diff's reader with both shown as \x...
func TestDiffShowsCodeHiddenBehindEscapes(t *testing.T) {
	st := steps.Default()
	repo := newSubmission(t, false)
	hidden := filepath.Join(repo, st.Dir, "internal", "controller", "hidden.go")
	if err := os.WriteFile(hidden, []byte("package controller\n\nfunc init() { runPayload() } //\x1b[2K\r+func rowName(s string) string { return s }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "--quiet", "-m", "hidden")
	d, _ := diffOf(t, "--step", st.Dir, "--submission", repo)
	if strings.ContainsAny(d, "\x1b\r") {
		t.Errorf("the diff passes raw control characters on:\n%q", d)
	}
	if !strings.Contains(d, `+func init() { runPayload() } //\x1b[2K\x0d+func rowName`) {
		t.Errorf("the hidden code does not show with its escapes:\n%s", d)
	}
}

// TestDiffReadsAURLAtARef: SUBMISSION may be a git URL (here file:// of a
// bare repository) and REF a branch other than its HEAD.
func TestDiffReadsAURLAtARef(t *testing.T) {
	st := steps.Default()
	repo := newSubmission(t, false)
	gitRun(t, repo, "checkout", "--quiet", "-b", "wip")
	readme := filepath.Join(repo, st.Dir, "NOTES.md")
	if err := os.WriteFile(readme, []byte("only on wip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "--quiet", "-m", "wip")
	gitRun(t, repo, "checkout", "--quiet", "main")
	bare := filepath.Join(t.TempDir(), "learner.git")
	gitRun(t, filepath.Dir(bare), "clone", "--quiet", "--bare", repo, bare)
	url := "file://" + bare

	d, stderr := diffOf(t, "--step", st.Dir, "--submission", url, "--ref", "wip")
	if !strings.Contains(d, "+only on wip") || !strings.Contains(stderr, url) || !strings.Contains(stderr, " at wip ") {
		t.Errorf("REF=wip of %s: want NOTES.md added and the URL and ref named; stderr %q:\n%s", url, stderr, d)
	}
	if d, _ := diffOf(t, "--step", st.Dir, "--submission", url); strings.Contains(d, "only on wip") {
		t.Errorf("no REF reads HEAD (main), which has no NOTES.md:\n%s", d)
	}
	var out, errOut strings.Builder
	if err := diffTo(context.Background(), []string{"--root", workbook, "--submission", url, "--ref", "no-such-branch"}, &out, &errOut); err == nil {
		t.Errorf("a missing ref is not an error")
	}
	if err := diffTo(context.Background(), []string{"--root", workbook, "--ref", "wip"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "SUBMISSION") {
		t.Errorf("REF without SUBMISSION: %v", err)
	}
}
