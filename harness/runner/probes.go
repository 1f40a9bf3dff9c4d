package runner

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
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
	"github.com/10xdev/gw10/harness/inert"
	"github.com/10xdev/gw10/harness/sandbox"
)

// probeWall bounds a probe's test binary (not its build).
const probeWall = 2 * time.Minute

// probeBuildBudget bounds a probe's build: a cold Go cache compiles the
// test's dependencies for minutes on two cores, in the stage of its own.
const probeBuildBudget = 10 * time.Minute

// probeStages build the probes of the run's checks, each once, before any
// check runs: a first build compiles the grader's test and its
// dependencies, which no check's timeout should pay for. What a build
// finds against the learner's code (it does not compile, an initializer
// is refused) is its check's failure, noted here; the stage fails only
// when interrupted.
func (r *run) probeStages() []stage {
	var ps []checks.Check
	for _, c := range r.opts.Checks {
		if c.Probe != nil {
			ps = append(ps, c)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return []stage{{name: "build probes", do: func(ctx context.Context) error {
		for _, c := range ps {
			b, err := r.probeBinary(ctx, *c.Probe)
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case err != nil:
				r.note(fmt.Sprintf("the grader's test of check %s was not built: %v (the check says so)", c.ID, err))
			case b.failed != nil:
				r.note(fmt.Sprintf("the grader's test of check %s could not be built against your code (the check says why)", c.ID))
			}
		}
		return nil
	}}}
}

// probe runs a grader-owned test (checks.Probe) built beside the step's
// code (probeBinary): in the sandbox when the run has one (a grade: the
// learner's code runs as the sandbox's user, as the unit tests do), else
// directly, as make check runs the unit tests. Its output and exit status
// are returned as they are: they explain, they do not judge.
func (r *run) probe(ctx context.Context, p checks.Probe) (checks.ProbeResult, error) {
	b, err := r.probeBinary(ctx, p)
	if err != nil {
		return checks.ProbeResult{}, err
	}
	if b.failed != nil {
		return *b.failed, nil
	}
	args := []string{"-test.count=1", "-test.v", "-test.run", p.Run, "-test.timeout", probeWall.String()}
	var out string
	var exit error
	if sb := r.opts.Sandbox; sb != nil {
		b.install.Do(func() {
			b.test, b.installErr = sb.Install(b.bin, filepath.Join("bin", "probe-"+filepath.Base(b.dir)+".test"))
		})
		if b.installErr != nil {
			return checks.ProbeResult{}, b.installErr
		}
		res, err := sb.Run(ctx, sandbox.Spec{Path: b.test, Args: args, Env: p.Env, Connect: p.Connect}, probeWall+30*time.Second, "the probe "+p.File)
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
		run := exec.CommandContext(ctx, b.bin, args...)
		run.Dir = b.dir
		run.Env = append(os.Environ(), p.Env...)
		o, err := run.CombinedOutput()
		out, exit = string(o), err
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			return checks.ProbeResult{}, fmt.Errorf("running the probe %s: %w", p.File, err)
		}
	}
	return checks.ProbeResult{Compiled: true, Exited0: exit == nil, Output: strings.TrimSpace(out)}, nil
}

// probeBins are a run's probe binaries, keyed by the probe's file and
// source: the stage builds each once, and the checks run it.
type probeBins struct {
	mu   sync.Mutex
	bins map[string]*probeBin
}

type probeBin struct {
	once     sync.Once
	bin, dir string
	failed   *checks.ProbeResult // it could not be built against the learner's code
	err      error
	// install puts the binary into the run's sandbox once (a grade).
	install    sync.Once
	test       string
	installErr error
}

func (pb *probeBins) get(p checks.Probe) *probeBin {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	key := p.File + "\x00" + p.Source
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

// probeBinary builds p once per run and returns its binary.
func (r *run) probeBinary(ctx context.Context, p checks.Probe) (*probeBin, error) {
	b := r.probeBins.get(p)
	b.once.Do(func() {
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeBuildBudget)
		defer cancel()
		b.bin, b.dir, b.failed, b.err = r.buildProbe(bctx, p)
		if b.err != nil && bctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			b.err = fmt.Errorf("building the grader's test %s took longer than %s, its budget (the machine is busy, or the Go build cache cold); run again: %w",
				p.File, probeBuildBudget, b.err)
		}
	})
	if b.err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return b, b.err
}

