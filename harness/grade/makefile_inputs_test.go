package grade

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/steps"
)

// makeWithStandIn runs a target of the repository Makefile with vars on the
// command line and a stand-in gw10 that records its arguments, one a line.
// It fails the test if anything created marker (an input ran as a command)
// and returns the arguments gw10 received.
func makeWithStandIn(t *testing.T, marker, target string, vars ...string) []string {
	t.Helper()
	return makeWithStandInEnv(t, marker, target, nil, vars...)
}

// makeWithStandInEnv is makeWithStandIn with env added to make's environment
// (a bot may pass its inputs that way).
func makeWithStandInEnv(t *testing.T, marker, target string, env []string, vars ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	root := filepath.Dir(workbookMakefile())
	dir := t.TempDir()
	args := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "gw10")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + args + "\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// A second makefile replaces the rule that would build bin/gw10 (and
	// bin/gw10-full, the same stand-in).
	extra := filepath.Join(dir, "extra.mk")
	if err := os.WriteFile(extra, []byte("$(GW10):\n\t@:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-f", "Makefile", "-f", extra, target, "GW10=" + fake, "GW10_FULL=" + fake}, vars...)...)
	cmd.Dir = root
	cmd.Env = append(cleanMakeEnv(t, os.Environ()), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", target, err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		_ = os.Remove(marker) // the next case starts clean
		t.Fatalf("make %s: an input ran as a command: %s exists\n%s", target, marker, out)
	}
	got, err := os.ReadFile(args)
	if err != nil {
		t.Fatalf("make %s: the stand-in gw10 did not run: %v\n%s", target, err, out)
	}
	return strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
}

// hostileValue spells commands every way a shell or make could run them:
// backticks, $(), make's $(shell), quotes, `;` and a glob.
func hostileValue(marker string) string {
	return "main`touch " + marker + "`$(touch " + marker + ")$(shell touch " + marker + ")\"';touch " + marker + ";'* ${HOME} $$HOME"
}

