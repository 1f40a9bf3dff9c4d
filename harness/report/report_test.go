package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func sample() *Report {
	r := &Report{
		Dir: "step07", Cluster: "envtest", Started: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), Duration: 31.5,
		Stages: []Stage{{Name: "build", Status: Pass, Duration: 4.2}, {Name: "generate", Status: Pass, Duration: 2.1}},
		Checks: []CheckResult{
			{ID: "crd-schema", Title: "the CRD …", SeedRef: "Acceptance 1", Points: 10, Earned: 10, Status: Pass, Duration: 2},
			{ID: "self-heal", Title: "self-heals", SeedRef: "Acceptance 2", Clauses: []string{"S-ACKED", "Q-FANOUT"}, Points: 15, Status: Fail, Duration: 2.5,
				Message: "expected: Accepted=True\nobserved: no conditions", Causes: []string{"the controller never reconciled anything"},
				Hint: "watch Services", Doc: "docs/step07.md#check-self-heal", Logs: []string{"line 1", "line <2> & \"3\""}},
			{ID: "quiescent", Title: "quiet", Points: 10, Status: Skip, Message: "not run: interrupted"},
		},
		Grading: &Grading{
			Official: true, Gradable: true,
			Upstream:   Revision{Repository: "/srv/gw10", Ref: "HEAD", Commit: "0123456789abcdef0123456789abcdef01234567"},
			Submission: Revision{Repository: "https://example.com/learner/gw10.git", Ref: "main", Commit: "fedcba9876543210fedcba9876543210fedcba98"},
			Ignored:    []string{"README.md"}, GeneratedDrift: []string{"step07/config/rbac/role.yaml"},
		},
	}
	r.Finish()
	return r
}

func TestFinishCounts(t *testing.T) {
	s := sample().Summary
	if s.Passed != 1 || s.Failed != 1 || s.Skipped != 1 || s.Total != 3 || s.Points != 10 || s.TotalPoints != 35 || s.OK {
		t.Fatalf("summary %+v", s)
	}
	allPass := &Report{Checks: []CheckResult{{Status: Pass, Points: 5, Earned: 5}}}
	allPass.Finish()
	if !allPass.Summary.OK {
		t.Fatal("a run whose checks all pass is not OK")
	}
	none := &Report{}
	none.Finish()
	if none.Summary.OK {
		t.Fatal("a run with no check passing is OK")
	}
	stageFail := &Report{Stages: []Stage{{Name: "build", Status: Fail}}, Checks: []CheckResult{{Status: Pass}}}
	stageFail.Finish()
	if stageFail.Summary.OK {
		t.Fatal("a run with a failed stage is OK")
	}
	ungradable := &Report{Checks: []CheckResult{{Status: Pass, Points: 5, Earned: 5}}, Grading: &Grading{Gradable: false}}
	ungradable.Finish()
	if ungradable.Summary.OK || ungradable.Summary.Gradable || ungradable.Summary.Points != 0 {
		t.Fatalf("a not gradable submission: %+v", ungradable.Summary)
	}
}

