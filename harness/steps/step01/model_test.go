package step01

import (
	"crypto/sha256"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/10xdev/gw10/harness/checks"
)

// The sequence generator and the model are pure: rapid draws seeds and
// lengths, and shrinks any counterexample to the smallest.

func TestGeneratedSequencesAreReproducibleAndCoverEveryKindOfChange(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Int64Range(1, 1<<40).Draw(rt, "seed")
		n := rapid.IntRange(len(allOps), 3*len(allOps)).Draw(rt, "n")
		seq := generate(seed, n)
		if !reflect.DeepEqual(seq, generate(seed, n)) {
			rt.Fatalf("seed %d gave two different sequences", seed)
		}
		seen := map[opKind]bool{}
		for _, o := range seq {
			seen[o.Kind] = true
		}
		for _, k := range allOps {
			if !seen[k] {
				rt.Fatalf("seed %d, n %d: no %s in %v", seed, n, k, seq)
			}
		}
	})
}

func TestEveryGeneratedChangeIsPossibleAndTheModelStaysTrue(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Int64Range(1, 1<<40).Draw(rt, "seed")
		n := rapid.IntRange(0, 40).Draw(rt, "n")
		w := newWorld()
		for i, o := range generate(seed, n) {
			if err := possible(w, o); err != "" {
				rt.Fatalf("step %d (%s): %s", i+1, o, err)
			}
			w.apply(o)
			w.tick()
			if w.downFor > maxOutage {
				rt.Fatalf("step %d: the proxy has been down for %d steps", i+1, w.downFor)
			}
			for r, d := range w.nackFor {
				if w.NACK[r] && d > maxOutage {
					rt.Fatalf("step %d: %s has been refused for %d steps", i+1, r, d)
				}
			}
			for name, r := range w.Routes {
				if r.Exists && r.Outcome == acked && !w.Services[r.Spec.Service] {
					rt.Fatalf("step %d: %s is ACKed although its Service %s is missing", i+1, name, r.Spec.Service)
				}
				if r.Exists && r.Outcome == refused && !w.Down && !w.NACK[name] {
					rt.Fatalf("step %d: %s is refused by a proxy that accepts it", i+1, name)
				}
			}
		}
		if w.Down || len(w.NACK) > 0 {
			rt.Fatalf("the sequence ends with the proxy down (%v) or refusing %v", w.Down, w.NACK)
		}
	})
}

// possible says why o cannot happen in w, or "".
func possible(w *world, o op) string {
	switch o.Kind {
	case opCreateService:
		if w.Services[o.Svc] {
			return "the Service exists already"
		}
	case opDeleteService:
		if !w.Services[o.Svc] {
			return "the Service does not exist"
		}
	case opCreateRoute:
		if w.Routes[o.Route].Exists {
			return "the route exists already"
		}
	case opEditRoute:
		if !w.Routes[o.Route].Exists {
			return "the route does not exist"
		}
		if o.Spec == w.Routes[o.Route].Spec {
			return "the edit changes nothing"
		}
	case opDeleteRoute, opDeleteRouteDown:
		if !w.Routes[o.Route].Exists {
			return "the route does not exist"
		}
	case opNACKOn:
		if w.NACK[o.Route] {
			return "the proxy refuses the route already"
		}
	case opNACKOff:
		if !w.NACK[o.Route] {
			return "the proxy does not refuse the route"
		}
	case opProxyDown:
		if w.Down {
			return "the proxy is down already"
		}
	case opProxyUp:
		if !w.Down {
			return "the proxy is up"
		}
	case opProxyLoses:
		if w.Down {
			return "the proxy is down: its table is lost when it comes back, not while the controller could see it"
		}
	}
	return ""
}