// TestMakeInputsAreData drives every target of the repository Makefile that
// takes an input (make grade, gradebook, check, watch, diff, hint, bench, skeleton,
// sketch, template, mutants) with hostile values: nothing a value spells may run, and each
// reaches gw10 verbatim as the one argument it names (issues 18 §1, 24).
func TestMakeInputsAreData(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	h := hostileValue(marker)
	flags := "--run $(touch " + marker + ") `touch " + marker + "` ;touch " + marker + " *"
	flagWords := strings.Fields(flags)
	cases := []struct {
		target string
		vars   []string
		want   []string
	}{
		{"grade", []string{"STEP=" + h, "CLUSTER=" + h, "SUBMISSION=" + h, "SUBMISSION_REF=" + h, "UPSTREAM_REF=" + h, "GRADE_OUT=" + h, "CHECK_FLAGS=" + flags},
			append([]string{"grade", "--step", h, "--cluster", h, "--submission", h, "--submission-ref", h, "--upstream-ref", h, "--out", h}, flagWords...)},
		{"check", []string{"STEP=" + h, "CLUSTER=" + h, "CHECK_FLAGS=" + flags},
			append([]string{"check", "--step", h, "--cluster", h}, flagWords...)},
		{"watch", []string{"STEP=" + h, "CHECK_FLAGS=" + flags},
			append([]string{"watch", "--step", h}, flagWords...)},
		{"diff", []string{"STEP=" + h, "VIEW=" + h, "SUBMISSION=" + h, "REF=" + h},
			[]string{"diff", "--step", h, "--view", h, "--submission", h, "--ref", h}},
		{"hint", []string{"STEP=" + h, "ID=" + h}, []string{"hint", "--step", h, "--", h}},
		{"hint", []string{"ID=-v"}, []string{"hint", "--step", steps.Default().Dir, "--", "-v"}},
		{"bench", []string{"STEP=" + h, "ROUTES=" + h, "CHECK_REPORT=" + h},
			[]string{"bench", "--step", h, "--routes", h, "--repeat", "3", "--check-report", h, "--out", "reports"}},
		{"bench", []string{"BENCH_STEP=" + h, "ROUTES=" + h, "REPEAT=" + h},
			[]string{"bench", "--step", h, "--routes", h, "--repeat", h, "--out", "reports"}},
		// A non-empty FORCE skips the check for uncommitted edits.
		{"skeleton", []string{"FORCE=" + h}, []string{"skeleton"}},
		{"sketch", []string{"STEP=" + h, "FORCE=" + h}, []string{"sketch", "--step", h, "--force", h}},
		{"template", []string{"TEMPLATE_OUT=" + h, "UPSTREAM_REF=" + h}, []string{"template", "--out", h, "--ref", h}},
		{"mutants", []string{"SAMPLE=" + h, "SEED=" + h, "ONLY=" + h}, []string{"mutants", "--sample", h, "--seed", h, "--only", h}},
		{"proxy", []string{"PROXY_ADDR=" + h}, []string{"proxy", "--listen", h}},
		{"gradebook", []string{"STEP=" + h, "CLUSTER=" + h, "ROSTER=" + h, "UPSTREAM_REF=" + h, "GRADE_OUT=" + h, "JOBS=" + h},
			[]string{"gradebook", "--step", h, "--cluster", h, "--roster", h, "--upstream-ref", h, "--out", h, "--jobs", h}},
		// Without GRADE_OUT the gradebook goes to reports/gradebook, not beside make grade's reports.
		{"gradebook", []string{"ROSTER=" + h}, []string{"gradebook", "--step", steps.Default().Dir, "--cluster", "envtest", "--roster", h, "--upstream-ref", "HEAD", "--out", "reports/gradebook", "--jobs", ""}},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			got := makeWithStandIn(t, marker, c.target, c.vars...)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("make %s passed gw10\n%q\nwant\n%q", c.target, got, c.want)
			}
			// The same values from make's environment instead of its command
			// line (make bench takes STEP only from the command line: one
			// exported for make check must not turn the bench from the solution).
			want := c.want
			if c.target == "bench" && strings.HasPrefix(c.vars[0], "STEP=") {
				want = append([]string{"bench", "--step", steps.Default().SolutionDir}, c.want[3:]...)
			}
			got = makeWithStandInEnv(t, marker, c.target, c.vars)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("make %s with the inputs in its environment passed gw10\n%q\nwant\n%q", c.target, got, want)
			}
		})
	}
}

// TestMakeBenchHonoursAStepOnTheCommandLine: making STEP data (an override)
// must not hide that the learner named it: `make bench STEP=step01` benches
// step01, and without STEP the solution.
func TestMakeBenchHonoursAStepOnTheCommandLine(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	st := steps.Default()
	for _, c := range []struct {
		vars []string
		want string
	}{{[]string{"STEP=" + st.Dir}, st.Dir}, {nil, st.SolutionDir}} {
		got := makeWithStandIn(t, marker, "bench", c.vars...)
		if len(got) < 3 || got[1] != "--step" || got[2] != c.want {
			t.Errorf("make bench %v runs gw10 %q, want --step %s", c.vars, got, c.want)
		}
	}
}

// makeState is what make itself exports to the commands it runs: an
// enclosing make's flags and depth.
var makeState = []string{"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"}

// cleanMakeEnv drops what an enclosing make (make test runs these tests)
// exports — its own state and the Makefile's inputs, read from its export
// lines (BENCH_STEP among them) — so each case sees only the inputs it gives.
func cleanMakeEnv(t *testing.T, env []string) []string {
	t.Helper()
	exported, err := makefileExports(readMakefile(t))
	if err != nil {
		t.Fatal(err)
	}
	drop := map[string]bool{}
	for _, k := range append(exported, makeState...) {
		drop[k] = true
	}
	var out []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	return out
}

// workbookMakefile is the path of the repository's Makefile.
func workbookMakefile() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "Makefile")
}

