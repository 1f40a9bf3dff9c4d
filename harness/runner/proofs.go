package runner

import (
	"slices"
	"sync"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/report"
)

// proofs are what the run's checks leave for the rest of the run: the
// proofs of failed checks that hold from then on, and the namespaces the
// checks used. Checks side by side (lanes.go) add to them concurrently.
type proofs struct {
	mu sync.Mutex
	// prior is the first proof a failed check found (see keepBlocker).
	prior *checks.Prior
	// blockers are the proofs each failed check found, by check.
	blockers map[string]checks.Blocker
	// namespaces are the checks' namespaces, deleted.
	namespaces []string
}

// priorProof is what an earlier check proved for the rest of the run (see
// keepBlocker), for checks.Env.Prior.
func (p *proofs) priorProof() *checks.Prior {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.prior
}

// keepBlocker keeps the first proof a failed check found that holds for the
// rest of the run (its writes of the status are refused, every worker is
// stuck): the later checks' waits name it as their prerequisite as soon as
// their own evidence confirms it.
func (p *proofs) keepBlocker(chk checks.Check, out checks.Outcome) {
	if !out.Failed || out.Blocker == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.blockers == nil {
		p.blockers = map[string]checks.Blocker{}
	}
	p.blockers[chk.ID] = *out.Blocker
	if p.prior == nil {
		p.prior = &checks.Prior{Check: chk.ID, Blocker: *out.Blocker}
	}
}

// setPrior makes p the proof the rest of the run keeps: the blocker of
// the first check, in the step's order, of those run side by side.
func (p *proofs) setPrior(prior *checks.Prior) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prior = prior
}

// blockerOf is the proof a failed check found that holds for the rest of
// the run, if it found one.
func (p *proofs) blockerOf(chk checks.Check, res report.CheckResult) *checks.Blocker {
	if res.Status != report.Fail {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.blockers[chk.ID]
	if !ok {
		return nil
	}
	return &b
}

// stuck says whether an earlier check proved every worker stuck: waiting
// for the controller to go quiet is then in vain.
func (p *proofs) stuck() bool {
	prior := p.priorProof()
	return prior != nil && prior.Stuck()
}

// deleted records a check's namespace, deleted.
func (p *proofs) deleted(ns string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.namespaces = append(p.namespaces, ns)
}

// deletedNamespaces are the checks' namespaces deleted so far.
func (p *proofs) deletedNamespaces() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.namespaces)
}

// teardowns are what stops what the run started, in reverse order; stages
// running concurrently (the cluster starts while the build runs) add to
// them.
type teardowns struct {
	mu  sync.Mutex
	fns []func()
}

func (t *teardowns) onTeardown(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.fns = append(t.fns, f)
}

// runTeardowns runs them, the last added first.
func (t *teardowns) runTeardowns() {
	t.mu.Lock()
	fns := t.fns
	t.fns = nil
	t.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}