func TestAWithdrawIsNeedlessOnlyForARouteThatStaysProgrammed(t *testing.T) {
	before := newWorld()
	before.apply(op{Kind: opCreateService, Svc: "svc-a"})
	before.apply(op{Kind: opCreateService, Svc: "svc-b"})
	before.apply(op{Kind: opCreateRoute, Route: "ra", Spec: routeSpec{"ra.example.com", "/", "svc-a", 8080}})
	before.apply(op{Kind: opCreateRoute, Route: "rb", Spec: routeSpec{"rb.example.com", "/", "svc-b", 8080}})
	after := before.clone()
	after.apply(op{Kind: opDeleteService, Svc: "svc-b"})
	if got := stayedProgrammed(before, after); !reflect.DeepEqual(got, []string{"ra"}) {
		t.Fatalf("stayedProgrammed = %v, want [ra]: rb lost its Service", got)
	}
	edited := before.clone()
	edited.apply(op{Kind: opEditRoute, Route: "ra", Field: "service", Spec: routeSpec{"ra.example.com", "/", "svc-b", 8080}})
	if got := stayedProgrammed(before, edited); !reflect.DeepEqual(got, []string{"ra", "rb"}) {
		t.Fatalf("stayedProgrammed = %v, want [ra rb]: a service edit between two existing Services keeps the route", got)
	}
}

// TestSegmentsReplayExactly: a list of seeds is one sequence, the same on
// every run, and its first segment is that seed's sequence alone.
func TestSegmentsReplayExactly(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		a := rapid.Int64Range(1, 1<<40).Draw(rt, "a")
		b := rapid.Int64Range(1, 1<<40).Draw(rt, "b")
		seq := generateSegments([]int64{a, b}, segmentLengths(2))
		if !reflect.DeepEqual(seq, generateSegments([]int64{a, b}, segmentLengths(2))) {
			rt.Fatalf("seeds %d,%d gave two different sequences", a, b)
		}
		alone := generate(a, sequenceLength)
		if len(seq) < len(alone) || !reflect.DeepEqual(seq[:len(alone)], alone) {
			rt.Fatalf("the sequence of seeds %d,%d does not start with seed %d's", a, b, a)
		}
		w := newWorld()
		for i, o := range seq {
			if err := possible(w, o); err != "" {
				rt.Fatalf("step %d (%s): %s", i+1, o, err)
			}
			w.apply(o)
			w.tick()
		}
	})
}

// TestTheContractPageSaysWhatTheFixedSeedsCover: a grade runs the fixed
// seeds only; docs/contract.md lists the situations they reach and those
// they do not, and this keeps the list measured, not claimed.
func TestTheContractPageSaysWhatTheFixedSeedsCover(t *testing.T) {
	covered, missed := coverage(generateSegments(fixedSeeds(), segmentLengths(len(fixedSeeds()))))
	data, err := os.ReadFile(contractDoc)
	if err != nil {
		t.Fatal(err)
	}
	text := section(t, string(data), "What the sequences cover")
	for _, s := range covered {
		if !strings.Contains(text, "- covered: "+s+"\n") {
			t.Errorf("docs/contract.md does not list %q as covered by the fixed seeds", s)
		}
	}
	for _, s := range missed {
		if !strings.Contains(text, "- not covered: "+s+"\n") {
			t.Errorf("docs/contract.md does not list %q as not covered by the fixed seeds", s)
		}
	}
	if n := strings.Count(text, "- covered: ") + strings.Count(text, "- not covered: "); n != len(situations) {
		t.Errorf("docs/contract.md lists %d situations; the model knows %d", n, len(situations))
	}
}

// TestCoverageCanMissASituation: the coverage is measured, not assumed: a
// sequence of the setup alone covers none, and each situation is reached by
// the sequence built for it.
func TestCoverageCanMissASituation(t *testing.T) {
	if covered, _ := coverage(generate(1, 0)); len(covered) > 0 {
		t.Errorf("the setup alone covers %v", covered)
	}
	spec := func(svc string) routeSpec { return routeSpec{"x.example.com", "/", svc, 8080} }
	setup := generate(1, 0)
	for _, c := range []struct {
		situation string
		ops       []op
	}{
		{"two routes on one Service", []op{{Kind: opEditRoute, Route: "rb", Field: "service", Spec: spec("svc-a")}}},
		{"a NACK after an ACK", []op{{Kind: opNACKOn, Route: "ra"}}},
		{"a restart during a proxy outage", []op{{Kind: opProxyDown}, {Kind: opRestart}}},
		{"a deletion while the controller is stopped", []op{{Kind: opDeleteRouteDown, Route: "ra"}}},
	} {
		got := covers(append(append([]op{}, setup...), c.ops...))
		if !got[c.situation] {
			t.Errorf("%v does not cover %q (covers %v)", c.ops, c.situation, got)
		}
	}
}