func readMakefile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(workbookMakefile())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// makefileLines are a makefile's logical lines: backslash-newline joins a
// line to the next (GNU make turns it into one space), and a recipe line
// (one that starts with a tab) is left out — an `export` there is the
// shell's, not make's.
func makefileLines(text string) []string {
	var lines []string
	var cur strings.Builder
	for _, l := range strings.Split(text, "\n") {
		cont := strings.HasSuffix(l, "\\")
		cur.WriteString(strings.TrimSuffix(l, "\\"))
		if cont {
			cur.WriteByte(' ')
			continue
		}
		lines = append(lines, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	var directives []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "\t") {
			directives = append(directives, l)
		}
	}
	return directives
}

// makefileExports is every variable a makefile's `export` directives name:
// `export A B C`, or `export A := value` (and =, ?=, +=, ::=), which exports
// the one variable it sets. A bare `export` (everything) is refused: the
// inputs could not be listed then.
func makefileExports(text string) ([]string, error) {
	var names []string
	for _, l := range makefileLines(text) {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != "export" {
			continue
		}
		rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "export"))
		if rest == "" {
			return nil, fmt.Errorf("a bare `export` exports every variable: list them")
		}
		if i := strings.IndexAny(rest, ":?+="); i >= 0 {
			rest = rest[:i]
		}
		for _, n := range strings.Fields(rest) {
			if strings.ContainsAny(n, "$()") {
				return nil, fmt.Errorf("`%s`: an export of a computed name cannot be read", strings.TrimSpace(l))
			}
			names = append(names, n)
		}
	}
	return names, nil
}

// TestMakefileExportsAreParsed: the parser that feeds cleanMakeEnv reads
// every form of the directive and nothing else.
func TestMakefileExportsAreParsed(t *testing.T) {
	mk := "A ?= 1\n" +
		"export A B\n" +
		"export C := $(value C) # a comment\n" +
		"export D ?= x\n" +
		"export E \\\n  F\n" +
		"# export COMMENTED\n" +
		"target:\n\texport SHELLVAR=1; echo\n" +
		"unexport G\n" +
		"exported := no\n"
	got, err := makefileExports(mk)
	want := []string{"A", "B", "C", "D", "E", "F"}
	if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("makefileExports = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"export\n", "export $(INPUTS)\n"} {
		if got, err := makefileExports(bad); err == nil {
			t.Errorf("makefileExports(%q) = %q, want an error", bad, got)
		}
	}
}

// TestEveryMakefileInputIsExported: each input the Makefile turns into data
// (`override X := $(value X)`) reaches its recipes only through the
// environment ("$$X"), so it must be exported — and, being exported, it is
// one cleanMakeEnv drops: a new input cannot be missed by either.
func TestEveryMakefileInputIsExported(t *testing.T) {
	mk := readMakefile(t)
	exported, err := makefileExports(mk)
	if err != nil {
		t.Fatal(err)
	}
	isExported := map[string]bool{}
	for _, n := range exported {
		isExported[n] = true
	}
	input := regexp.MustCompile(`^override\s+([A-Za-z_][A-Za-z0-9_]*)\s*:=\s*\$\(value\s+([A-Za-z_][A-Za-z0-9_]*)\)`)
	var inputs []string
	for _, l := range makefileLines(mk) {
		if m := input.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			inputs = append(inputs, m[1])
			if !isExported[m[1]] {
				t.Errorf("the Makefile makes %s data but does not export it: its recipes would see it empty, and cleanMakeEnv would not drop it", m[1])
			}
		}
	}
	if len(inputs) < 10 || !isExported["BENCH_STEP"] {
		t.Errorf("read %d inputs %q and exports %q from %s: the parse missed the Makefile's lines", len(inputs), inputs, exported, workbookMakefile())
	}
	env := cleanMakeEnv(t, []string{"STEP=x", "BENCH_STEP=y", "MAKEFLAGS=-k", "HOME=/h"})
	if strings.Join(env, " ") != "HOME=/h" {
		t.Errorf("cleanMakeEnv kept %q, want only HOME", env)
	}
}
