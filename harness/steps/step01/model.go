package step01

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
)

// The sequences check drives the world through generated changes and, after
// each, asserts the whole status contract against this model of what a
// correct controller converges to. The model is pure: generating a sequence
// from a seed and predicting each step's outcome need no cluster, so both
// are unit-tested (model_test.go).

// opKind is one kind of change to the world.
type opKind string

const (
	opCreateService opKind = "create-service"
	opDeleteService opKind = "delete-service"
	opCreateRoute   opKind = "create-route"
	opEditRoute     opKind = "edit-route"
	opDeleteRoute   opKind = "delete-route"
	opNACKOn        opKind = "nack-on"
	opNACKOff       opKind = "nack-off"
	opProxyDown     opKind = "proxy-down"
	opProxyUp       opKind = "proxy-up"
	opRestart       opKind = "restart"
	// opDeleteRouteDown deletes a route while the controller is stopped: no
	// event reaches it, the restarted controller must find the deletion itself.
	opDeleteRouteDown opKind = "delete-route-while-down"
	// opProxyLoses restarts the proxy from an old table while the
	// controller runs: every route lost, one of no EdgeRoute held
	// (staleRoute), the first listing refused. No event reaches the
	// controller, which must notice the data plane's drift itself (S-DRIFT).
	opProxyLoses opKind = "proxy-loses-table"
)

// drawnOps are the kinds a segment draws from its seed. opProxyLoses is not
// drawn: each segment gets one, placed without the seed (lossAt), so adding
// it kept every earlier sequence's draws as they were, one step longer.
var drawnOps = []opKind{opCreateService, opDeleteService, opCreateRoute, opEditRoute, opDeleteRoute,
	opNACKOn, opNACKOff, opProxyDown, opProxyUp, opRestart, opDeleteRouteDown}

// allOps are the kinds every generated sequence contains at least once.
var allOps = append(slices.Clone(drawnOps), opProxyLoses)

// Names of the world's routes and services.
var (
	seqRoutes   = []string{"ra", "rb", "rc"}
	seqServices = []string{"svc-a", "svc-b", "svc-c"}
)

// routeSpec is an EdgeRoute's spec in the model.
type routeSpec struct {
	Hostname, Prefix, Service string
	Port                      int64
}

// op is one step of a sequence.
type op struct {
	Kind  opKind
	Route string    // route ops, NACKs
	Svc   string    // service ops
	Spec  routeSpec // create-route: the spec; edit-route: the new spec
	Field string    // edit-route: the field changed
	Clear bool      // restart: the proxy loses its table too
}

func (o op) String() string {
	switch o.Kind {
	case opCreateService:
		return "create Service " + o.Svc
	case opDeleteService:
		return "delete Service " + o.Svc
	case opCreateRoute:
		return fmt.Sprintf("create EdgeRoute %s -> %s:%d (%s%s)", o.Route, o.Spec.Service, o.Spec.Port, o.Spec.Hostname, o.Spec.Prefix)
	case opEditRoute:
		return fmt.Sprintf("edit EdgeRoute %s: %s = %s", o.Route, o.Field, fieldValue(o.Spec, o.Field))
	case opDeleteRoute:
		return "delete EdgeRoute " + o.Route
	case opDeleteRouteDown:
		return "stop the controller, delete EdgeRoute " + o.Route + " (the proxy keeps its table), start the controller"
	case opNACKOn:
		return "the proxy starts refusing " + o.Route
	case opNACKOff:
		return "the proxy accepts " + o.Route + " again"
	case opProxyDown:
		return "the proxy becomes unreachable"
	case opProxyUp:
		return "the proxy is reachable again"
	case opProxyLoses:
		return "the proxy restarts from an old table while the controller runs (every route lost, one of no EdgeRoute held, the first listing refused)"
	case opRestart:
		if o.Clear {
			return "restart the controller, and the proxy loses its table"
		}
		return "restart the controller"
	}
	return string(o.Kind)
}

