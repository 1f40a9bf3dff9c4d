package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/10xdev/gw10/harness/checks"
)

// probeSource is a grader-owned test that needs the step's own package (it
// names its reconciler) and says who ran it and what it was given.
const probeSource = `package gw10probe

import (
	"os"
	"testing"

	"MODULE/internal/controller"
)

func TestProbe(t *testing.T) {
	_ = controller.EdgeRouteReconciler{}
	t.Logf("uid %d, given %q", os.Getuid(), os.Getenv("GW10_PROBE_GIVEN"))
	if SHOULD_FAIL {
		t.Errorf("S-PROBE: told to fail")
	}
}
`

// TestAProbeIsCompiledBesideTheCodeAndRun: the probe builds against the
// step's package without a file written to the module, runs (as the
// sandbox's user when there is one) with the environment it is given, and
// its output and exit status come back; a probe that does not compile
// says so; each source is built once.
func TestAProbeIsCompiledBesideTheCodeAndRun(t *testing.T) {
	for _, sandboxed := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "sandboxed"}[sandboxed], func(t *testing.T) {
			r, _, _ := unitRun(t, nil, nil)
			if sandboxed {
				r.opts.Sandbox = openSandbox(t)
			}
			p := checks.Probe{File: "probe_test.go", Run: "^TestProbe$", Env: []string{"GW10_PROBE_GIVEN=yes"}}
			ctx := context.Background()
			before, _ := os.ReadDir(r.opts.StepDir)

			p.Source = strings.ReplaceAll(probeSource, "SHOULD_FAIL", "false")
			res, err := r.probe(ctx, p)
			if err != nil || !res.Compiled || !res.Exited0 || !strings.Contains(res.Output, `given "yes"`) {
				t.Fatalf("a passing probe: %+v, %v", res, err)
			}
			if sandboxed && strings.Contains(res.Output, "uid 0,") {
				t.Errorf("the sandboxed probe ran as root:\n%s", res.Output)
			}
			if after, _ := os.ReadDir(r.opts.StepDir); len(after) != len(before) {
				t.Errorf("the probe left a file in the module: %v, was %v", after, before)
			}

			p.Source = strings.ReplaceAll(probeSource, "SHOULD_FAIL", "true")
			res, err = r.probe(ctx, p)
			if err != nil || !res.Compiled || res.Exited0 || len(res.Lines("S-PROBE")) != 1 {
				t.Fatalf("a failing probe: %+v, %v", res, err)
			}

			p.Source = strings.ReplaceAll(probeSource, "SHOULD_FAIL", "undefined")
			res, err = r.probe(ctx, p)
			if err != nil || res.Compiled || !strings.Contains(res.Output, "undefined") {
				t.Fatalf("a probe that does not compile: %+v, %v", res, err)
			}

			p.Source = strings.ReplaceAll(probeSource, "SHOULD_FAIL", "false")
			if res, err = r.probe(ctx, p); err != nil || !res.Exited0 {
				t.Fatalf("the passing probe run again: %+v, %v", res, err)
			}
			if n := len(r.probeBins.bins); n != 3 {
				t.Errorf("three probe sources built %d binaries, want 3 (one per source)", n)
			}
		})
	}
}

// TestAProbeRunsNoCodeOfTheLearnersButWhatItCalls: an init() in the
// learner's package that forges the test's verdict and exits, a TestMain
// in the probe's old package directory, and a test file beside the
// controller: none of them runs in the probe. A package-level initializer
// that calls learner code is refused, naming its file and line.
func TestAProbeRunsNoCodeOfTheLearnersButWhatItCalls(t *testing.T) {
	forge := `package controller

import (
	"fmt"
	"os"
	"strings"
)

func init() {
	if strings.Contains(strings.Join(os.Args, " "), "-test.run") {
		fmt.Println("=== RUN   TestProbe\n--- PASS: TestProbe (0.00s)\nPASS\nFORGED BY INIT")
		os.Exit(0)
	}
}
`
	testMain := `package gw10probe

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	fmt.Println("--- PASS: TestProbe (0.00s)\nPASS\nFORGED BY TESTMAIN")
	os.Exit(0)
}
`
	r, _, _ := unitRun(t, nil, map[string]string{"internal/controller/zz_forge.go": forge})
	if err := os.MkdirAll(filepath.Join(r.opts.StepDir, "internal", "gw10probe"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.opts.StepDir, "internal", "gw10probe", "main_test.go"), []byte(testMain), 0o644); err != nil {
		t.Fatal(err)
	}
	p := checks.Probe{File: "probe_test.go", Run: "^TestProbe$", Source: strings.ReplaceAll(probeSource, "SHOULD_FAIL", "true")}
	res, err := r.probe(context.Background(), p)
	if err != nil || !res.Compiled {
		t.Fatalf("%+v, %v", res, err)
	}
	if strings.Contains(res.Output, "FORGED") || res.Exited0 || len(res.Lines("S-PROBE")) != 1 {
		t.Fatalf("learner code ran in the probe, or the grader's test did not:\n%s", res.Output)
	}

	refused := `package controller

import "fmt"

var banner = fmt.Sprint(forged())

func forged() string { return "--- PASS" }
`
	r, _, _ = unitRun(t, nil, map[string]string{"internal/controller/zz_forge.go": refused})
	res, err = r.probe(context.Background(), p)
	if err != nil || res.Compiled || len(res.Refused) != 1 || !strings.Contains(res.Refused[0], "internal/controller/zz_forge.go:5:") ||
		!strings.Contains(res.Refused[0], "calls forged, a function of your module") {
		t.Fatalf("an initializer calling learner code: %+v, %v", res, err)
	}
}
