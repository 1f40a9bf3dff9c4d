// Package runner is the harness pipeline: regenerate the step's manifests,
// build its controller, start a cluster, install the CRD, run the controller
// as a separate process under its own identity against the proxy stand-in,
// run the checks, and report. Every stage is reported; everything it starts
// is stopped again, also when the context is cancelled (Ctrl-C).
package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/apifront"
	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/gotool"
	"github.com/10xdev/gw10/harness/proxy"
	"github.com/10xdev/gw10/harness/report"
	"github.com/10xdev/gw10/harness/sandbox"
	"github.com/10xdev/gw10/harness/step"
)

// Options configure a run.
type Options struct {
	// Root is the workbook root (where go.work is): tools are resolved there.
	Root string
	// Step is the step's descriptor: its checks, chapter and cleanup.
	Step step.Step
	// StepDir is the module to check; empty: the step's learner module.
	StepDir string
	// Label names the checked module in reports and compiler messages;
	// empty: StepDir relative to Root.
	Label string
	// Checks are the checks to run; empty: all of the step's.
	Checks   []checks.Check
	Timeouts checks.Timeouts
	// Seeds replay exactly these generated sequences' seeds (--seed); empty:
	// the learner's budget draws one fresh seed, the full budget runs the
	// step's fixed seeds plus one fresh seed unless FixedSeeds.
	Seeds []int64
	// FixedSeeds runs the step's fixed seeds only, at full length (the full
	// budget, whatever Budget says): a grade (and make test) gets the same
	// sequences every run.
	FixedSeeds bool
	// Budget is how long the generated sequences run (checks.Budget); empty:
	// the learner's, make check's and make watch's.
	Budget checks.Budget
	// Backend is a started cluster to use and leave running; nil starts an
	// envtest control plane for this run and stops it at the end.
	Backend cluster.Backend
	// NewBackend, when Backend is nil, starts the cluster (default: envtest).
	NewBackend func(ctx context.Context, dir string, progress io.Writer) (cluster.Backend, error)
	// Out receives progress and, with Verbose, the controller's log as it runs.
	Out     io.Writer
	Verbose bool
	// GoEnv is added to the environment of go and controller-gen (e.g.
	// GOWORK=off for a module outside the workspace).
	GoEnv []string
	// LogLines is how many controller log lines a failure shows.
	LogLines int
	// Sandbox, when set, runs every piece of learner code — the unit tests
	// (compiled by the harness) and the controller — as its user, under its
	// limits, and kills what they leave (a grade); nil runs them as this
	// process's user (make check). The caller opens and closes it.
	Sandbox *sandbox.Sandbox
	// ChecksOnly runs the checks without the module's unit tests (make
	// mutants scores the checks, not the solution's own tests).
	ChecksOnly bool
	// FailFast stops at the first check that fails: the rest are skipped
	// (make mutants: one killing check is enough, and cheaper).
	FailFast bool
	// UnitTestsAlways runs the unit tests with a selection of checks too
	// (the hostile-submission suite grades a cheap selection).
	UnitTestsAlways bool
	// UnitWall bounds the unit tests' wall time in the sandbox (default 3 min).
	UnitWall time.Duration
	// Generated, when set, says why the step's generated files are already
	// those of its markers, and the generate stage is skipped with it as
	// its note: the mutant suite knows it of a patch that touches no
	// marker, api/ or generated file of a solution whose generated files
	// are controller-gen's. Empty: the stage runs (or its cache decides).
	Generated string
	// StageCache keeps what a stage produced on unchanged inputs for the
	// next run, in <Root>/.gw10/cache (make check, make watch: see
	// stagecache.go); never in a grade (Sandbox). Off, every stage runs.
	StageCache bool
	// Lanes is how many checks run at once, each with a controller process
	// and a proxy stand-in of its own (make check, make watch: see
	// lanes.go); 0 or 1: one at a time, on the run's controller (a grade,
	// make test: their causes and times are the contract).
	Lanes int
	// StageTick is how often a stage that is still running says so
	// (default 10 s: a cold first build is never silent for long).
	StageTick time.Duration
	// Terminal says Out is a terminal: the cluster's start, which runs
	// while the controller builds, then shows its progress as it comes. In a
	// log (false: CI, a pipe, a grade) it shows under the cluster stage, so
	// the stages' lines do not interleave.
	Terminal bool
}

