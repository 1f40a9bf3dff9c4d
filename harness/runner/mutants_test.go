package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// A mutant is a defect applied to a step's solution, with the check (or
// stage) that must catch it and a cause the failure must name; a variant is
// a legitimate design applied to the solution, which must pass every check.
// Both live in testdata/<step>/{mutants,variants}/*.txtar: the comment holds
// "want: <check>", "stage: <stage>", "cause: <text>", "clauses: <IDs>"
// lines (the contract clauses the defect breaks; "-" for a failure the
// harness diagnoses that no clause states, a hang or a crash) and a sentence;
// the files come in FILE:old / FILE:new pairs, each old text occurring once.
type mutant struct {
	name      string
	wantCheck string   // the check that must fail
	wantStage string   // or the stage that must fail
	wantCause string   // a substring of the failure's causes, hint or message
	clauses   []string // the contract clauses it breaks; empty: "-"
	hasClause bool     // a clauses: line was given
	about     string   // the comment's prose: what the defect is
	edits     []edit
}

type edit struct{ file, old, new string }

func loadMutants(t *testing.T, dir string) []mutant {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var out []mutant
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		m, err := parseMutant(strings.TrimSuffix(filepath.Base(f), ".txtar"), filepath.Base(dir) == "mutants", ar)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, m)
	}
	return out
}

// parseMutant reads one mutant (isMutant) or variant: a mutant names the
// check or stage that must fail and a cause its failure must name; a
// variant names neither.
func parseMutant(name string, isMutant bool, ar *txtar.Archive) (mutant, error) {
	m := mutant{name: name}
	sc := bufio.NewScanner(bytes.NewReader(ar.Comment))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ": ")
		switch k {
		case "want":
			m.wantCheck = v
		case "stage":
			m.wantStage = v
		case "cause":
			m.wantCause = v
		case "clauses":
			m.hasClause = true
			if v = strings.TrimSpace(v); v != "-" {
				m.clauses = strings.Fields(v)
			}
		default:
			m.about = strings.TrimSpace(m.about + " " + sc.Text())
		}
	}
	switch {
	case isMutant && m.wantCheck == "" && m.wantStage == "":
		return m, errors.New("a mutant needs want: <check> or stage: <stage>")
	case isMutant && strings.TrimSpace(m.wantCause) == "":
		return m, errors.New("a mutant needs a cause: its failure must name (an empty one matches any failure)")
	case isMutant && !m.hasClause:
		return m, errors.New("a mutant needs clauses: the contract clauses its defect breaks (\"-\" for a hang or a crash no clause states)")
	case !isMutant && (m.wantCheck+m.wantStage+m.wantCause != "" || m.hasClause):
		return m, errors.New("a variant passes every check: it has no want:, stage:, cause: or clauses:")
	case len(ar.Files)%2 != 0:
		return m, errors.New("files must come in :old/:new pairs")
	}
	for i := 0; i < len(ar.Files); i += 2 {
		o, n := ar.Files[i], ar.Files[i+1]
		file := strings.TrimSuffix(o.Name, ":old")
		if !strings.HasSuffix(o.Name, ":old") || n.Name != file+":new" {
			return m, fmt.Errorf("want a FILE:old then FILE:new pair, got %s, %s", o.Name, n.Name)
		}
		m.edits = append(m.edits, edit{file: file, old: string(o.Data), new: string(n.Data)})
	}
	return m, nil
}

// TestAMutantMustNameItsCheckAndCause: a mutant without want:, or with an
// empty cause: (which any failure matches), is refused; so is a variant
// that names a check.
func TestAMutantMustNameItsCheckAndCause(t *testing.T) {
	edits := "-- a.go:old --\nx\n-- a.go:new --\ny\n"
	for _, tc := range []struct {
		mutant bool
		text   string
		ok     bool
	}{
		{true, "want: self-heal\ncause: Owns\nclauses: Q-FANOUT\nA mistake.\n" + edits, true},
		{true, "want: self-heal\ncause: Owns\nclauses: -\nA crash.\n" + edits, true},
		{true, "want: self-heal\ncause: Owns\nNo clauses.\n" + edits, false},
		{true, "cause: Owns\nclauses: Q-FANOUT\nNo check.\n" + edits, false},
		{true, "want: self-heal\ncause: \nclauses: Q-FANOUT\nAn empty cause.\n" + edits, false},
		{true, "want: self-heal\nclauses: Q-FANOUT\nNo cause.\n" + edits, false},
		{false, "A legitimate design.\n" + edits, true},
		{false, "want: self-heal\nA variant that names a check.\n" + edits, false},
		{false, "clauses: Q-FANOUT\nA variant that names a clause.\n" + edits, false},
	} {
		_, err := parseMutant("m", tc.mutant, txtar.Parse([]byte(tc.text)))
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok=%v", tc.text, err, tc.ok)
		}
	}
}

