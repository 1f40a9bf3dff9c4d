package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	gmtext "github.com/yuin/goldmark/text"
	"golang.org/x/tools/txtar"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/10xdev/gw10/harness/assets"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/sandbox"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// TestMain makes this test binary the sandbox's helper too: the grades
// these tests run re-execute it as gw10 would be.
func TestMain(m *testing.M) {
	sandbox.MaybeHelper()
	ctrllog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// The hostile-submission suite (testdata/hostile/*.txtar). Each file is one
// attack on the grade, written as a learner could commit it in step01/:
//
//	<what it does and why it must fail, in prose>
//	base: solution | skeleton   the step01/ it starts from (the solution with
//	                            its module path made the learner's)
//	run: <check IDs>            the checks graded (the unit tests always run)
//	points: N                   the points it must get: what its controller earns
//	unit: pass | fail | none    the unit-test stage's verdict (none: it never ran)
//	report: <text>              the reports must say this (repeatable)
//	absent: <path>              a marker the attack tries to create (repeatable)
//	never: <text>               the reports must not say this (repeatable)
//	sandbox: off                grade it unsandboxed (the last guards)
//	unit-wall: <duration>       the unit tests' wall-time limit
//	large: <path> <bytes>       a file of that many zero bytes (repeatable;
//	                            git compresses it to almost nothing)
//	-- <path in step01/> --     a file added or replaced
//	-- <path>:old -- / :new --  an edit (the old text occurs exactly once)
//
// For every attack: the points are its controller's, nothing it could reach
// outside the sandbox changed (the protected paths hash the same before and
// after), the planted credentials appear in no report, and the reports name
// what was refused or cut off. The grades run two at a time.
type attack struct {
	name, doc    string
	base         string
	run          []string
	points       int
	unit         report.Status
	reports      []string
	never        []string
	absent       []string
	unsandboxed  bool
	unitWall     time.Duration
	files, edits map[string]string // edits: path -> old, files[path] the new text
	large        map[string]int64  // path -> size, zeros
}

func loadAttacks(t *testing.T) []attack {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "hostile", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no attacks: %v", err)
	}
	var out []attack
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		a := attack{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), files: map[string]string{}, edits: map[string]string{}, large: map[string]int64{}, points: -1}
		var doc []string
		for _, l := range strings.Split(string(ar.Comment), "\n") {
			k, v, ok := strings.Cut(l, ": ")
			switch {
			case ok && k == "base":
				a.base = v
			case ok && k == "run":
				a.run = strings.Split(v, ",")
			case ok && k == "points":
				a.points, err = strconv.Atoi(v)
			case ok && k == "unit":
				a.unit = report.Status(v)
			case ok && k == "report":
				a.reports = append(a.reports, v)
			case ok && k == "never":
				a.never = append(a.never, v)
			case ok && k == "absent":
				a.absent = append(a.absent, v)
			case ok && k == "sandbox" && v == "off":
				a.unsandboxed = true
			case ok && k == "unit-wall":
				a.unitWall, err = time.ParseDuration(v)
			case ok && k == "large":
				name, size, _ := strings.Cut(v, " ")
				a.large[name], err = strconv.ParseInt(size, 10, 64)
			default:
				doc = append(doc, l)
			}
			if err != nil {
				t.Fatalf("%s: %s: %v", p, l, err)
			}
		}
		a.doc = strings.TrimSpace(strings.Join(doc, "\n"))
		for _, f := range ar.Files {
			if name, ok := strings.CutSuffix(f.Name, ":old"); ok {
				a.edits[name] = string(f.Data)
				continue
			}
			a.files[strings.TrimSuffix(f.Name, ":new")] = string(f.Data)
		}
		if a.base != "solution" && a.base != "skeleton" || len(a.run) == 0 || a.points < 0 || a.unit == "" || a.doc == "" {
			t.Fatalf("%s: needs prose, base, run, points and unit", p)
		}
		out = append(out, a)
	}
	return out
}

// Planted credentials: where a job's would be. None may reach a report.
const (
	plantedToken     = "ghs_PLANTEDjobTOKEN0123456789"
	plantedGitconfig = "PLANTEDgitconfigTOKEN"
	plantedGitRepo   = "PLANTEDdotGitConfigTOKEN"
)