func TestJUnitParses(t *testing.T) {
	var buf bytes.Buffer
	if err := sample().JUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var suite struct {
		XMLName  xml.Name `xml:"testsuite"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Skipped  int      `xml:"skipped,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Text string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct{} `xml:"skipped"`
			Out     string    `xml:"system-out"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &suite); err != nil {
		t.Fatalf("JUnit output does not parse: %v\n%s", err, buf.String())
	}
	if suite.Tests != 3 || suite.Failures != 1 || suite.Skipped != 1 {
		t.Fatalf("counts: %+v", suite)
	}
	sh := suite.Cases[1]
	if sh.Name != "self-heal" || sh.Failure == nil || !strings.Contains(sh.Failure.Text, "never reconciled") || !strings.Contains(sh.Out, `line <2> & "3"`) {
		t.Fatalf("self-heal testcase: %+v", sh)
	}
}

func TestMarkdownNamesEveryCheck(t *testing.T) {
	var buf bytes.Buffer
	if err := sample().Markdown(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1/3 checks pass, 10/35 points", "`crd-schema`", "`self-heal` | ❌ fail", "watch Services",
		"Graded: `step07/` of `https://example.com/learner/gw10.git` at `main` (`fedcba987654`)",
		"Ignored, not trusted", "`README.md`", "`step07/config/rbac/role.yaml`"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestJSONMatchesTheDocumentedSchema validates reports against the JSON
// Schema block of docs/harness.md.
func TestJSONMatchesTheDocumentedSchema(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "harness.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```json schema\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/harness.md has no ```json schema block")
	}
	var schema map[string]any
	if err := json.Unmarshal(m[1], &schema); err != nil {
		t.Fatalf("the schema in docs/harness.md is not JSON: %v", err)
	}
	minimal := &Report{Dir: "step07", Cluster: "envtest"}
	minimal.Finish()
	interrupted := run(func(r *Report) { r.Interrupted = true; skip(&r.Checks[2], "not run: interrupted") })
	for name, r := range map[string]*Report{"full": sample(), "minimal": minimal, "not gradable": notGradable(), "interrupted": interrupted} {
		path := filepath.Join(t.TempDir(), "r.json")
		if err := r.WriteJSON(path); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		if errs := validate(schema, schema, doc, "$"); len(errs) > 0 {
			t.Errorf("%s report does not match the documented schema:\n  %s\n%s", name, strings.Join(errs, "\n  "), data)
		}
	}
}

// validate checks the subset of JSON Schema the doc uses: type, enum,
// required, properties, additionalProperties: false, items, and $ref to
// "#/definitions/<name>" of the root schema.
func validate(root, schema map[string]any, v any, path string) []string {
	if ref, ok := schema["$ref"].(string); ok {
		defs, _ := root["definitions"].(map[string]any)
		def, ok := defs[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: unresolved $ref %q", path, ref)}
		}
		schema = def
	}
	var errs []string
	if typ, ok := schema["type"].(string); ok && !hasType(v, typ) {
		return []string{fmt.Sprintf("%s: want %s, got %T", path, typ, v)}
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				found = true
			}
		}
		if !found {
			errs = append(errs, fmt.Sprintf("%s: %v not in %v", path, v, enum))
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := schema["properties"].(map[string]any)
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if _, ok := obj[r.(string)]; !ok {
					errs = append(errs, fmt.Sprintf("%s: missing required %q", path, r))
				}
			}
		}
		for k, val := range obj {
			sub, ok := props[k].(map[string]any)
			if !ok {
				if schema["additionalProperties"] == false {
					errs = append(errs, fmt.Sprintf("%s: undocumented property %q", path, k))
				}
				continue
			}
			errs = append(errs, validate(root, sub, val, path+"."+k)...)
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := schema["items"].(map[string]any); ok {
			for i, item := range arr {
				errs = append(errs, validate(root, items, item, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return errs
}

func hasType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	}
	return false
}

// notGradable is a grading that refused the submission: no check ran.
func notGradable() *Report {
	r := &Report{
		Dir: "step07", Cluster: "envtest", Started: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC),
		Checks: []CheckResult{
			{ID: "crd-schema", Title: "the CRD …", Points: 60, Status: Skip, Message: "not run: the submission is not gradable"},
			{ID: "self-heal", Title: "self-heals", Points: 40, Status: Skip, Message: "not run: the submission is not gradable"},
		},
		Grading: &Grading{Official: true, Reason: "the submission has no step07/go.mod",
			Upstream:   Revision{Repository: "/srv/gw10", Ref: "HEAD", Commit: "0123456789abcdef0123456789abcdef01234567"},
			Submission: Revision{Repository: "/tmp/fork", Ref: "HEAD", Commit: "fedcba9876543210fedcba9876543210fedcba98"},
		},
	}
	r.Finish()
	return r
}

// TestNotGradableIsOneVerdictEverywhere: the terminal, Markdown, JSON and
// JUnit all say not gradable, no points, and none of them claims success.
func TestNotGradableIsOneVerdictEverywhere(t *testing.T) {
	r := notGradable()
	const why = "not gradable: the submission has no step07/go.mod"

	var term bytes.Buffer
	r.Terminal(&term)
	if !strings.Contains(term.String(), "Grade: none, "+why) || strings.Contains(term.String(), "/100 points") ||
		strings.Contains(term.String(), "Fix the first failure") {
		t.Errorf("terminal:\n%s", term.String())
	}

	var md bytes.Buffer
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## gw10 step07 — ❌ "+why) || strings.Contains(md.String(), "/100 points") {
		t.Errorf("markdown:\n%s", md.String())
	}

	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary Summary `json:"summary"`
		Grading Grading `json:"grading"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Summary.Gradable || doc.Summary.OK || doc.Summary.Points != 0 || doc.Grading.Gradable ||
		doc.Grading.Submission.Commit == "" || doc.Grading.Upstream.Commit == "" {
		t.Errorf("json: %s", js.String())
	}

	var ju bytes.Buffer
	if err := r.JUnit(&ju); err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Failures   int `xml:"failures,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(ju.Bytes(), &suite); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{}
	for _, p := range suite.Properties {
		props[p.Name] = p.Value
	}
	if suite.Failures != 1 || suite.Cases[0].Name != "gradable" || suite.Cases[0].Failure == nil ||
		props["verdict"] != why || props["gradable"] != "false" || props["points"] != "0" ||
		props["submission.commit"] != doc.Grading.Submission.Commit || props["upstream.commit"] != doc.Grading.Upstream.Commit {
		t.Errorf("junit: %s", ju.String())
	}
}