// sequenceSeeds are the seeds a check's generated sequences run: the ones
// to replay; else, on the learner's budget, one fresh seed (its planned
// sequence reaches every situation whatever the seed); else the step's fixed
// seeds, then one fresh seed unless the run keeps to the fixed ones (a step
// with none always gets a fresh one).
func (o Options) sequenceSeeds(fresh func() int64) []int64 {
	if len(o.Seeds) > 0 {
		return o.Seeds
	}
	if o.budget() == checks.BudgetLearner {
		return []int64{fresh()}
	}
	seeds := slices.Clone(o.Step.Seeds)
	if !o.FixedSeeds || len(seeds) == 0 {
		s := fresh()
		for slices.Contains(seeds, s) {
			s++
		}
		seeds = append(seeds, s)
	}
	return seeds
}

// budget is the run's sequence budget: full when it keeps to the fixed
// seeds, the learner's unless told otherwise.
func (o Options) budget() checks.Budget {
	switch {
	case o.FixedSeeds:
		return checks.BudgetFull
	case o.Budget == "":
		return checks.BudgetLearner
	}
	return o.Budget
}

// freshSeed draws a seed for this run (small: it is printed to be typed).
func freshSeed() int64 { return time.Now().UnixNano()%1_000_000 + 1 }

// partial says the checks are a selection, not the step's whole list.
func (o Options) partial() bool { return len(o.Checks) < len(o.Step.Checks) }

// withDefaults fills in what was left empty.
func (o Options) withDefaults() Options {
	if o.Out == nil {
		o.Out = io.Discard
	}
	o.Out = stageOutOf(o.Out)
	if o.LogLines == 0 {
		o.LogLines = 20
	}
	if o.StageTick == 0 {
		o.StageTick = 10 * time.Second
	}
	if o.Timeouts == (checks.Timeouts{}) {
		o.Timeouts = checks.DefaultTimeouts()
	}
	if o.StepDir == "" {
		o.StepDir = filepath.Join(o.Root, o.Step.Dir)
	}
	if !slices.ContainsFunc(o.GoEnv, func(e string) bool { return strings.HasPrefix(e, "GOWORK=") }) {
		o.GoEnv = append(slices.Clone(o.GoEnv), gotool.ModuleEnv(o.Root, o.StepDir)...)
	}
	if o.Label == "" {
		o.Label = o.StepDir
		if rel, err := filepath.Rel(o.Root, o.StepDir); err == nil {
			o.Label = filepath.ToSlash(rel)
		}
	}
	if len(o.Checks) == 0 {
		o.Checks = o.Step.Checks
	}
	if o.NewBackend == nil {
		o.NewBackend = func(ctx context.Context, dir string, progress io.Writer) (cluster.Backend, error) {
			return cluster.NewEnvtestBackend(ctx, dir, progress)
		}
	}
	return o
}

// runDirPrefix names the per-run directories under $TMPDIR; Sweep finds
// leftovers of killed runs by it.
const runDirPrefix = "gw10-run-"

// Run runs the pipeline and returns its report. The error is non-nil only
// when the run was interrupted; failures of the learner's code are in the report.
func Run(ctx context.Context, opts Options) (*report.Report, error) {
	opts = opts.withDefaults()
	rep := newReport(opts)
	if opts.Backend != nil {
		rep.Cluster = opts.Backend.Name()
	}
	r := &run{opts: opts, rep: rep, generated: opts.Generated}
	_, err := r.driveFresh(ctx, plan{checks: true})
	r.teardown()
	if r.backend != nil {
		rep.Cluster = r.backend.Name()
	}
	if ierr := finish(ctx, rep); ierr != nil {
		return rep, ierr
	}
	return rep, err
}

// run is one pipeline run: what it was asked (opts), what it says (rep,
// notes), what its stages made (world), what its checks leave for the ones
// after them (proofs), and what stops it all (teardowns). Its stages run in
// the driver (stages.go); its checks in runChecks (drive.go).
type run struct {
	opts Options
	rep  *report.Report
	dir  string
	// notes are printed after the current stage's line.
	notes []string
	// generated, when set, says why the generated files are already
	// those of the markers (gw10 watch, Options.Generated): the generate
	// stage is skipped.
	generated string
	// probeBins are the probes' test binaries built in this run, one per
	// source (see probeBinary): checks sharing a probe build it once.
	probeBins probeBins

	world
	proofs
	teardowns
}

// world is what the stages made, which the checks run against.
type world struct {
	backend cluster.Backend
	admin   client.WithWatch // see adminClient
	proxy   *proxy.Server
	ctrl    *controller
	// kubeconfig and role are the controller's identity: its kubeconfig file
	// and the rules its RBAC markers generated.
	kubeconfig string
	apiserver  string // host:port of the API server the kubeconfig names: the front's
	role       []rbacv1.PolicyRule
	// front is the API front the controller's kubeconfig names (apifront);
	// nil in the bench's session (direct), whose controller talks to the
	// API server itself.
	front  *apifront.Front
	direct bool
}

// note is said to the learner once the current stage's line is complete.
func (r *run) note(msg string) { r.notes = append(r.notes, msg) }

