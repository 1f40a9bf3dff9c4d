package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/10xdev/gw10/harness/runner"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// root is the workbook root, seen from harness/bench.
var root, _ = filepath.Abs(filepath.Join("..", ".."))

// TestSmallBenchOfTheSolution runs the real thing (envtest, the solution's
// controller as a process, the proxy stand-in) with N=20 and checks its
// outputs: the JSON against the schema in docs/bench.md, the table, the
// charts. It asserts no timing: only that every figure was measured.
func TestSmallBenchOfTheSolution(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	ctrllog.SetLogger(logr.Discard())
	st := steps.Default()
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{
		Runner: runner.Options{Root: root, Step: st, StepDir: filepath.Join(root, st.SolutionDir), Label: st.SolutionDir},
		Routes: []int{20}, LatencyRoutes: 5, Workers: 4, Progress: &progress,
	})
	if err != nil {
		t.Fatalf("bench: %v\nprogress:\n%s", err, progress.String())
	}
	if len(res.Runs) != 1 {
		t.Fatalf("want one run, got %d", len(res.Runs))
	}
	run := res.Runs[0]
	for what, ok := range map[string]bool{
		"the limit":          run.Limit.PerSecond > 0,
		"the cold start":     run.Cold.Measured && run.Cold.Programmed == 20,
		"the restart":        run.Restart.Measured,
		"the self-heal":      run.SelfHeal.Measured && len(run.SelfHeal.Samples) == 5,
		"the spec change":    run.SpecChange.Measured && len(run.SpecChange.Samples) == 5,
		"the controller CPU": run.Cold.Cost.CPUSeconds > 0 && run.Cold.Cost.PeakRSS > 0,
		"the API requests":   run.Cold.Cost.APIRequests > 0,
	} {
		if !ok {
			t.Errorf("%s was not measured: %+v", what, run)
		}
	}
	if run.Restart.StatusWrites != 0 {
		t.Errorf("the solution wrote %v statuses after a converged restart; want none", run.Restart.StatusWrites)
	}
	if !strings.Contains(progress.String(), "N=20 cold start") {
		t.Errorf("no progress line for the cold start:\n%s", progress.String())
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "bench.json")
	if err := res.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	validateAgainstDoc(t, path)
	charts, err := res.WriteCharts(dir)
	if err != nil || len(charts) != 2 {
		t.Fatalf("charts: %v, %v", charts, err)
	}
	for _, c := range charts {
		if data, err := os.ReadFile(c); err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG: %v", c, err)
		}
	}
	var table bytes.Buffer
	res.Terminal(&table)
	for _, want := range []string{"cold: × the limit", "self-heal p50/p95/p99/max", "restart: status writes"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
	}
}

// TestHarnessFiguresFromACheckReport reads a check report's wall times.
func TestHarnessFiguresFromACheckReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "check.json")
	report := `{"step":"solutions/step07","durationSeconds":31.5,"stages":[{"name":"build","status":"pass","durationSeconds":4.2}],
	"checks":[{"id":"self-heal","status":"pass","durationSeconds":2.5}]}`
	if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := ReadHarnessFigures(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.Seconds != 31.5 || len(h.Stages) != 1 || h.Stages[0].Seconds != 4.2 || len(h.Checks) != 1 || h.Checks[0].Name != "self-heal" {
		t.Fatalf("figures %+v", h)
	}
	res := &Result{Schema: SchemaVersion, Harness: h, LoadBefore: []float64{}, LoadAfter: []float64{},
		ControllerArgs: []string{}, Notes: []string{}, Runs: []Point{}}
	out := filepath.Join(t.TempDir(), "bench.json")
	if err := res.WriteJSON(out); err != nil {
		t.Fatal(err)
	}
	validateAgainstDoc(t, out)
}

// validateAgainstDoc checks a bench JSON file against the ```json schema
// block of docs/bench.md.
func validateAgainstDoc(t *testing.T, path string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "bench.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```json schema\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/bench.md has no ```json schema block")
	}
	var schema map[string]any
	if err := json.Unmarshal(m[1], &schema); err != nil {
		t.Fatalf("the schema in docs/bench.md is not JSON: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if errs := conforms(schema, schema, v, "$"); len(errs) > 0 {
		t.Errorf("the bench JSON does not match docs/bench.md:\n  %s", strings.Join(errs, "\n  "))
	}
}

// conforms checks the JSON Schema subset docs/bench.md uses: type,
// required, properties, additionalProperties (false or a schema), items and
// $ref into the root's definitions.
func conforms(root, schema map[string]any, v any, at string) []string {
	if ref, ok := schema["$ref"].(string); ok {
		defs, _ := root["definitions"].(map[string]any)
		if schema, ok = defs[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any); !ok {
			return []string{fmt.Sprintf("%s: unresolved %s", at, ref)}
		}
	}
	typ, _ := schema["type"].(string)
	switch x := v.(type) {
	case map[string]any:
		if typ != "object" {
			return []string{fmt.Sprintf("%s: an object where the doc says %s", at, typ)}
		}
		var errs []string
		for _, r := range asList(schema["required"]) {
			if _, ok := x[r.(string)]; !ok {
				errs = append(errs, fmt.Sprintf("%s: %q is required", at, r))
			}
		}
		props, _ := schema["properties"].(map[string]any)
		for k, val := range x {
			sub, ok := props[k].(map[string]any)
			if !ok {
				sub, ok = schema["additionalProperties"].(map[string]any)
			}
			if !ok {
				errs = append(errs, fmt.Sprintf("%s: %q is not documented", at, k))
				continue
			}
			errs = append(errs, conforms(root, sub, val, at+"."+k)...)
		}
		return errs
	case []any:
		if typ != "array" {
			return []string{fmt.Sprintf("%s: an array where the doc says %s", at, typ)}
		}
		var errs []string
		items, _ := schema["items"].(map[string]any)
		for i, item := range x {
			errs = append(errs, conforms(root, items, item, fmt.Sprintf("%s[%d]", at, i))...)
		}
		return errs
	case string:
		if typ != "string" {
			return []string{fmt.Sprintf("%s: a string where the doc says %s", at, typ)}
		}
	case bool:
		if typ != "boolean" {
			return []string{fmt.Sprintf("%s: a boolean where the doc says %s", at, typ)}
		}
	case float64:
		if typ != "number" && !(typ == "integer" && x == float64(int64(x))) {
			return []string{fmt.Sprintf("%s: %v where the doc says %s", at, x, typ)}
		}
	}
	return nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
