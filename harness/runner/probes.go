package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/sandbox"
)

// probeWall bounds a probe's test binary (not its build).
const probeWall = 2 * time.Minute

// probe compiles a grader-owned test (checks.Probe) beside the step's code
// with `go test -overlay`, which adds the file to the build without writing
// it to the module, and runs the binary: in the sandbox when the run has one
// (a grade: the learner's code runs as the sandbox's user, as the unit tests
// do), else directly, as `make check` runs the unit tests.
func (r *run) probe(ctx context.Context, p checks.Probe) (checks.ProbeResult, error) {
	opts := r.opts
	gomod, err := os.ReadFile(filepath.Join(opts.StepDir, "go.mod"))
	if err != nil {
		return checks.ProbeResult{}, fmt.Errorf("reading the step's go.mod: %w", err)
	}
	module := modfile.ModulePath(gomod)
	if module == "" {
		return checks.ProbeResult{}, fmt.Errorf("%s/go.mod names no module", opts.Label)
	}
	b := r.probeBins.get(p)
	b.once.Do(func() { b.bin, b.dir, b.failed, b.err = r.buildProbe(ctx, p, module) })
	if b.err != nil {
		return checks.ProbeResult{}, b.err
	}
	if b.failed != nil {
		return *b.failed, nil
	}
	bin, dir := b.bin, b.dir
	args := []string{"-test.count=1", "-test.v", "-test.run", p.Run, "-test.timeout", probeWall.String()}
	var out string
	var exit error
	if sb := opts.Sandbox; sb != nil {
		b.install.Do(func() {
			b.test, b.installErr = sb.Install(bin, filepath.Join("bin", "probe-"+filepath.Base(dir)+".test"))
		})
		test, err := b.test, b.installErr
		if err != nil {
			return checks.ProbeResult{}, err
		}
		res, err := sb.Run(ctx, sandbox.Spec{Path: test, Args: args}, probeWall+30*time.Second, "the probe "+p.File)
		if err != nil {
			return checks.ProbeResult{}, err
		}
		out = string(res.Output)
		if len(res.CutOff) > 0 {
			out += "\nthe sandbox cut off: " + strings.Join(res.CutOff, "; ")
		}
		if res.ExitCode != 0 || res.Signal != 0 {
			exit = fmt.Errorf("exit status %d", res.ExitCode)
		}
	} else {
		run := exec.CommandContext(ctx, bin, args...)
		run.Dir = dir
		b, err := run.CombinedOutput()
		out, exit = string(b), err
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			return checks.ProbeResult{}, fmt.Errorf("running the probe %s: %w", p.File, err)
		}
	}
	out = strings.TrimSpace(out)
	return checks.ProbeResult{Compiled: true, Passed: exit == nil && ranNoTest(out) == "", Output: out}, nil
}

// probeBins are a run's probe binaries, keyed by the probe's package, file
// and source: two checks running tests of one probe share one build.
type probeBins struct {
	mu   sync.Mutex
	bins map[string]*probeBin
}

type probeBin struct {
	once     sync.Once
	bin, dir string
	failed   *checks.ProbeResult // the probe did not compile
	err      error
	// install puts the binary into the run's sandbox once (a grade).
	install    sync.Once
	test       string
	installErr error
}

func (pb *probeBins) get(p checks.Probe) *probeBin {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	key := p.Package + "\x00" + p.File + "\x00" + p.Source
	if pb.bins == nil {
		pb.bins = map[string]*probeBin{}
	}
	b := pb.bins[key]
	if b == nil {
		b = &probeBin{}
		pb.bins[key] = b
	}
	return b
}

// buildProbe compiles the probe's test binary; a probe that does not compile
// against the learner's code gives a result (failed), not an error.
func (r *run) buildProbe(ctx context.Context, p checks.Probe, module string) (bin, dir string, failed *checks.ProbeResult, err error) {
	opts := r.opts
	dir, err = os.MkdirTemp(r.dir, "probe-")
	if err != nil {
		return "", "", nil, fmt.Errorf("making the probe's directory: %w", err)
	}
	src := filepath.Join(dir, p.File)
	if err := os.WriteFile(src, []byte(strings.ReplaceAll(p.Source, "MODULE", module)), 0o644); err != nil {
		return "", "", nil, fmt.Errorf("writing the probe: %w", err)
	}
	pkg := filepath.Join(opts.StepDir, filepath.FromSlash(p.Package))
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(pkg, p.File): src}})
	if err != nil {
		return "", "", nil, fmt.Errorf("writing the probe's overlay: %w", err)
	}
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		return "", "", nil, fmt.Errorf("writing the probe's overlay: %w", err)
	}
	bin = filepath.Join(dir, "probe.test")
	env := append(append(os.Environ(), opts.GoEnv...), sandboxedBuildEnv...)
	// A binary linked from the same compiled packages (the probe's source
	// is one of them) in an earlier run is reused: the link is most of
	// this build on a warm run. Kept per probe file; a grade builds always.
	kind := "probe-" + strings.TrimSuffix(p.File, ".go")
	_, err = linkCached(ctx, opts, kind, opts.StepDir, env, []string{"-test", "-overlay", overlayFile, "./" + p.Package}, "test -c -vet=off ./"+p.Package, bin, func() error {
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-vet=off", "-overlay", overlayFile, "-o", bin, "./"+p.Package)
		cmd.Dir = opts.StepDir
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			out := strings.ReplaceAll(string(out), src, p.Package+"/"+p.File)
			failed = &checks.ProbeResult{Output: relPaths(strings.TrimSpace(out), opts)}
			return errProbeBuild
		}
		return nil
	})
	switch {
	case errors.Is(err, errProbeBuild):
		return "", "", failed, nil
	case err != nil:
		return "", "", nil, err
	}
	return bin, dir, nil, nil
}

// errProbeBuild says the probe did not compile (its output is the result).
var errProbeBuild = errors.New("the probe does not compile")
