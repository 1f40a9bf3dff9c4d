package step01

import (
	"math/rand/v2"
)

// The learner's budget (make check, make watch) runs, instead of the
// grade's long drawn sequences, one short sequence planned to reach every
// situation of the contract's list (situations) and every kind of change:
// a proxy outage and a NACK last one change each (maxOutage), so the plan
// needs two of each. The seed draws the plan's free choices — which route
// plays which part, the field edited, whether a restart loses the proxy's
// table, the order of the two outages, which route is deleted and what the
// new one names — so every seed gives another sequence, each reaching the
// whole list (a test proves it for any seed).

// generateDirected makes the learner budget's sequence: the fixed setup, the
// plan drawn from seeds[0], then a short drawn segment (freshLength) for each
// further seed. A list of seeds replays exactly, in order.
func generateDirected(seeds []int64) []op {
	seq := generate(0, 0) // the setup alone
	w := newWorld()
	for _, o := range seq {
		w.apply(o)
	}
	if len(seeds) == 0 {
		return seq
	}
	seq = append(seq, w.planned(seeds[0])...)
	for _, seed := range seeds[1:] {
		seq = append(seq, w.segment(seed, freshLength)...)
	}
	return seq
}

// planned applies to w, the world the setup left (ra and rb programmed on
// Services of their own, rc waiting for svc-c), the plan drawn from seed, and
// returns its changes. Each comment names the situations the change reaches.
func (w *world) planned(seed int64) []op {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x2545f4914f6cdd1d))
	x, y := "ra", "rb"
	if rng.IntN(2) == 0 {
		x, y = y, x
	}
	sy := w.Routes[y].Spec.Service
	var seg []op
	do := func(o op) {
		w.apply(o)
		w.tick()
		seg = append(seg, o)
	}
	edit := func(route, field string) op {
		spec := w.Routes[route].Spec
		switch field {
		case "hostname":
			spec.Hostname = other(rng, spec.Hostname, []string{route + ".example.com", route + "-v2.example.com", "api." + route + ".example.com"})
		case "prefix":
			spec.Prefix = other(rng, spec.Prefix, []string{"/", "/api", "/v2"})
		default:
			spec.Port = []int64{8080, 9090, 443}[rng.IntN(3)]
			if spec.Port == w.Routes[route].Spec.Port {
				spec.Port++
			}
		}
		return op{Kind: opEditRoute, Route: route, Spec: spec, Field: field}
	}

	moved := w.Routes[x].Spec
	moved.Service = sy
	do(op{Kind: opEditRoute, Route: x, Spec: moved, Field: "service"}) // two routes on one Service
	do(op{Kind: opNACKOn, Route: x})                                   // a NACK after an ACK
	do(op{Kind: opDeleteService, Svc: sy})                             // a Service deleted under two routes, during a NACK
	do(op{Kind: opNACKOff, Route: x})
	do(op{Kind: opCreateService, Svc: sy}) // a Service deleted and created again under a route
	do(op{Kind: opNACKOn, Route: y})
	do(edit(y, []string{"hostname", "prefix", "port"}[rng.IntN(3)])) // an edit during a NACK
	do(op{Kind: opNACKOff, Route: y})
	do(op{Kind: opProxyLoses}) // a table lost while the controller runs (x and y held)

	// Two outages: a restart in one, a deletion while the controller is
	// stopped in the other, in either order.
	// The route deleted while the controller is stopped is one the proxy
	// holds (x or y; rc waits for svc-c): a deletion reaches its situations
	// only if it asks for a withdraw.
	restart := op{Kind: opRestart, Clear: rng.IntN(2) == 0}                       // a restart during a proxy outage
	downDelete := op{Kind: opDeleteRouteDown, Route: []string{x, y}[rng.IntN(2)]} // a deletion while the controller is stopped, during an outage
	during := []op{restart, downDelete}
	if rng.IntN(2) == 0 {
		during[0], during[1] = during[1], during[0]
	}
	for _, o := range during {
		do(op{Kind: opProxyDown})
		do(o)
		do(op{Kind: opProxyUp})
	}

	// The kinds left: a route deleted (the controller watching) and one
	// created, naming any Service.
	var live, dead []string
	for _, r := range seqRoutes {
		if w.Routes[r].Exists {
			live = append(live, r)
		} else {
			dead = append(dead, r)
		}
	}
	gone := live[rng.IntN(len(live))]
	do(op{Kind: opDeleteRoute, Route: gone})
	back := append(dead, gone)[rng.IntN(len(dead)+1)]
	do(op{Kind: opCreateRoute, Route: back, Spec: routeSpec{back + ".example.com", "/", seqServices[rng.IntN(len(seqServices))], 8080}})
	return seg
}