// TestFeedbackIsNotCalledAGrade: a local grading says it is not official.
func TestFeedbackIsNotCalledAGrade(t *testing.T) {
	r := sample()
	r.Grading.Official = false
	r.Finish()
	var term, md bytes.Buffer
	r.Terminal(&term)
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"terminal": term.String(), "markdown": md.String()} {
		if !strings.Contains(out, "not an official grade") || strings.Contains(out, "Official:") {
			t.Errorf("%s:\n%s", name, out)
		}
	}
}

func TestRemoveReports(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "grade.json")
	if err := os.WriteFile(stale, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RemoveReports(stale, filepath.Join(dir, "absent.xml"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("the stale report is still there: %v", err)
	}
}

// TestIgnoredFilesFoldByDirectory: a submission that removed solutions/ is
// one line in the grade, not forty paths; the JSON keeps every path.
func TestIgnoredFilesFoldByDirectory(t *testing.T) {
	paths := []string{"README.md", "docs/a.md", "docs/b.md", "solutions/step07/go.mod", "solutions/step07/main.go",
		"solutions/step07/api/v1/types.go", "solutions/step07/Makefile"}
	quote := func(s string) string { return "`" + s + "`" }
	got := strings.Join(byDirectory(paths, quote), ", ")
	if want := "`README.md`, `docs/a.md`, `docs/b.md`, `solutions/` (4 files)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	rep := sample()
	rep.Grading.Ignored = paths
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "`solutions/` (4 files)") || strings.Contains(md.String(), "solutions/step07/main.go") {
		t.Errorf("the Markdown does not fold solutions/:\n%s", md.String())
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), "solutions/step07/main.go") {
		t.Errorf("the JSON lost a path:\n%s", js)
	}
}

// TestStagesAreNotCountedAsTests: a failed build is not eleven failed
// tests; every stage shows as a property, passing ones too.
func TestStagesAreNotCountedAsTests(t *testing.T) {
	r := &Report{
		Stages: []Stage{{Name: "build", Status: Fail, Detail: "main.go:3: undefined: meta\nmore"}, {Name: "unit tests", Status: Pass}},
		Checks: []CheckResult{{ID: "crd-schema", Points: 10, Status: Skip, Message: "not run: stage build failed"}, {ID: "self-heal", Points: 15, Status: Skip}},
	}
	r.Finish()
	var buf bytes.Buffer
	if err := r.JUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Tests      int `xml:"tests,attr"`
		Failures   int `xml:"failures,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Err string `xml:"system-err"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &suite); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{}
	for _, p := range suite.Properties {
		props[p.Name] = p.Value
	}
	if suite.Tests != 2 || suite.Failures != 0 {
		t.Errorf("tests %d, failures %d: want the 2 checks, none failed (stages are not tests)", suite.Tests, suite.Failures)
	}
	if props["stage.build"] != "fail: main.go:3: undefined: meta" || props["stage.unit tests"] != "pass" {
		t.Errorf("stage properties: %v", props)
	}
	if !strings.Contains(suite.Err, "stage build failed:\nmain.go:3: undefined: meta\nmore") {
		t.Errorf("system-err: %q", suite.Err)
	}
}