// TestADeletionCountsOnlyOfARouteTheProxyHeld: what a run's banner says it
// covers (coverage) claims a deletion situation only when the deletion had
// an effect to bring about: the proxy held the route, so a withdraw is due.
// rc names svc-c, which the setup never creates: the proxy never holds it.
func TestADeletionCountsOnlyOfARouteTheProxyHeld(t *testing.T) {
	setup := generate(1, 0)
	stopped, outage := "a deletion while the controller is stopped", "a deletion during a proxy outage"
	for _, c := range []struct {
		name string
		ops  []op
		want []string // the deletion situations covered
	}{
		{"stopped, held", []op{{Kind: opDeleteRouteDown, Route: "ra"}}, []string{stopped}},
		{"stopped, never held", []op{{Kind: opDeleteRouteDown, Route: "rc"}}, nil},
		{"stopped in an outage, held", []op{{Kind: opProxyDown}, {Kind: opDeleteRouteDown, Route: "rb"}, {Kind: opProxyUp}}, []string{outage, stopped}},
		{"stopped in an outage, never held", []op{{Kind: opProxyDown}, {Kind: opDeleteRouteDown, Route: "rc"}, {Kind: opProxyUp}}, nil},
		{"watched in an outage, held", []op{{Kind: opProxyDown}, {Kind: opDeleteRoute, Route: "ra"}, {Kind: opProxyUp}}, []string{outage}},
		{"watched in an outage, never held", []op{{Kind: opProxyDown}, {Kind: opDeleteRoute, Route: "rc"}, {Kind: opProxyUp}}, nil},
		{"stopped, refused since its creation", []op{{Kind: opNACKOn, Route: "rc"}, {Kind: opCreateService, Svc: "svc-c"},
			{Kind: opDeleteRouteDown, Route: "rc"}, {Kind: opNACKOff, Route: "rc"}}, nil},
		{"stopped, held once its Service came", []op{{Kind: opCreateService, Svc: "svc-c"}, {Kind: opDeleteRouteDown, Route: "rc"}}, []string{stopped}},
	} {
		covered, _ := coverage(append(slices.Clone(setup), c.ops...))
		var got []string
		for _, s := range covered {
			if s == stopped || s == outage {
				got = append(got, s)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: the banner claims %q, want %q", c.name, got, c.want)
		}
	}
}

// TestTheLearnersPlannedSequenceReachesEverySituation: make check's budget
// is one short sequence per run, planned from a fresh seed: whatever the
// seed, it reaches every situation of the contract's list and every kind of
// change, each change possible, no outage or NACK longer than the drawn
// sequences allow, ending healthy, the same for the same seed, and shorter
// than the grade's fixed sequence.
func TestTheLearnersPlannedSequenceReachesEverySituation(t *testing.T) {
	full := len(generateSegments(fixedSeeds(), segmentLengths(len(fixedSeeds()))))
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Int64Range(1, 1<<40).Draw(rt, "seed")
		seq := generateDirected([]int64{seed})
		if !reflect.DeepEqual(seq, generateDirected([]int64{seed})) {
			rt.Fatalf("seed %d gave two different sequences", seed)
		}
		if _, missed := coverage(seq); len(missed) > 0 {
			rt.Fatalf("seed %d misses %v:\n%v", seed, missed, seq)
		}
		seen := map[opKind]bool{}
		w := newWorld()
		for i, o := range seq {
			if err := possible(w, o); err != "" {
				rt.Fatalf("step %d (%s): %s", i+1, o, err)
			}
			if f := w.forced(); f != nil && f.Kind != o.Kind {
				rt.Fatalf("step %d (%s): the outage had to end first (%s)", i+1, o, f)
			}
			seen[o.Kind] = true
			w.apply(o)
			w.tick()
		}
		for _, k := range allOps {
			if !seen[k] {
				rt.Fatalf("seed %d: no %s in %v", seed, k, seq)
			}
		}
		if w.Down || len(w.NACK) > 0 {
			rt.Fatalf("seed %d: the sequence ends with the proxy down (%v) or refusing %v", seed, w.Down, w.NACK)
		}
		if len(seq) >= full {
			rt.Fatalf("seed %d: %d steps, not shorter than the grade's %d", seed, len(seq), full)
		}
		more := rapid.Int64Range(1, 1<<40).Draw(rt, "more")
		longer := generateDirected([]int64{seed, more})
		if len(longer) <= len(seq) || !reflect.DeepEqual(longer[:len(seq)], seq) {
			rt.Fatalf("seeds %d,%d do not extend seed %d's sequence", seed, more, seed)
		}
	})
}

