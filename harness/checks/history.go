package checks

import (
	"fmt"
	"strings"
	"time"

	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/proxy"
)

// History is everything a check saw, structured for the step's invariants:
// clauses that must hold at every event of every check, not only at a
// check's checkpoints (docs/contract.md). Times are when the harness saw
// each thing: an action is recorded before its request is sent, a watch
// event after the write it shows, a proxy event when the request arrived.
type History struct {
	Namespace string
	// Versions are the namespace's objects of the step's primary kind
	// (Env.Primary) as the watch delivered them, in order, deletions included.
	Versions []Version
	// Objects are the namespace's objects of the kinds the step watches
	// (Env.Watched), appearing, changing and going, in order.
	Objects []ObjectSeen
	// Actions are the check's own changes of the world, in order.
	Actions []evidence.Event
	// Specs are the specs of the primary kind the check wrote, in order:
	// what each object named from then on, known without a watch's lag.
	Specs []SpecWritten
	// Proxy is every request the proxy got for the namespace's routes.
	Proxy []proxy.Event
}

// SpecWritten is a spec of the primary kind as the check wrote it (created
// or edited) at At.
type SpecWritten struct {
	At      time.Time
	Object  string // "EdgeRoute ns/name"
	Service string
}

// Version is one version of an object of the primary kind on the watch.
type Version struct {
	At         time.Time
	Name       string
	Generation int64
	Spec       map[string]any // its spec, as the step's API has it
	Deleting   bool           // it has a deletionTimestamp
	Gone       bool           // the watch's Deleted event
	// StatusWrite: its status differs from the route's previous version (or
	// it is the first with conditions): a status write, seen.
	StatusWrite bool
	Conditions  []Condition
}

// Condition is one status condition of a Version. LastTransitionTime is
// as the API server stores it (RFC 3339, to the second).
type Condition struct {
	Type, Status, Reason, Message string
	ObservedGeneration            int64
	LastTransitionTime            string
}

// Find returns the condition of type typ.
func (v Version) Find(typ string) (Condition, bool) {
	for _, c := range v.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return Condition{}, false
}

// ObjectSeen is an object of a kind the step watches (Env.Watched) as the
// watch delivered it: Exists is false for its Deleted event.
type ObjectSeen struct {
	At         time.Time
	Kind, Name string
	Generation int64
	Exists     bool
}

// Invariant is a clause of the step's contract checked over the whole
// history of every check (at its end, and after every step of a sequence).
// Eval returns one line per violation: when, which object, what was
// written or pushed, against what.
type Invariant struct {
	Clause string
	// Rule says in a sentence what must hold; Fix what to do about a violation.
	Rule, Fix string
	Eval      func(h History) []string
}

// History returns what the check has seen so far.
func (t *T) History() History {
	h := History{Namespace: t.Namespace}
	if t.api != nil {
		t.api.mu.Lock()
		prev := map[string][]condition{}
		for _, v := range t.api.versions {
			var conds []Condition
			for _, c := range v.conds {
				conds = append(conds, Condition(c))
			}
			p, seen := prev[v.name]
			write := !v.gone && len(v.conds) > 0 && (!seen || !sameConditions(p, v.conds))
			prev[v.name] = v.conds
			if v.gone {
				delete(prev, v.name)
			}
			h.Versions = append(h.Versions, Version{At: v.at, Name: v.name, Generation: v.generation, Spec: v.spec,
				Deleting: v.deleting, Gone: v.gone, StatusWrite: write, Conditions: conds})
		}
		h.Objects = append(h.Objects, t.api.objects...)
		t.api.mu.Unlock()
	}
	for _, ev := range t.Record.Events() {
		if ev.Kind == evidence.Action {
			h.Actions = append(h.Actions, ev)
		}
	}
	t.mu.Lock()
	h.Specs = append(h.Specs, t.specs...)
	t.mu.Unlock()
	if t.Proxy != nil {
		h.Proxy = t.Proxy.EventsIn(t.Namespace)
	}
	return h
}

func sameConditions(a, b []condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Violations evaluates the environment's invariants over the history so
// far: nil when every one holds, else an error naming each broken clause,
// its violations and the fix.
func (t *T) Violations() error {
	if len(t.Invariants) == 0 {
		return nil
	}
	h := t.History()
	var b strings.Builder
	for _, inv := range t.Invariants {
		lines := inv.Eval(h)
		if len(lines) == 0 {
			continue
		}
		t.Cause("%s broken: %s", inv.Clause, lines[0])
		fmt.Fprintf(&b, "%s: %s\n", inv.Clause, inv.Rule)
		for _, l := range lines {
			fmt.Fprintf(&b, "  - %s\n", l)
		}
		if inv.Fix != "" {
			fmt.Fprintf(&b, "  fix: %s\n", inv.Fix)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	t.mu.Lock()
	t.violated = true
	t.mu.Unlock()
	return fmt.Errorf("the contract was broken during the check:\n%s", strings.TrimRight(b.String(), "\n"))
}

func (t *T) alreadyViolated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.violated
}