func fieldValue(s routeSpec, field string) string {
	switch field {
	case "hostname":
		return s.Hostname
	case "prefix":
		return s.Prefix
	case "service":
		return s.Service
	default:
		return fmt.Sprint(s.Port)
	}
}

// outcome is what a route's last push came to, as a correct controller saw it.
type outcome int

const (
	notPushed outcome = iota // never pushed, or withdrawn
	acked
	refused
)

// modelRoute is one EdgeRoute of the model.
type modelRoute struct {
	Exists  bool
	Spec    routeSpec
	Outcome outcome
}

// world is the model's state.
type world struct {
	Services map[string]bool
	Routes   map[string]*modelRoute
	NACK     map[string]bool
	Down     bool
	// downFor and nackFor count the steps an outage or a NACK has lasted:
	// the generator ends them within maxOutage steps, so that no retry's
	// backoff outgrows the wait.
	downFor int
	nackFor map[string]int
}

// maxOutage is the most steps a proxy outage or a NACK lasts.
const maxOutage = 2

func newWorld() *world {
	w := &world{Services: map[string]bool{}, Routes: map[string]*modelRoute{}, NACK: map[string]bool{}, nackFor: map[string]int{}}
	for _, r := range seqRoutes {
		w.Routes[r] = &modelRoute{}
	}
	return w
}

// clone copies the world.
func (w *world) clone() *world {
	c := newWorld()
	for k, v := range w.Services {
		c.Services[k] = v
	}
	for k, v := range w.Routes {
		cp := *v
		c.Routes[k] = &cp
	}
	for k, v := range w.NACK {
		c.NACK[k] = v
	}
	for k, v := range w.nackFor {
		c.nackFor[k] = v
	}
	c.Down, c.downFor = w.Down, w.downFor
	return c
}

// pushOutcome is what a push of route would get from the proxy now.
func (w *world) pushOutcome(route string) outcome {
	if w.Down || w.NACK[route] {
		return refused
	}
	return acked
}

// apply changes the world as op does; the routes it triggers (those a
// correct controller reconciles because of it) are pushed or withdrawn now.
func (w *world) apply(o op) {
	var triggered []string
	switch o.Kind {
	case opCreateService, opDeleteService:
		w.Services[o.Svc] = o.Kind == opCreateService
		for _, name := range seqRoutes {
			if r := w.Routes[name]; r.Exists && r.Spec.Service == o.Svc {
				triggered = append(triggered, name)
			}
		}
	case opCreateRoute:
		w.Routes[o.Route] = &modelRoute{Exists: true, Spec: o.Spec}
		triggered = []string{o.Route}
	case opEditRoute:
		w.Routes[o.Route].Spec = o.Spec
		triggered = []string{o.Route}
	case opDeleteRoute:
		w.Routes[o.Route] = &modelRoute{}
		triggered = []string{o.Route}
	case opDeleteRouteDown:
		w.Routes[o.Route] = &modelRoute{}
		triggered = slices.Clone(seqRoutes) // a restart reconciles everything
	case opNACKOn:
		w.NACK[o.Route] = true
	case opNACKOff:
		delete(w.NACK, o.Route)
		delete(w.nackFor, o.Route)
	case opProxyDown:
		w.Down = true
	case opProxyUp:
		w.Down, w.downFor = false, 0
	case opRestart:
		triggered = slices.Clone(seqRoutes)
	case opProxyLoses:
		// The routes the proxy held: a correct controller notices they are
		// gone within its drift period and pushes them again.
		for _, name := range seqRoutes {
			if held(w, name) {
				triggered = append(triggered, name)
			}
		}
	}
	// A reconciled route is pushed (or withdrawn) now; a refused one keeps
	// being retried, so it follows the proxy as it is now.
	for _, name := range seqRoutes {
		r := w.Routes[name]
		if !r.Exists {
			continue
		}
		switch {
		case !w.Services[r.Spec.Service]:
			if slices.Contains(triggered, name) || r.Outcome == refused {
				r.Outcome = notPushed
			}
		case slices.Contains(triggered, name) || r.Outcome == refused || r.Outcome == notPushed:
			r.Outcome = w.pushOutcome(name)
		}
	}
}