// TestTheLearnersSetupIsOneStep: the learner's budget makes the setup at
// once and checks it once; the grade checks after every change. Either way
// the steps are the sequence's changes, in order.
func TestTheLearnersSetupIsOneStep(t *testing.T) {
	seq := generateDirected([]int64{1})
	setup := len(generate(0, 0))
	for _, c := range []struct {
		budget checks.Budget
		steps  int
	}{{checks.BudgetLearner, len(seq) - setup + 1}, {checks.BudgetFull, len(seq)}} {
		steps := stepsOf(c.budget, seq)
		if len(steps) != c.steps {
			t.Errorf("%s budget: %d steps, want %d", c.budget, len(steps), c.steps)
		}
		var flat []op
		for _, s := range steps {
			flat = append(flat, s...)
		}
		if !reflect.DeepEqual(flat, seq) {
			t.Errorf("%s budget: the steps are not the sequence's changes in order", c.budget)
		}
	}
}

// TestTheGradedSeedsCoverEverySituation: a grade runs the fixed seeds only
// (make grade, the workflows), so they must reach every situation of the
// contract's list; changing a seed, the generator or the model must keep it so.
func TestTheGradedSeedsCoverEverySituation(t *testing.T) {
	seeds := fixedSeeds()
	seq := generateSegments(seeds, segmentLengths(len(seeds)))
	if _, missed := coverage(seq); len(missed) > 0 {
		t.Errorf("the graded seeds %v (%d steps) miss %q: choose a seed (or add a short segment's seed) that reaches them", seeds, len(seq), missed)
	}
	if got := Step().Seeds; !slices.Equal(got, seeds) {
		t.Errorf("the descriptor's Seeds are %v, not the fixed seeds %v", got, seeds)
	}
}

// gradedPlanDigest is the SHA-256 of the grade's sequence plan (every step's
// changes, one step a line, as a failure prints them). A grade of the same
// submission must give the same results, run after run and on any machine:
// the plan is a pure function of the fixed seeds, and this pins it. A change
// of the generator, the model or the seeds that changes it changes every
// submission's grade: update the digest only on purpose, and say so.
const gradedPlanDigest = "ecd23d48a8806bc2d5754eccab282bd2e6a0b14c13821a7436e39e37c9581c3f"

// TestTheGradesPlanIsTheSameEveryTime: the fixed seeds make the same steps
// every time (two plans compared step by step, map order and all) and the
// same steps as when the digest was taken.
func TestTheGradesPlanIsTheSameEveryTime(t *testing.T) {
	plan := func() [][]op {
		return stepsOf(checks.BudgetFull, sequenceOf(checks.BudgetFull, Step().Seeds))
	}
	first := plan()
	for range 20 {
		if again := plan(); !reflect.DeepEqual(first, again) {
			t.Fatalf("the grade's plan differs between two runs:\n%v\n%v", first, again)
		}
	}
	var b strings.Builder
	for _, step := range first {
		b.WriteString(stepText(step))
		b.WriteByte('\n')
	}
	if got := fmt.Sprintf("%x", sha256.Sum256([]byte(b.String()))); got != gradedPlanDigest {
		t.Errorf("the grade's plan (seeds %v) has digest %s, not %s: every submission's grade may change. "+
			"If that is meant, set gradedPlanDigest to it. The plan:\n%s", Step().Seeds, got, gradedPlanDigest, b.String())
	}
}
