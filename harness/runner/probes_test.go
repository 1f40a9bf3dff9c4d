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
// names its reconciler) and says who ran it.
const probeSource = `package gw10probe

import (
	"os"
	"testing"

	"MODULE/internal/controller"
)

func TestProbe(t *testing.T) {
	_ = controller.EdgeRouteReconciler{}
	t.Logf("uid %d", os.Getuid())
	if os.Getenv("GW10_PROBE_FAIL") != "" || SHOULD_FAIL {
		t.Errorf("S-PROBE: told to fail")
	}
}
`

// TestAProbeIsCompiledBesideTheCodeAndRun: the probe builds against the
// step's package without a file written to the module, runs (as the
// sandbox's user when there is one), and its verdict and output come back;
// a probe that does not compile says so.
func TestAProbeIsCompiledBesideTheCodeAndRun(t *testing.T) {
	for _, sandboxed := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "sandboxed"}[sandboxed], func(t *testing.T) {
			r, _, _ := unitRun(t, nil, nil)
			if sandboxed {
				r.opts.Sandbox = openSandbox(t)
			}
			p := checks.Probe{Package: "internal/gw10probe", File: "probe_test.go", Run: "^TestProbe$"}
			ctx := context.Background()

			p.Source = strings.ReplaceAll(probeSource, "SHOULD_FAIL", "false")
			res, err := r.probe(ctx, p)
			if err != nil || !res.Compiled || !res.Passed || !strings.Contains(res.Output, "uid ") {
				t.Fatalf("a passing probe: %+v, %v", res, err)
			}
			if sandboxed && strings.Contains(res.Output, "uid 0\n") {
				t.Errorf("the sandboxed probe ran as root:\n%s", res.Output)
			}
			if _, err := os.Stat(filepath.Join(r.opts.StepDir, "internal", "gw10probe")); !os.IsNotExist(err) {
				t.Errorf("the probe left its package in the module: %v", err)
			}

			p.Source = strings.ReplaceAll(probeSource, "SHOULD_FAIL", "true")
			res, err = r.probe(ctx, p)
			if err != nil || !res.Compiled || res.Passed || len(res.Lines("S-PROBE")) != 1 {
				t.Fatalf("a failing probe: %+v, %v", res, err)
			}

			p.Source = strings.ReplaceAll(probeSource, "SHOULD_FAIL", "undefined")
			res, err = r.probe(ctx, p)
			if err != nil || res.Compiled || !strings.Contains(res.Output, "undefined") {
				t.Fatalf("a probe that does not compile: %+v, %v", res, err)
			}

			// A second check running a test of the first probe shares its binary.
			p.Source = strings.ReplaceAll(probeSource, "SHOULD_FAIL", "false")
			res, err = r.probe(ctx, p)
			if err != nil || !res.Compiled || !res.Passed {
				t.Fatalf("the passing probe run again: %+v, %v", res, err)
			}
			if n := len(r.probeBins.bins); n != 3 {
				t.Errorf("three probe sources built %d binaries, want 3 (one per source)", n)
			}
		})
	}
}
