package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/proxy"
	"github.com/10xdev/gw10/harness/report"
)

// Session is the pipeline's world without the checks: a cluster with the
// step's CRD, the proxy stand-in, and the step's controller running under
// its own identity. The bench measures in it. Close stops everything.
type Session struct {
	// Client is an admin client, uncached, with no client-side rate limit.
	Client client.WithWatch
	Proxy  *proxy.Server
	// Stages are the pipeline stages as they ran.
	Stages []report.Stage
	r      *run
}

// Start runs the pipeline's stages up to a started controller. When a stage
// fails the error says which, and everything started is stopped again.
func Start(ctx context.Context, opts Options) (*Session, error) {
	opts = opts.withDefaults()
	opts.Step.UnitTests = "" // a session measures the controller, not its unit tests
	// The bench measures the API server's limit: its controller talks to
	// the API server itself, not through the front.
	r := &run{opts: opts, rep: newReport(opts), world: world{direct: true}}
	ok, err := r.driveFresh(ctx, plan{})
	if err == nil && !ok {
		err = stageFailure(r.rep.Stages)
		if ctx.Err() != nil {
			err = fmt.Errorf("interrupted: %w", ctx.Err())
		}
	}
	if err != nil {
		r.teardown()
		return nil, err
	}
	cfg := rest.CopyConfig(r.backend.Admin())
	cfg.QPS, cfg.Burst = -1, 0 // the bench measures the server, not a client-side limiter
	s, err := scheme()
	if err != nil {
		r.teardown()
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: s})
	if err != nil {
		r.teardown()
		return nil, fmt.Errorf("creating a client of the cluster: %w", err)
	}
	return &Session{Client: c, Proxy: r.proxy, Stages: r.rep.Stages, r: r}, nil
}

func stageFailure(stages []report.Stage) error {
	for _, st := range slices.Backward(stages) { // the stage that stopped the pipeline
		if st.Status == report.Fail {
			return fmt.Errorf("stage %q failed: %s", st.Name, st.Detail)
		}
	}
	return errors.New("a stage failed")
}

// Close stops the controller, the proxy and the cluster, and removes the
// run's directory.
func (s *Session) Close() { s.r.teardown() }

// Cluster names the backend (envtest, kind, existing).
func (s *Session) Cluster() string { return s.r.backend.Name() }

// StopController SIGKILLs the controller, as a crashed pod would end.
func (s *Session) StopController(ctx context.Context) error { return s.r.ctrl.Kill(ctx) }

// StartController starts a new controller process with extra flags and
// waits until it is ready.
func (s *Session) StartController(ctx context.Context, args ...string) error {
	s.r.ctrl.cfg.Args = args
	return s.r.ctrl.Start(ctx)
}

// Metrics scrapes the running controller.
func (s *Session) Metrics(ctx context.Context) (ctrlproc.Metrics, error) {
	return s.r.ctrl.Metrics(ctx)
}

// Usage is the running controller's CPU time and peak memory.
func (s *Session) Usage() (ctrlproc.Usage, error) {
	p := s.r.ctrl.current()
	if p == nil {
		return ctrlproc.Usage{}, errStopped
	}
	return p.Usage()
}

// ControllerHasFlag reports whether the controller's binary defines the flag
// name (without dashes), from its -h output.
func (s *Session) ControllerHasFlag(ctx context.Context, name string) bool {
	return hasFlag(ctx, s.r.ctrl.cfg.Binary, name)
}