// driveFresh drives a run of its own: its directory, and the cluster
// started while the controller builds (make check, the bench). The error
// says the run's directory could not be made; the caller tears the run down.
func (r *run) driveFresh(ctx context.Context, p plan) (bool, error) {
	if err := r.makeDir(); err != nil {
		return false, err
	}
	fmt.Fprintf(r.opts.Out, "gw10: checking %s\n", r.opts.Label)
	p.cluster = r.startClusterMeanwhile(ctx)
	ok := r.drive(ctx, p)
	if !ok {
		_ = p.cluster() // a stage failed early: let the start finish so teardown stops it
	}
	return ok, nil
}

// startClusterMeanwhile starts the control plane while the controller
// builds, and returns the wait for it: the cluster stage. Its progress (a
// first run builds etcd from source for minutes) is held in a log until the
// wait begins (heldOut), so the build's lines and the cluster's do not
// interleave; on a terminal it shows as it comes.
func (r *run) startClusterMeanwhile(ctx context.Context) (wait func() error) {
	var held *heldOut
	progress := r.opts.Out
	if !r.opts.Terminal {
		held = &heldOut{w: r.opts.Out}
		progress = held
	}
	done := make(chan error, 1)
	go func() { done <- r.startCluster(ctx, progress) }()
	return sync.OnceValue(func() error {
		held.release()
		return <-done
	})
}

// clusterStage waits for the control plane started while the controller
// built (startClusterMeanwhile): its time is only the wait that was left,
// often 0.0s, and its line says so rather than leave a learner to wonder
// how a control plane started in no time. None when it is up already.
func clusterStage(wait func() error) []stage {
	if wait == nil {
		return nil
	}
	return []stage{{name: "cluster", harness: true, aside: "started during the build",
		do: func(context.Context) error { return wait() }}}
}

// deployStages install (or update) the CRD and the controller's identity,
// start the proxy stand-in unless one runs already (gw10 watch keeps it),
// and start the controller.
func (r *run) deployStages(binary *string) []stage {
	ss := []stage{
		{name: "install CRD", do: r.installCRD},
		{name: "controller identity", harness: true, do: r.identity},
	}
	if r.proxy == nil {
		ss = append(ss, stage{name: "proxy stand-in", harness: true, do: func(context.Context) error { return r.startProxy() }})
	}
	return append(ss, stage{name: "start controller", do: func(ctx context.Context) error { return r.startController(ctx, *binary) }})
}

// makeDir creates the run's directory under $TMPDIR, after sweeping what
// killed runs left behind, and marks it as this process's.
func (r *run) makeDir() error {
	Sweep(r.opts.Out)
	dir, err := os.MkdirTemp("", runDirPrefix)
	if err != nil {
		return fmt.Errorf("creating run directory: %w", err)
	}
	r.dir = dir
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fmt.Errorf("writing run directory owner: %w", err)
	}
	return nil
}

func (r *run) teardown() {
	r.runTeardowns()
	if sb := r.opts.Sandbox; sb != nil {
		// Whatever learner code still runs ends with the run.
		if left, err := sb.KillAll(context.Background()); err != nil {
			fmt.Fprintf(r.opts.Out, "warning: %v\n", err)
		} else if len(left) > 0 {
			sb.Record(sandbox.KilledNote("end of the run", left))
		}
	}
	if r.dir != "" {
		_, _ = cluster.KillProcessesUnder(r.dir)
		_ = os.RemoveAll(r.dir)
	}
}

func (r *run) startCluster(ctx context.Context, progress io.Writer) error {
	if r.opts.Backend != nil {
		r.backend = r.opts.Backend
		return nil
	}
	b, err := r.opts.NewBackend(ctx, filepath.Join(r.dir, "cluster"), progress)
	if err != nil {
		return err
	}
	r.backend = b
	r.onTeardown(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := b.Stop(stopCtx); err != nil {
			fmt.Fprintf(r.opts.Out, "warning: %v\n", err)
		}
	})
	return nil
}

func (r *run) startProxy() error {
	p, err := proxy.Start()
	if err != nil {
		return err
	}
	r.proxy = p
	r.onTeardown(func() { _ = p.Close() })
	return nil
}

// Sweep removes what runs killed without a chance to clean up left behind:
// their processes (found by the run directory in their command line) and
// their directories.
func Sweep(out io.Writer) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), runDirPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, _ := strconv.Atoi(string(b))
		if cluster.Alive(pid) {
			continue
		}
		n, _ := cluster.KillProcessesUnder(d)
		if err := os.RemoveAll(d); err == nil && out != nil {
			fmt.Fprintf(out, "cleaned up after an interrupted run (%s, %d processes)\n", d, n)
		}
	}
}