func TestHostileSubmissions(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	testenv.Needs(t, testenv.Sandbox)
	attacks := loadAttacks(t)
	probe, err := sandbox.Open(context.Background(), sandbox.Options{})
	if errors.Is(err, sandbox.ErrUnavailable) {
		testenv.Missing(t, testenv.Sandbox, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := probe.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	upstream, protected := plantCredentials(t)
	before := hashProtected(t, protected)
	start := time.Now()
	// Unsandboxed attacks run after the others: learner code running as the
	// grader can reach every grade this process runs (that is why such a
	// grade is not official), and would spoil the sandboxed ones' results.
	for _, unsandboxed := range []bool{false, true} {
		t.Run("attacks", func(t *testing.T) {
			for _, a := range attacks {
				if a.unsandboxed != unsandboxed {
					continue
				}
				t.Run(a.name, func(t *testing.T) {
					t.Parallel()
					gradeAttack(t, upstream, a)
				})
			}
		})
	}
	t.Logf("the suite's %d grades took %s", len(attacks), time.Since(start).Round(time.Second))
	if ps := leftovers(t); len(ps) > 0 {
		t.Errorf("processes of the sandbox's users survive the grades: %v", ps)
	}
	after := hashProtected(t, protected)
	for _, p := range protected {
		if before[p] != after[p] {
			t.Errorf("%s changed during the suite", p)
		}
	}
	for _, a := range attacks {
		for _, m := range a.absent {
			if _, err := os.Lstat(m); err == nil {
				t.Errorf("%s: %s exists", a.name, m)
				_ = os.RemoveAll(m)
			}
		}
	}
}

// plantCredentials puts fake credentials where a CI job's are: in the
// environment, in ~/.gitconfig and in the upstream checkout's .git/config
// (a clone of this workbook, graded in). It returns the upstream and the
// paths no attack may change.
func plantCredentials(t *testing.T) (string, []string) {
	t.Helper()
	goEnv := func(k string) string {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	store, err := assets.Ensure(context.Background(), assets.Options{NoDownload: true, NoBuild: true})
	if err != nil {
		t.Fatalf("the envtest binaries (make assets): %v", err)
	}
	// The grader finds its caches and the envtest store as before; HOME is
	// a fake one holding a credential.
	for k, v := range map[string]string{
		"GOCACHE": goEnv("GOCACHE"), "GOMODCACHE": goEnv("GOMODCACHE"), "GOPATH": goEnv("GOPATH"),
		"KUBEBUILDER_ASSETS": store.Dir,
	} {
		t.Setenv(k, v)
	}
	// World-readable, as a careless runner's would be: only the sandbox's
	// hiding keeps learner code out (the read-upstream attack).
	home := readableTempDir(t)
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[http]\n\textraHeader = AUTHORIZATION: basic "+plantedGitconfig+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	summary := filepath.Join(t.TempDir(), "step-summary.md")
	t.Setenv("HOME", home)
	t.Setenv("GITHUB_TOKEN", plantedToken)
	t.Setenv("ACTIONS_RUNTIME_TOKEN", plantedToken)
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("GITHUB_ENV", summary)

	upstream := filepath.Join(readableTempDir(t), "upstream")
	git(t, filepath.Dir(upstream), "clone", "-q", workbook, upstream)
	git(t, upstream, "config", "http.extraHeader", "AUTHORIZATION: basic "+plantedGitRepo)
	protected := []string{
		filepath.Join(upstream, "harness"), filepath.Join(upstream, "Makefile"), filepath.Join(upstream, ".git", "config"),
		filepath.Join(workbook, "harness", "cmd"), filepath.Join(workbook, "Makefile"),
		filepath.Join(home, ".gitconfig"), os.Getenv("KUBEBUILDER_ASSETS"),
	}
	if exe, err := os.Executable(); err == nil {
		protected = append(protected, exe) // the grader
	}
	return upstream, protected
}

// readableTempDir is a temporary directory every user may read, under
// $TMPDIR/gw10-hostile-*/ (t.TempDir's parents are the test's alone).
func readableTempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "gw10-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// hashProtected hashes every regular file under each path (modes included).
func hashProtected(t *testing.T, paths []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, root := range paths {
		h := sha256.New()
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s %v\n", p, fi.Mode())
			if d.Type().IsRegular() {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				h.Write(b)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("hashing %s: %v", root, err)
		}
		out[root] = fmt.Sprintf("%x", h.Sum(nil))
	}
	return out
}

// learnerStep01 is the step's directory a learner would commit: the
// skeleton, or the solution with its module path made the learner's.
func learnerStep01(t *testing.T, dir, base string) {
	t.Helper()
	st := steps.Default()
	if base == "skeleton" {
		return
	}
	learnerMod, solutionMod := "github.com/10xdev/gw10/"+st.Dir, "github.com/10xdev/gw10/"+filepath.ToSlash(st.SolutionDir)
	stepDir := filepath.Join(dir, st.Dir)
	if err := os.RemoveAll(stepDir); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(workbook, st.SolutionDir)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && rel == "bin" {
			return filepath.SkipDir
		}
		target := filepath.Join(stepDir, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, bytes.ReplaceAll(b, []byte(solutionMod), []byte(learnerMod)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func gradeAttack(t *testing.T, upstream string, a attack) {
	st := steps.Default()
	dir := filepath.Join(t.TempDir(), "fork")
	git(t, filepath.Dir(dir), "clone", "-q", upstream, dir)
	learnerStep01(t, dir, a.base)
	for name, old := range a.edits {
		p := filepath.Join(dir, st.Dir, filepath.FromSlash(name))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(string(b), old) != 1 {
			t.Fatalf("%s: the old text occurs %d times in %s", a.name, strings.Count(string(b), old), name)
		}
		a.files[name] = strings.Replace(string(b), old, a.files[name], 1)
	}
	for name, body := range a.files {
		p := filepath.Join(dir, st.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, size := range a.large {
		p := filepath.Join(dir, st.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(p)
		if err == nil {
			err = errors.Join(f.Truncate(size), f.Close())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "the learner's work")

	out := t.TempDir()
	f := checkFlags{root: upstream, step: st.Dir, cluster: "envtest", timeline: ""}
	gr := gradeRun{submission: dir, submissionRef: "HEAD", upstreamRef: "HEAD", out: out, selection: a.run,
		graderCommit: git(t, upstream, "rev-parse", "HEAD"),
		unitWall:     a.unitWall}
	if a.unsandboxed {
		gr.noSandbox = "--sandbox=off (the suite grades this attack unsandboxed)"
	}
	start := time.Now()
	err := gr.run(context.Background(), f)
	t.Logf("%s: graded in %s", a.name, time.Since(start).Round(100*time.Millisecond))
	var ee exitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("the grade failed: %v", err)
	}
	r := readReports(t, out)
	all := r.markdown + "\n" + mustRead(t, filepath.Join(out, "grade.json")) + "\n" + mustRead(t, filepath.Join(out, "junit.xml"))
	s := r.json.Summary
	if s.Points != a.points {
		t.Errorf("%d points, want %d (what its controller earns)\n%s", s.Points, a.points, r.markdown)
	}
	unit := report.Status("none") // no unit-test stage ran (a submission refused before it builds)
	for _, stg := range r.json.Stages {
		if stg.Name == "unit tests" {
			unit = stg.Status
		}
	}
	if unit != a.unit {
		t.Errorf("the unit-test stage is %q, want %q\n%s", unit, a.unit, r.markdown)
	}
	for _, w := range a.reports {
		if !strings.Contains(all, w) {
			t.Errorf("the reports do not say %q\n%s", w, r.markdown)
		}
	}
	for _, w := range a.never {
		if strings.Contains(all, w) {
			t.Errorf("the reports say %q\n%s", w, r.markdown)
		}
	}
	if n := markdownHeadings(t, r.markdown); n != 1 {
		t.Errorf("summary.md has %d headings, want the grader's one\n%s", n, r.markdown)
	}
	for _, secret := range []string{plantedToken, plantedGitconfig, plantedGitRepo} {
		if strings.Contains(all, secret) {
			t.Errorf("a planted credential reached the reports: %s\n%s", secret, r.markdown)
		}
	}
	if g := r.json.Grading; g == nil || g.Sandbox == nil || g.Sandbox.Enforced == a.unsandboxed {
		t.Errorf("the grading's sandbox is %+v", g)
	}
}

// leftovers are the live processes of the pool's users that no grade
// holds (other packages' tests may be using some).
func leftovers(t *testing.T) []sandbox.Proc {
	t.Helper()
	ps, err := sandbox.LeftBehind(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// markdownHeadings counts the headings of md as GitHub renders it
// (CommonMark with its extensions), and fails on an HTML comment: whatever
// a submission chose is text in summary.md.
func markdownHeadings(t *testing.T, md string) int {
	t.Helper()
	src := []byte(md)
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(gmtext.NewReader(src))
	n := 0
	_ = ast.Walk(doc, func(node ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch node := node.(type) {
		case *ast.Heading:
			n++
		case *ast.HTMLBlock:
			if node.HTMLBlockType == ast.HTMLBlockType2 {
				t.Errorf("summary.md holds an HTML comment")
			}
		case *ast.RawHTML:
			if strings.HasPrefix(string(node.Segments.Value(src)), "<!--") {
				t.Errorf("summary.md holds an HTML comment")
			}
		}
		return ast.WalkContinue, nil
	})
	return n
}

// TestEveryAttackApplies: each attack's edits find their old text once in its
// base (the skeleton or the solution in the learner's module), so a change
// to either shows here, in seconds, instead of in the grades' run.
func TestEveryAttackApplies(t *testing.T) {
	st := steps.Default()
	for _, a := range loadAttacks(t) {
		for name, old := range a.edits {
			var text []byte
			var err error
			if a.base == "skeleton" {
				text, err = os.ReadFile(filepath.Join(workbook, st.Dir, filepath.FromSlash(name)))
			} else { // as learnerStep01 writes it: under the learner's module path
				text, err = os.ReadFile(filepath.Join(workbook, st.SolutionDir, filepath.FromSlash(name)))
				text = bytes.ReplaceAll(text, []byte(st.SolutionModule), []byte(st.Module))
			}
			if err != nil {
				t.Errorf("%s: %v", a.name, err)
				continue
			}
			if n := strings.Count(string(text), old); n != 1 {
				t.Errorf("%s: the old text occurs %d times in the %s's %s, want once:\n%s", a.name, n, a.base, name, old)
			}
		}
	}
}