func (m mutant) apply(t *testing.T, dir string) {
	t.Helper()
	for _, e := range m.edits {
		path := filepath.Join(dir, e.file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), e.old); n != 1 {
			t.Fatalf("%s: the text to replace occurs %d times in %s (the solution changed? update it):\n%s", m.name, n, e.file, e.old)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(data), e.old, e.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEveryMutantAndVariantApplies applies each one to a copy of its
// solution, without a cluster: a stale edit fails here in seconds, not after
// the long runs.
func TestEveryMutantAndVariantApplies(t *testing.T) {
	for _, st := range steps.All() {
		for _, kind := range []string{"mutants", "variants"} {
			for _, m := range loadMutants(t, filepath.Join("..", "testdata", st.Name, kind)) {
				t.Run(st.Name+"/"+kind+"/"+m.name, func(t *testing.T) {
					m.apply(t, copyModule(t, filepath.Join(root, st.SolutionDir)))
				})
			}
		}
	}
}

// passingTimeouts are for runs that must pass: the learner-facing Settle
// (2.5 s of controller idleness ends a wait) is made generous, so that a CI
// machine busy compiling other packages cannot end a wait before a watch
// event arrives.
func passingTimeouts() checks.Timeouts {
	t := checks.DefaultTimeouts()
	t.Settle = 10 * time.Second
	return t
}

// mutantTimeouts shorten the waits: a mutant is expected to fail, and the
// solution shows the controller reacts in milliseconds. SelfHeal and Quiet
// keep their values: they are what the checks measure.
func mutantTimeouts() checks.Timeouts {
	t := checks.DefaultTimeouts()
	t.Converge, t.Retry = 10*time.Second, 15*time.Second
	return t
}

// killTable collects one line per mutant and variant; TestMain writes it to
// .gw10/kill-table.txt, which make test prints.
var killTable = struct {
	sync.Mutex
	rows []string
}{}

func recordKill(row string) {
	killTable.Lock()
	killTable.rows = append(killTable.rows, row)
	killTable.Unlock()
}

func writeKillTable() {
	killTable.Lock()
	defer killTable.Unlock()
	if len(killTable.rows) == 0 {
		return
	}
	sort.Strings(killTable.rows)
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %-34s %-9s %6s %7s %-20s %-28s %s\n", "step", "mutant or variant", "result", "time", "verdict", "check", "its clauses", "cause seen")
	for _, r := range killTable.rows {
		b.WriteString(r + "\n")
	}
	dir := filepath.Join(root, ".gw10")
	if os.MkdirAll(dir, 0o755) == nil {
		_ = os.WriteFile(filepath.Join(dir, "kill-table.txt"), []byte(b.String()), 0o644)
	}
}

func TestEveryMutantFailsItsCheckWithItsCause(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	t.Parallel() // beside the package's other long runs (planes)
	for _, st := range steps.All() {
		for _, m := range loadMutants(t, filepath.Join("..", "testdata", st.Name, "mutants")) {
			if !inShard(t, st.Name+"/mutants/"+m.name) {
				continue
			}
			t.Run(st.Name+"/"+m.name, func(t *testing.T) {
				t.Parallel() // each run holds a control plane of its own (planes)
				dir := copyModule(t, filepath.Join(root, st.SolutionDir))
				m.apply(t, dir)
				var ids []string
				if m.wantCheck != "" {
					ids = []string{m.wantCheck}
				}
				rep, out := runStep(t, st, dir, "mutant-"+m.name, ids, mutantTimeouts(), generatedAsIs(t, st, dir))
				if m.wantStage != "build" {
					doesNotCompile(t, rep, st.Name, m.name, out)
				}
				took, verdict := rep.Duration, verdictTime(rep, m)
				clauses := "-" // a hang or a crash that no clause states
				if len(m.clauses) > 0 {
					clauses = strings.Join(m.clauses, ",")
				}
				row := func(result, text string) {
					recordKill(fmt.Sprintf("%-8s %-34s %-9s %6s %7s %-20s %-28s %s", st.Name, m.name, result, seconds(took), verdict, m.wantCheck+m.wantStage, clauses, firstLineOf(text, m.wantCause)))
				}
				if rep.Summary.OK {
					row("SURVIVED", "")
					t.Fatalf("mutant %s passed: the harness does not catch it\n%s", m.name, out)
				}
				text := ""
				if m.wantStage != "" {
					for _, stage := range rep.Stages {
						if stage.Name == m.wantStage && stage.Status == report.Fail {
							text = stage.Detail
						}
					}
					if text == "" {
						row("WRONG", "")
						t.Fatalf("mutant %s: stage %s did not fail\n%s", m.name, m.wantStage, out)
					}
				} else {
					res := findResult(rep, m.wantCheck)
					if res == nil || res.Status != report.Fail {
						row("WRONG", "")
						t.Fatalf("mutant %s: check %s did not fail\n%s", m.name, m.wantCheck, out)
					}
					text = strings.Join(append(append([]string{}, res.Causes...), res.Hint, res.Message), "\n")
				}
				if !strings.Contains(text, m.wantCause) {
					row("NO CAUSE", text)
					t.Fatalf("mutant %s: the failure does not say %q:\n%s", m.name, m.wantCause, out)
				}
				row("killed", text)
				t.Logf("mutant %s caught:\n%s", m.name, out)
			})
		}
	}
}

// TestEveryClauseIsBrokenByAMutant: every clause of a step's contract is
// broken by at least one mutant, whose check (the one that must fail)
// declares that clause: each clause is shown to be able to fail, by the
// check that claims to prove it.
func TestEveryClauseIsBrokenByAMutant(t *testing.T) {
	for _, st := range steps.All() {
		broken := map[string][]string{}
		for _, m := range loadMutants(t, filepath.Join("..", "testdata", st.Name, "mutants")) {
			chk, isCheck := checks.Find(st.Checks, m.wantCheck)
			for _, id := range m.clauses {
				if !slices.ContainsFunc(st.Contract, func(c step.Clause) bool { return c.ID == id }) {
					t.Errorf("%s/%s: clauses names %s, which is no clause of the contract", st.Name, m.name, id)
					continue
				}
				if isCheck && !slices.Contains(chk.Clauses, id) {
					t.Errorf("%s/%s breaks %s, but its check %s does not declare that clause (it declares %v)", st.Name, m.name, id, chk.ID, chk.Clauses)
				}
				broken[id] = append(broken[id], m.name)
			}
		}
		for _, c := range st.Contract {
			if len(broken[c.ID]) == 0 {
				t.Errorf("%s: no mutant breaks clause %s (%s): nothing shows its check can fail", st.Name, c.ID, c.Rule)
			}
		}
	}
}

// TestEveryVariantPasses: the legitimate designs the contract allows pass
// every check: the checks are fair.
func TestEveryVariantPasses(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	t.Parallel() // beside the package's other long runs (planes)
	for _, st := range steps.All() {
		for _, v := range loadMutants(t, filepath.Join("..", "testdata", st.Name, "variants")) {
			if !inShard(t, st.Name+"/variants/"+v.name) {
				continue
			}
			t.Run(st.Name+"/"+v.name, func(t *testing.T) {
				t.Parallel() // each run holds a control plane of its own (planes)
				dir := copyModule(t, filepath.Join(root, st.SolutionDir))
				v.apply(t, dir)
				// Every check, without the module's unit tests: those are the
				// solution's (run on it by make test), not the harness's
				// subject, and a variant's patch need not keep them.
				rep, out := runStep(t, st, dir, "variant-"+v.name, nil, passingTimeouts(),
					func(o *Options) { o.ChecksOnly = true }, generatedAsIs(t, st, dir))
				doesNotCompile(t, rep, st.Name, v.name, out)
				took := seconds(rep.Duration)
				if !rep.Summary.OK || rep.Summary.Passed != len(st.Checks) {
					recordKill(fmt.Sprintf("%-8s %-34s %-9s %6s %7s %-20s %-28s %s", st.Name, v.name, "FAILED", took, "-", "(variant)", "-", v.about))
					t.Fatalf("variant %s (%s) does not pass every check:\n%s", v.name, v.about, out)
				}
				recordKill(fmt.Sprintf("%-8s %-34s %-9s %6s %7s %-20s %-28s %s", st.Name, v.name, "passes", took, "-", "(variant)", "-", v.about))
			})
		}
	}
}

// generatedAsIs skips the generate stage of a patched copy of st's
// solution when the patch left every input and output of controller-gen as
// the solution has them (generatorInputs: the markers, api/, the CRDs and
// the role) and the solution's own generated files are controller-gen's
// (solutionGenerated): its run would change nothing, and it is about a
// third of a mutant's CPU. A patch that touches any of them runs the stage.
func generatedAsIs(t *testing.T, st step.Step, dir string) func(*Options) {
	t.Helper()
	want := solutionGenerated(t, st)
	got, err := generatorInputs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return func(o *Options) {
		if got == want {
			o.Generated = "the patch changes no marker, api/ or generated file of the solution, whose generated files are controller-gen's"
		}
	}
}

// solutionsGenerated holds, per step, the generator's inputs in its
// solution once controller-gen has been shown to change none of them.
var solutionsGenerated = struct {
	sync.Mutex
	inputs map[string]string
}{inputs: map[string]string{}}

// solutionGenerated runs controller-gen once per test process on a copy of
// st's solution and fails t when that changed a generated file (the
// solution's are stale: a patch that skips the stage would run against
// them); else it returns the generator's inputs there.
func solutionGenerated(t *testing.T, st step.Step) string {
	t.Helper()
	solutionsGenerated.Lock()
	defer solutionsGenerated.Unlock()
	if in, ok := solutionsGenerated.inputs[st.Name]; ok {
		return in
	}
	dir := copyModule(t, filepath.Join(root, st.SolutionDir))
	before, err := generatorInputs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := generate(context.Background(), Options{Root: root, StepDir: dir, GoEnv: workspaceFor(t, dir)}); err != nil {
		t.Fatalf("controller-gen on a copy of %s: %v", st.SolutionDir, err)
	}
	after, err := generatorInputs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("%s's generated files are not what controller-gen makes of its markers: run `make manifests generate` there and commit them", st.SolutionDir)
	}
	solutionsGenerated.inputs[st.Name] = before
	return before
}

// doesNotCompile fails t, saying why, when the patch's build stage failed:
// a patch that no longer compiles after the solution changed (an import it
// removes that new code uses) fails for the wrong reason, and its own
// failure would name a check, not the patch.
func doesNotCompile(t *testing.T, rep *report.Report, stepName, name, out string) {
	t.Helper()
	for _, stage := range rep.Stages {
		if stage.Name == "build" && stage.Status == report.Fail {
			recordKill(fmt.Sprintf("%-8s %-34s %-9s", stepName, name, "NO BUILD"))
			t.Fatalf("%s does not compile (the solution changed? update its patch):\n%s", name, out)
		}
	}
}

// verdictTime is a kill table's verdict column: how long the check (or
// stage) that must catch the mutant took to say so, beyond the stages
// before it.
func verdictTime(rep *report.Report, m mutant) string {
	for _, st := range rep.Stages {
		if m.wantStage != "" && st.Name == m.wantStage {
			return seconds(st.Duration)
		}
	}
	if res := findResult(rep, m.wantCheck); res != nil && m.wantCheck != "" {
		return seconds(res.Duration)
	}
	return "-"
}

// seconds is a kill table's time column: the run's own duration (build,
// stages and checks; not the wait for a control plane).
func seconds(d report.Seconds) string {
	return fmt.Sprintf("%.0fs", float64(d))
}

func findResult(rep *report.Report, id string) *report.CheckResult {
	for i := range rep.Checks {
		if rep.Checks[i].ID == id {
			return &rep.Checks[i]
		}
	}
	return nil
}

// firstLineOf returns the line of text that holds want, shortened.
func firstLineOf(text, want string) string {
	for _, l := range strings.Split(text, "\n") {
		if want != "" && strings.Contains(l, want) {
			l = strings.TrimSpace(l)
			if len(l) > 110 {
				l = l[:109] + "…"
			}
			return l
		}
	}
	return ""
}

// TestTheInstructorsGuideListsEveryMutant keeps docs/instructors.md's table
// of common mistakes true: one row per step01 mutant, naming the check or
// stage that must catch it and the words of its cause.
func TestTheInstructorsGuideListsEveryMutant(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join(root, "docs", "instructors.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The table is the section "## Common mistakes…"'s; other tables of
	// four columns (the cohort's timings, the evidence of each check) are not.
	_, section, ok := strings.Cut(string(guide), "\n## Common mistakes")
	if !ok {
		t.Fatal(`docs/instructors.md has no section "## Common mistakes"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		rows[name] = cells
	}
	// docs/instructors.md is the default step's guide (the course's first).
	st := steps.Default()
	mutants := loadMutants(t, filepath.Join("..", "testdata", st.Name, "mutants"))
	for _, m := range mutants {
		row, ok := rows[m.name]
		if !ok {
			t.Errorf("docs/instructors.md has no row for mutant %s", m.name)
			continue
		}
		delete(rows, m.name)
		want := "`" + m.wantCheck + "`"
		if m.wantStage != "" {
			want = "stage `" + m.wantStage + "`"
		}
		if got := strings.TrimSpace(row[2]); got != want {
			t.Errorf("docs/instructors.md says %s is caught by %s; its mutant wants %s", m.name, got, want)
		}
		if !strings.Contains(row[3], m.wantCause) {
			t.Errorf("docs/instructors.md's row for %s does not show its cause %q", m.name, m.wantCause)
		}
	}
	for name := range rows {
		t.Errorf("docs/instructors.md names mutant %s, which harness/testdata/%s/mutants does not hold", name, st.Name)
	}
}