// buildProbe compiles the probe's test binary in a package directory of a
// name the learner cannot know (probePackage), so that no file of theirs is
// in it (a TestMain), linking copies of the learner's packages that run
// none of their code by themselves (inert.Rewrite). A probe that does not
// compile against the learner's code, or whose packages hold an
// initializer that could run their code, gives a result (failed), not an
// error.
func (r *run) buildProbe(ctx context.Context, p checks.Probe) (bin, dir string, failed *checks.ProbeResult, err error) {
	opts := r.opts
	gomod, err := os.ReadFile(filepath.Join(opts.StepDir, "go.mod"))
	if err != nil {
		return "", "", nil, fmt.Errorf("reading the step's go.mod: %w", err)
	}
	module := modfile.ModulePath(gomod)
	if module == "" {
		return "", "", nil, fmt.Errorf("%s/go.mod names no module", opts.Label)
	}
	dir, err = os.MkdirTemp(r.dir, "probe-")
	if err != nil {
		return "", "", nil, fmt.Errorf("making the probe's directory: %w", err)
	}
	pkgRel, err := r.probePackage()
	if err != nil {
		return "", "", nil, err
	}
	src := filepath.Join(dir, p.File)
	if err := os.WriteFile(src, []byte(strings.ReplaceAll(p.Source, "MODULE", module)), 0o644); err != nil {
		return "", "", nil, fmt.Errorf("writing the probe: %w", err)
	}
	env := append(append(os.Environ(), opts.GoEnv...), sandboxedBuildEnv...)
	replace := map[string]string{filepath.Join(opts.StepDir, pkgRel, p.File): src}
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := writeOverlay(overlayFile, replace); err != nil {
		return "", "", nil, err
	}
	pkgs, out, err := modulePackages(ctx, opts.StepDir, env, overlayFile, pkgRel, module)
	switch {
	case err != nil && ctx.Err() != nil:
		return "", "", nil, ctx.Err()
	case err != nil:
		return "", "", &checks.ProbeResult{Output: relPaths(strings.ReplaceAll(out+"\n"+err.Error(), src, p.File), opts)}, nil
	}
	rewritten, refusals, err := inert.Rewrite(module, pkgs)
	if err != nil {
		return "", "", nil, fmt.Errorf("reading your packages for the probe: %w", err)
	}
	if len(refusals) > 0 {
		res := &checks.ProbeResult{}
		for _, ref := range refusals {
			res.Refused = append(res.Refused, relPaths(ref.String(), opts))
		}
		res.Output = strings.Join(res.Refused, "\n")
		return "", "", res, nil
	}
	copies := filepath.Join(dir, "inert")
	if err := os.MkdirAll(copies, 0o755); err != nil {
		return "", "", nil, fmt.Errorf("making the probe's copies: %w", err)
	}
	for path, b := range rewritten {
		sum := sha256.Sum256([]byte(path))
		cp := filepath.Join(copies, hex.EncodeToString(sum[:8])+"-"+filepath.Base(path))
		if err := os.WriteFile(cp, b, 0o644); err != nil {
			return "", "", nil, fmt.Errorf("writing the probe's copies: %w", err)
		}
		replace[path] = cp
	}
	if err := writeOverlay(overlayFile, replace); err != nil {
		return "", "", nil, err
	}
	bin = filepath.Join(dir, "probe.test")
	// A binary linked from the same compiled packages (the probe's source
	// and the copies among them) in an earlier run is reused: the link is
	// most of this build on a warm run. Kept per probe file; a grade
	// builds always.
	kind := "probe-" + strings.TrimSuffix(p.File, ".go")
	_, err = linkCached(ctx, opts, kind, opts.StepDir, env, []string{"-test", "-overlay", overlayFile, "./" + pkgRel}, "test -c -vet=off "+noDWARF+" ./"+pkgRel, bin, func() error {
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-vet=off", noDWARF, "-overlay", overlayFile, "-o", bin, "./"+pkgRel)
		cmd.Dir = opts.StepDir
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			out := strings.ReplaceAll(string(out), src, p.File)
			out = strings.ReplaceAll(out, pkgRel+"/", "")
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

// probePackage is the directory, relative to the step module, the probe is
// compiled in as if it were there: a name the learner cannot know, so that
// none of their files (a TestMain, an init) is in its package; one that
// exists is never used. A run with the stage cache (make check) keeps one
// name for the workbook, so that a warm run links nothing new; a grade
// draws a fresh one.
func (r *run) probePackage() (string, error) {
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("drawing the probe's package name: %w", err)
	}
	if cache, ok := cacheOf(r.opts, "probe-package"); ok {
		if v, ok := cache.value(); ok && len(v) == 32 {
			secret, _ = hex.DecodeString(v)
		} else {
			_ = cache.store(hex.EncodeToString(secret))
		}
	}
	for range 3 {
		sum := sha256.Sum256(secret)
		name := "gw10probe" + hex.EncodeToString(sum[:8])
		if _, err := os.Lstat(filepath.Join(r.opts.StepDir, name)); os.IsNotExist(err) {
			return name, nil
		}
		secret = sum[:]
	}
	return "", errors.New("no unused directory name for the probe in the step module")
}

func writeOverlay(path string, replace map[string]string) error {
	b, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		return fmt.Errorf("writing the probe's overlay: %w", err)
	}
	return nil
}

// modulePackages lists the module's packages the probe package links, with
// their Go files (go list -deps -test); out is go list's output when it
// fails (the probe does not compile against the learner's code).
func modulePackages(ctx context.Context, dir string, env []string, overlay, pkgRel, module string) ([]inert.Package, string, error) {
	pkg := "./" + pkgRel
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-test", "-overlay", overlay,
		"-json=ImportPath,Dir,GoFiles,Module", pkg)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, strings.TrimSpace(stderr.String()), fmt.Errorf("go list %s: %w", pkg, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	seen := map[string]bool{}
	var out []inert.Package
	for dec.More() {
		var p struct {
			ImportPath, Dir string
			GoFiles         []string
			Module          *struct{ Path string }
		}
		if err := dec.Decode(&p); err != nil {
			return nil, "", fmt.Errorf("reading go list's answer: %w", err)
		}
		path, _, _ := strings.Cut(p.ImportPath, " ") // a test variant: "pkg [probe.test]"
		// The probe's package and its test main are the grader's.
		if p.Module == nil || p.Module.Path != module || seen[path] || p.Dir == filepath.Join(dir, pkgRel) {
			continue
		}
		seen[path] = true
		ip := inert.Package{ImportPath: path}
		for _, f := range p.GoFiles {
			full := filepath.Join(p.Dir, f)
			src, err := os.ReadFile(full)
			if err != nil {
				return nil, "", fmt.Errorf("reading %s: %w", full, err)
			}
			ip.Files = append(ip.Files, inert.File{Path: full, Src: src})
		}
		out = append(out, ip)
	}
	return out, "", nil
}
