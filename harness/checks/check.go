// Package checks holds the acceptance checks as data: each is a value with a
// stable ID, what it proves of the seed card, its points, a hint, and a Run
// function that drives the cluster and the proxy and asserts with gomega.
package checks

import (
	"context"
	"fmt"
	"time"

	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/proxy"
)

// Check is one acceptance check.
type Check struct {
	ID       string // stable: reports, docs and hints use it
	Title    string
	SeedRef  string // the card's task or acceptance line it proves
	Points   int
	Hint     string // one line, printed on failure
	LongHint string // `make hint ID=...`: more guidance, no code
	Run      func(ctx context.Context, env *Env) error
}

// DocAnchor is where the chapter explains the check.
func (c Check) DocAnchor() string { return "docs/step01.md#check-" + c.ID }

// Controller is the learner's controller process as checks may drive it.
type Controller interface {
	// Kill SIGKILLs it and waits until it is gone.
	Kill(ctx context.Context) error
	// Start runs a new process and waits until it is ready.
	Start(ctx context.Context) error
	// Metrics scrapes controller-runtime's metrics.
	Metrics(ctx context.Context) (ctrlproc.Metrics, error)
}

// Env is what a check works with.
type Env struct {
	Client     client.WithWatch // cluster admin, uncached: assertions never race a cache
	Proxy      *proxy.Server
	Controller Controller
	StepDir    string // the step module, for its samples
	Namespace  string // created for this check, removed after it
	Timeouts   Timeouts
	G          gomega.Gomega // fails the check (see Run in the runner)
}

// Timeouts are every wait of every check, in one place.
type Timeouts struct {
	// Converge bounds waiting for the controller to react to a change.
	Converge time.Duration
	// SelfHeal is the card's bound for status to flip after the Service appears.
	SelfHeal time.Duration
	// Quiet is how long a converged controller must do nothing.
	Quiet time.Duration
	// Absent is how long something must stay absent (a route, a True status).
	Absent time.Duration
	// Retry bounds waiting for a NACKed push to be retried after the proxy ACKs again;
	// it covers the rate limiter's exponential backoff.
	Retry time.Duration
	// Check bounds a whole check.
	Check time.Duration
	// Poll is the interval of every Eventually and Consistently.
	Poll time.Duration
	// Settle ends a wait early: once the controller has been idle this long
	// (nothing queued, nothing running, no reconcile) without reaching the
	// expected state, waiting longer will not get it there.
	Settle time.Duration
}

// DefaultTimeouts are generous for slow CI machines, except SelfHeal, which
// the card sets: a watch reacts in milliseconds, a poller does not.
func DefaultTimeouts() Timeouts {
	return Timeouts{
		Converge: 30 * time.Second,
		SelfHeal: 5 * time.Second,
		Quiet:    3 * time.Second,
		Absent:   time.Second,
		Retry:    45 * time.Second,
		Check:    3 * time.Minute,
		Poll:     100 * time.Millisecond,
		Settle:   2500 * time.Millisecond,
	}
}

// Step01 is the list of step 01's checks, in the order they run.
func Step01() []Check {
	return []Check{
		crdSchemaCheck,
		missingServiceCheck,
		selfHealCheck,
		serviceRemovedCheck,
		specUpdateCheck,
		pushFailureCheck,
		quiescentCheck,
		routeDeletedCheck,
		restartReconvergeCheck,
	}
}

// Select returns the checks with the given IDs (all when ids is empty), or an
// error naming an unknown ID.
func Select(all []Check, ids []string) ([]Check, error) {
	if len(ids) == 0 {
		return all, nil
	}
	byID := map[string]Check{}
	for _, c := range all {
		byID[c.ID] = c
	}
	var out []Check
	for _, id := range ids {
		c, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("unknown check %q (known: %s)", id, idList(all))
		}
		out = append(out, c)
	}
	return out, nil
}

// Find returns the check with this ID.
func Find(all []Check, id string) (Check, bool) {
	for _, c := range all {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}

func idList(all []Check) string {
	s := ""
	for i, c := range all {
		if i > 0 {
			s += ", "
		}
		s += c.ID
	}
	return s
}