// tick counts a step for the outages that last.
func (w *world) tick() {
	if w.Down {
		w.downFor++
	}
	for r := range w.NACK {
		w.nackFor[r]++
	}
}

// generate makes a sequence of about n changes after a fixed setup, from
// seed. Every kind of change appears at least once when n >= len(allOps); an
// outage and a NACK end within maxOutage steps; the sequence ends with the
// proxy reachable and no NACK, so its last state is fully programmed.
func generate(seed int64, n int) []op { return generateSegments([]int64{seed}, []int{n}) }

// generateSegments makes one sequence of several segments: the fixed setup,
// then for each seed in turn about lengths[i] changes drawn from it, each
// segment starting from the world the previous one left. One seed gives
// exactly generate's sequence; a list of seeds replays exactly, in order.
func generateSegments(seeds []int64, lengths []int) []op {
	w := newWorld()
	seq := []op{
		{Kind: opCreateService, Svc: "svc-a"},
		{Kind: opCreateService, Svc: "svc-b"},
		{Kind: opCreateRoute, Route: "ra", Spec: routeSpec{"ra.example.com", "/", "svc-a", 8080}},
		{Kind: opCreateRoute, Route: "rb", Spec: routeSpec{"rb.example.com", "/api", "svc-b", 8080}},
		{Kind: opCreateRoute, Route: "rc", Spec: routeSpec{"rc.example.com", "/", "svc-c", 8080}},
	}
	for _, o := range seq {
		w.apply(o)
	}
	for i, seed := range seeds {
		seq = append(seq, w.segment(seed, lengths[i])...)
	}
	return seq
}

