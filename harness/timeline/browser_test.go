package timeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"golang.org/x/tools/txtar"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/runner"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/testenv"
)

// root is the workbook root, seen from harness/timeline.
var root, _ = filepath.Abs(filepath.Join("..", ".."))

// TestTimelineOfARealRunInChromium runs two checks for real on a polling
// controller (crd-schema passes, self-heal fails), writes their timeline, and
// opens it in chromium: the rendered page has the four lanes, the failed
// check and its failed expectation marked, and its script ran.
func TestTimelineOfARealRunInChromium(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	chromium := testenv.Chromium(t)
	rep := realRun(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "timeline.html")
	if err := Write(page, rep); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	assertOffline(t, string(html))

	dom := testenv.RunChromium(t, chromium, dir, "--window-size=1400,1000", "--dump-dom", "file://"+page)
	for _, want := range []string{
		`data-timeline="ready"`, // the script ran to its end
		`data-lane="harness"`, `data-lane="API server"`, `data-lane="controller"`, `data-lane="proxy"`,
		`data-check="crd-schema" data-status="pass"`, `data-check="self-heal" data-status="fail"`,
		`data-expectation="failed"`, "<svg",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %s", want)
		}
	}
	shot := filepath.Join(dir, "timeline.png")
	testenv.RunChromium(t, chromium, dir, "--window-size=1400,1000", "--screenshot="+shot, "file://"+page)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("no screenshot of the page, or an empty one: %v", err)
	}
	if out := os.Getenv("GW10_TIMELINE_SCREENSHOT"); out != "" {
		data, _ := os.ReadFile(shot)
		_ = os.WriteFile(out, data, 0o644)
	}
}

// realRun runs crd-schema and self-heal on a copy of the solution with the
// owns-requeue mutant applied (a polling controller: crd-schema passes,
// self-heal fails). A run regenerates files in its module, so a copy.
func realRun(t *testing.T) *report.Report {
	t.Helper()
	ctrllog.SetLogger(logr.Discard())
	st := steps.Default()
	stepDir := filepath.Join(t.TempDir(), st.Dir)
	if out, err := exec.Command("cp", "-R", filepath.Join(root, st.SolutionDir), stepDir).CombinedOutput(); err != nil {
		t.Fatalf("copying %s: %v\n%s", st.SolutionDir, err, out)
	}
	_ = os.RemoveAll(filepath.Join(stepDir, "bin"))
	applyMutant(t, filepath.Join(root, "harness", "testdata", st.Name, "mutants", "owns-requeue.txtar"), stepDir)
	work := filepath.Join(filepath.Dir(stepDir), "go.work")
	body := fmt.Sprintf("go 1.26.0\n\nuse (\n\t%s\n\t%s\n)\n", filepath.Join(root, "harness"), stepDir)
	if err := os.WriteFile(work, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	selected, err := checks.Select(st.Checks, []string{"crd-schema", "self-heal"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep, err := runner.Run(context.Background(), runner.Options{
		Root: root, Step: st, StepDir: stepDir, Label: st.Dir, Checks: selected, Seeds: []int64{1},
		Out: &out, GoEnv: []string{"GOWORK=" + work},
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if len(rep.Checks) != 2 || rep.Checks[0].Status != report.Pass || rep.Checks[1].Status != report.Fail {
		rep.Terminal(&out)
		t.Fatalf("want crd-schema passing and self-heal failing on the polling mutant:\n%s", out.String())
	}
	return rep
}

// applyMutant makes the FILE:old to FILE:new replacements of a mutant
// (harness/testdata/<step>/mutants) in dir.
func applyMutant(t *testing.T, mutant, dir string) {
	t.Helper()
	ar, err := txtar.ParseFile(mutant)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(ar.Files); i += 2 {
		path := filepath.Join(dir, strings.TrimSuffix(ar.Files[i].Name, ":old"))
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		old, repl := string(ar.Files[i].Data), string(ar.Files[i+1].Data)
		if !strings.Contains(string(src), old) {
			t.Fatalf("%s: %s does not hold the text the mutant replaces", mutant, path)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(src), old, repl, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
