package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func sample() *Report {
	r := &Report{
		Step: "step01", Cluster: "envtest", Started: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), Duration: 31.5,
		Stages: []Stage{{Name: "build", Status: Pass, Duration: 4.2}, {Name: "generate", Status: Pass, Duration: 2.1}},
		Checks: []CheckResult{
			{ID: "crd-schema", Title: "the CRD …", SeedRef: "Acceptance 1", Points: 10, Earned: 10, Status: Pass, Duration: 2},
			{ID: "self-heal", Title: "self-heals", SeedRef: "Acceptance 2", Points: 15, Status: Fail, Duration: 2.5,
				Message: "expected: Accepted=True\nobserved: no conditions", Causes: []string{"the controller never reconciled anything"},
				Hint: "watch Services", Doc: "docs/step01.md#check-self-heal", Logs: []string{"line 1", "line <2> & \"3\""}},
			{ID: "quiescent", Title: "quiet", Points: 10, Status: Skip, Message: "not run: interrupted"},
		},
		Integrity: &Integrity{Base: "abc", Gradable: true, Changed: []string{"README.md"}},
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
	ungradable := &Report{Checks: []CheckResult{{Status: Pass}}, Integrity: &Integrity{Gradable: false}}
	ungradable.Finish()
	if ungradable.Summary.OK {
		t.Fatal("a not gradable submission is OK")
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
	for _, want := range []string{"1/3 checks", "`crd-schema`", "`self-heal` | ❌ fail", "Integrity: clean", "watch Services"} {
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
	minimal := &Report{Step: "step01", Cluster: "envtest"}
	minimal.Finish()
	for name, r := range map[string]*Report{"full": sample(), "minimal": minimal} {
		path := filepath.Join(t.TempDir(), "r.json")
		if err := r.WriteJSON(path); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		if errs := validate(schema, doc, "$"); len(errs) > 0 {
			t.Errorf("%s report does not match the documented schema:\n  %s\n%s", name, strings.Join(errs, "\n  "), data)
		}
	}
}

// validate checks the subset of JSON Schema the doc uses: type, enum,
// required, properties, additionalProperties: false, items.
func validate(schema map[string]any, v any, path string) []string {
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
			errs = append(errs, validate(sub, val, path+"."+k)...)
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := schema["items"].(map[string]any); ok {
			for i, item := range arr {
				errs = append(errs, validate(items, item, fmt.Sprintf("%s[%d]", path, i))...)
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
