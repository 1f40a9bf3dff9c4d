package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/report"
)

// Loop keeps up between runs what does not depend on the step's code: the
// control plane, the proxy stand-in and the run directory (gw10 watch). Each
// Run builds and regenerates the step as it is now, updates the CRD and the
// controller's identity from what it generated, starts a new controller and
// runs the checks. Close stops everything.
type Loop struct {
	opts        Options
	base        *run // the directory, the cluster and the proxy
	waitCluster func() error
	clusterUp   bool // a Run has seen the cluster started
	previous    *run // the last run, its controller still to stop
	runs        int
	// generatedFrom is the generate stage's key (generateKey: everything
	// controller-gen's output depends on) after the last generate that passed.
	generatedFrom string
}

// NewLoop starts the proxy stand-in and, in the background, the cluster;
// the first Run waits for the cluster after its build. Only a backend the
// loop starts itself (opts.NewBackend, envtest by default) is supported.
func NewLoop(ctx context.Context, opts Options) (*Loop, error) {
	opts = opts.withDefaults()
	// The unit tests are make check's stage; a loop reruns the checks.
	opts.Step.UnitTests = ""
	opts.Backend = nil
	base := &run{opts: opts, rep: &report.Report{}}
	if err := base.makeDir(); err != nil {
		return nil, err
	}
	if err := base.startProxy(); err != nil {
		base.teardown()
		return nil, fmt.Errorf("starting the proxy stand-in: %w", err)
	}
	return &Loop{opts: opts, base: base, waitCluster: base.startClusterMeanwhile(ctx)}, nil
}

// Close stops the cluster and the proxy and removes the run directory.
func (l *Loop) Close() {
	l.endPrevious()
	_ = l.waitCluster() // a start under way: let it finish so that teardown stops it
	l.base.teardown()
}

// endPrevious stops the last run's controller and removes its directory;
// the loop's cluster and proxy stay.
func (l *Loop) endPrevious() { l.endPreviousAsync()() }

// endPreviousAsync starts endPrevious and returns the wait for its end, so
// that the controller stops while the next one builds.
func (l *Loop) endPreviousAsync() (wait func()) {
	prev := l.previous
	l.previous = nil
	if prev == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		prev.teardown()
	}()
	return func() { <-done }
}

// Run runs the pipeline once on the step as it is on disk, with the checks
// in the order given (a subset of the step's, or all of them); the report
// lists them in the step's order whatever order they ran in. The error is
// non-nil when ctx ended (the run stopped; the report says how far it got)
// or when the cluster could not be started (no run can succeed).
func (l *Loop) Run(ctx context.Context, order []checks.Check, progress Progress) (*report.Report, error) {
	previousEnded := l.endPreviousAsync()
	l.runs++
	opts := l.opts
	opts.Checks = order
	rep := newReport(opts)
	r := &run{opts: opts, rep: rep, world: world{proxy: l.base.proxy}, dir: filepath.Join(l.base.dir, fmt.Sprintf("run-%d", l.runs))}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		previousEnded()
		return nil, fmt.Errorf("creating the run's directory: %w", err)
	}
	key, keyErr := generateKey(opts)
	if keyErr == nil && key == l.generatedFrom {
		r.generated = "no marker, api/ or generated file changed"
	}
	p := plan{checks: true, progress: progress, firstAlone: true, built: func(ok bool) {
		previousEnded() // before the CRD and the role change under it
		if ok && r.generated == "" {
			l.generatedFrom, _ = generateKey(opts)
		}
	}}
	var clusterErr error
	if l.clusterUp {
		r.backend = l.base.backend
	} else { // the first run waits for the start it overlapped with
		p.cluster = func() error {
			clusterErr = l.waitCluster()
			l.clusterUp = clusterErr == nil
			r.backend = l.base.backend
			return clusterErr
		}
	}
	r.drive(ctx, p)
	// The controller is stopped when the next run begins (or at Close), not
	// now: the verdict need not wait for its shutdown.
	l.previous = r
	stepOrder(rep, l.opts.Checks)
	if err := finish(ctx, rep); err != nil {
		return rep, err
	}
	if clusterErr != nil {
		return rep, fmt.Errorf("starting the cluster: %w", clusterErr)
	}
	return rep, nil
}

// stepOrder sorts the results in the order of the step's checks, the order
// a learner should fix them in.
func stepOrder(rep *report.Report, step []checks.Check) {
	pos := map[string]int{}
	for i, c := range step {
		pos[c.ID] = i
	}
	slices.SortStableFunc(rep.Checks, func(a, b report.CheckResult) int { return pos[a.ID] - pos[b.ID] })
}

// markerLine is a kubebuilder marker (+kubebuilder:rbac, +groupName, ...).
var markerLine = regexp.MustCompile(`(?m)^\s*//\s*\+.*$`)

// generatorInputs is a digest of everything controller-gen reads and
// writes in the step: the API package whole (types, comments, markers),
// the marker lines of every other Go file, and the generated files as they
// are. Equal digests: generating again would change nothing.
func generatorInputs(stepDir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(stepDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(stepDir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "bin" || (rel != "." && strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		generated := strings.HasPrefix(rel, "config/crd/bases/") || rel == "config/rbac/role.yaml"
		if !generated && !strings.HasSuffix(rel, ".go") && rel != "hack/boilerplate.go.txt" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(rel, ".go") && !strings.HasPrefix(rel, "api/") {
			data = []byte(strings.Join(markerLine.FindAllString(string(data), -1), "\n"))
		}
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("reading the generator's inputs in %s: %w", stepDir, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