// segment draws about n changes from seed, applying them to w.
func (w *world) segment(seed int64, n int) []op {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	var seq []op
	kinds := slices.Clone(drawnOps)
	for len(kinds) < n {
		kinds = append(kinds, drawnOps[rng.IntN(len(drawnOps))])
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	kinds = kinds[:max(n, 0)]
	// A planned kind that is not possible yet stays planned: pick makes
	// what it needs first, and a forced end of an outage comes in between.
	lost := false
	do := func(o op) {
		w.apply(o)
		w.tick()
		seq = append(seq, o)
	}
	for steps := 0; len(kinds) > 0 && steps < 3*n+len(drawnOps); steps++ {
		o := w.forced()
		if o == nil {
			o = w.pick(rng, kinds[0])
			if o.Kind == kinds[0] {
				kinds = kinds[1:]
			}
		}
		do(*o)
		if !lost && len(seq) >= n/2 && w.lossAt() {
			do(op{Kind: opProxyLoses})
			lost = true
		}
	}
	for o := w.forced(); w.Down || len(w.NACK) > 0; o = w.forced() {
		if o == nil {
			o = w.endOutages()
		}
		do(*o)
	}
	if !lost && n > 0 {
		do(op{Kind: opProxyLoses})
	}
	return seq
}

// lossAt: the proxy may lose its table now without changing what the
// sequence draws next. It is up and refuses nothing (so the pushes that
// repair the loss are ACKed, and no outage's count moves), and it holds a
// route (so the loss has an effect a controller must repair).
func (w *world) lossAt() bool {
	if w.Down || len(w.NACK) > 0 {
		return false
	}
	for _, name := range seqRoutes {
		if held(w, name) {
			return true
		}
	}
	return false
}

// situations are the moments of the contract a sequence should reach (the
// contract's "any sequence" clauses are only as good as the sequences that
// exercise them). covers says which of them seq reaches.
var situations = []string{
	"a Service deleted and created again under a route",
	"two routes on one Service",
	"a Service deleted under two routes",
	"a NACK after an ACK",
	"an edit during a NACK",
	"a Service deleted during a NACK",
	"a restart during a proxy outage",
	"a deletion during a proxy outage",
	"a deletion while the controller is stopped",
	"a table lost while the controller runs",
}

func covers(seq []op) map[string]bool {
	got := map[string]bool{}
	w := newWorld()
	// gone: Services deleted under an existing route since the controller
	// process started (a restart forgets whatever it remembered).
	gone := map[string]bool{}
	for _, o := range seq {
		on := routesOn(w)
		switch o.Kind {
		case opNACKOn:
			if r := w.Routes[o.Route]; r.Exists && r.Outcome == acked {
				got["a NACK after an ACK"] = true
			}
		case opEditRoute:
			// The NACK must matter: the route's Service exists before and
			// after the edit, so the edited spec is pushed and refused.
			if r := w.Routes[o.Route]; w.NACK[o.Route] && r.Exists && w.Services[r.Spec.Service] && w.Services[o.Spec.Service] {
				got["an edit during a NACK"] = true
			}
		case opDeleteService:
			if on[o.Svc] > 0 {
				gone[o.Svc] = true
			}
			if on[o.Svc] >= 2 {
				got["a Service deleted under two routes"] = true
			}
			for name, r := range w.Routes {
				if r.Exists && r.Spec.Service == o.Svc && w.NACK[name] {
					got["a Service deleted during a NACK"] = true
				}
			}
		case opCreateService:
			if gone[o.Svc] && on[o.Svc] > 0 {
				got["a Service deleted and created again under a route"] = true
			}
			delete(gone, o.Svc)
		case opRestart:
			clear(gone)
			if w.Down {
				got["a restart during a proxy outage"] = true
			}
		case opProxyLoses:
			if w.lossAt() {
				got["a table lost while the controller runs"] = true
			}
		case opDeleteRoute:
			if w.Down && held(w, o.Route) {
				got["a deletion during a proxy outage"] = true
			}
		case opDeleteRouteDown:
			clear(gone)
			if held(w, o.Route) {
				got["a deletion while the controller is stopped"] = true
				if w.Down {
					got["a deletion during a proxy outage"] = true
				}
			}
		}
		w.apply(o)
		w.tick()
		for _, n := range routesOn(w) {
			if n >= 2 {
				got["two routes on one Service"] = true
			}
		}
	}
	return got
}

// held: the proxy holds route, so deleting it has an effect a controller
// must bring about (a withdraw). The model knows it of an acknowledged
// route; a refused one may hold an older spec, which the model does not
// track, so it does not count. A deletion of a route the proxy never held
// asks for no withdraw, and reaches no deletion situation.
func held(w *world, route string) bool {
	r := w.Routes[route]
	return r.Exists && r.Outcome == acked
}

// routesOn counts the existing routes that name each Service.
func routesOn(w *world) map[string]int {
	n := map[string]int{}
	for _, r := range w.Routes {
		if r.Exists {
			n[r.Spec.Service]++
		}
	}
	return n
}

// coverage says, in the order of situations, what seq covers and misses.
func coverage(seq []op) (covered, missed []string) {
	got := covers(seq)
	for _, s := range situations {
		if got[s] {
			covered = append(covered, s)
		} else {
			missed = append(missed, s)
		}
	}
	return covered, missed
}

// forced is the change an outage that has lasted long enough demands.
func (w *world) forced() *op {
	if w.Down && w.downFor >= maxOutage {
		return &op{Kind: opProxyUp}
	}
	for _, r := range sortedKeys(w.nackFor) {
		if w.NACK[r] && w.nackFor[r] >= maxOutage {
			return &op{Kind: opNACKOff, Route: r}
		}
	}
	return nil
}

func (w *world) endOutages() *op {
	if w.Down {
		return &op{Kind: opProxyUp}
	}
	for _, r := range sortedKeys(w.NACK) {
		return &op{Kind: opNACKOff, Route: r}
	}
	return nil
}

// pick makes a change of kind k that is possible in the world, or the
// nearest possible one (creating what a deletion would need).
func (w *world) pick(rng *rand.Rand, k opKind) *op {
	var present, absent, live, dead []string
	for _, s := range seqServices {
		if w.Services[s] {
			present = append(present, s)
		} else {
			absent = append(absent, s)
		}
	}
	for _, r := range seqRoutes {
		if w.Routes[r].Exists {
			live = append(live, r)
		} else {
			dead = append(dead, r)
		}
	}
	one := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	switch {
	case k == opCreateService && len(absent) > 0:
		return &op{Kind: k, Svc: one(absent)}
	case k == opDeleteService && len(present) > 0:
		return &op{Kind: k, Svc: one(present)}
	case k == opCreateRoute && len(dead) > 0:
		r := one(dead)
		return &op{Kind: k, Route: r, Spec: routeSpec{r + ".example.com", "/", one(seqServices), 8080}}
	case k == opEditRoute && len(live) > 0:
		r := one(live)
		spec, field := w.Routes[r].Spec, []string{"hostname", "prefix", "service", "port"}[rng.IntN(4)]
		switch field {
		case "hostname":
			spec.Hostname = other(rng, spec.Hostname, []string{r + ".example.com", r + "-v2.example.com", "api." + r + ".example.com"})
		case "prefix":
			spec.Prefix = other(rng, spec.Prefix, []string{"/", "/api", "/v2"})
		case "service":
			spec.Service = other(rng, spec.Service, seqServices)
		default:
			spec.Port = []int64{8080, 9090, 443}[rng.IntN(3)]
			if spec.Port == w.Routes[r].Spec.Port {
				spec.Port++
			}
		}
		return &op{Kind: k, Route: r, Spec: spec, Field: field}
	case (k == opDeleteRoute || k == opDeleteRouteDown) && len(live) > 1:
		return &op{Kind: k, Route: one(live)}
	case k == opNACKOn:
		var candidates []string
		for _, r := range seqRoutes {
			if !w.NACK[r] {
				candidates = append(candidates, r)
			}
		}
		if len(candidates) > 0 {
			return &op{Kind: k, Route: one(candidates)}
		}
	case k == opNACKOff && len(w.NACK) > 0:
		return &op{Kind: k, Route: one(sortedKeys(w.NACK))}
	case k == opProxyDown && !w.Down:
		return &op{Kind: k}
	case k == opProxyUp && w.Down:
		return &op{Kind: k}
	case k == opRestart:
		return &op{Kind: k, Clear: rng.IntN(2) == 0}
	}
	// Not possible now: do what makes it possible next time.
	switch k {
	case opDeleteService:
		return w.pick(rng, opCreateService)
	case opCreateService:
		return w.pick(rng, opDeleteService)
	case opEditRoute, opDeleteRoute, opDeleteRouteDown:
		return w.pick(rng, opCreateRoute)
	case opCreateRoute:
		return w.pick(rng, opDeleteRoute)
	case opNACKOff:
		return w.pick(rng, opNACKOn)
	case opProxyUp:
		return &op{Kind: opProxyDown}
	case opProxyDown:
		return &op{Kind: opProxyUp}
	}
	return &op{Kind: opRestart}
}

func other(rng *rand.Rand, cur string, choices []string) string {
	var rest []string
	for _, c := range choices {
		if c != cur {
			rest = append(rest, c)
		}
	}
	return rest[rng.IntN(len(rest))]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// stayedProgrammed lists the routes that a correct controller keeps in the
// proxy across a step: ACKed before and after, and not touched by it in a
// way that takes them out. A withdraw of one of these is an outage.
func stayedProgrammed(before, after *world) []string {
	var out []string
	for _, name := range seqRoutes {
		b, a := before.Routes[name], after.Routes[name]
		if b.Exists && a.Exists && b.Outcome == acked && a.Outcome == acked &&
			before.Services[b.Spec.Service] && after.Services[a.Spec.Service] {
			out = append(out, name)
		}
	}
	return out
}