// TestAFailedUnitStageIsOneVerdictEverywhere: checks that ran and passed
// beside a failed unit stage earn their points, and every rendering says
// both (it printed "❌ 2/2 … 50/50" beside "no check could pass"); a build
// that failed ran no check, and every rendering says 0.
func TestAFailedUnitStageIsOneVerdictEverywhere(t *testing.T) {
	graded := func(stages []Stage, checks []CheckResult) *Report {
		r := &Report{Dir: "step07", Cluster: "envtest", Stages: stages, Checks: checks,
			Grading: &Grading{Official: true, Gradable: true}}
		r.Finish()
		return r
	}
	unitFailed := graded([]Stage{{Name: "unit tests", Status: Fail, Detail: "--- FAIL: TestConditionsFor"}, {Name: "build", Status: Pass}},
		[]CheckResult{{ID: "a", Points: 10, Earned: 10, Status: Pass}, {ID: "b", Points: 40, Earned: 40, Status: Pass}})
	buildFailed := graded([]Stage{{Name: "unit tests", Status: Fail, Detail: "x"}, {Name: "build", Status: Fail, Detail: "y"}},
		[]CheckResult{{ID: "a", Points: 10, Status: Skip, Message: "not run: the build stage failed"}, {ID: "b", Points: 40, Status: Skip, Message: "not run: the build stage failed"}})
	for _, c := range []struct {
		name           string
		r              *Report
		points         string
		verdict, close string
	}{
		{"unit tests failed, checks passed", unitFailed, "50", "2/2 checks pass, 50/50 points, but the unit tests stage failed", "the checks ran, and earned what they show"},
		{"build failed", buildFailed, "0", "0/2 checks pass, 0/50 points, 2 not run", "so no check ran"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var term, md, ju bytes.Buffer
			c.r.Terminal(&term)
			if err := c.r.Markdown(&md); err != nil {
				t.Fatal(err)
			}
			if err := c.r.JUnit(&ju); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(term.String(), "no check could pass") || !strings.Contains(term.String(), c.verdict) || !strings.Contains(term.String(), c.close) {
				t.Errorf("terminal:\n%s", term.String())
			}
			if !strings.Contains(md.String(), "❌ "+c.verdict) {
				t.Errorf("markdown:\n%s", md.String())
			}
			if !strings.Contains(ju.String(), `name="verdict" value="`+c.verdict+`"`) || !strings.Contains(ju.String(), `name="points" value="`+c.points+`"`) {
				t.Errorf("junit:\n%s", ju.String())
			}
			if c.r.Summary.OK || strconv.Itoa(c.r.Summary.Points) != c.points {
				t.Errorf("json summary: %+v", c.r.Summary)
			}
		})
	}
}

// TestTheSandboxLineSaysWhatRan: a refused submission ran nothing, and the
// reports say so (they said its unit tests and controller ran sandboxed);
// a graded one names what ran.
func TestTheSandboxLineSaysWhatRan(t *testing.T) {
	refused := notGradable()
	refused.Grading.Sandbox = &Sandbox{Enforced: true, User: "gw10-sandbox0"}
	graded := &Report{Dir: "step07", Stages: []Stage{{Name: "unit tests", Status: Pass}, {Name: "build", Status: Pass}, {Name: "start controller", Status: Pass}},
		Grading: &Grading{Official: true, Gradable: true, Sandbox: &Sandbox{Enforced: true, User: "gw10-sandbox0"}}}
	graded.Finish()
	for _, c := range []struct {
		r         *Report
		want, not string
	}{
		{refused, "Sandbox: gw10-sandbox0 was ready; none of the submission's code ran.", "ran as"},
		{graded, "Sandbox: the unit tests and the controller ran as gw10-sandbox0, under limits", "none of"},
	} {
		var term bytes.Buffer
		c.r.Terminal(&term)
		if !strings.Contains(term.String(), c.want) || strings.Contains(term.String(), c.not) {
			t.Errorf("want %q, not %q:\n%s", c.want, c.not, term.String())
		}
	}
}
