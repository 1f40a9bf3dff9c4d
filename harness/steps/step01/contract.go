package step01

import "github.com/10xdev/gw10/harness/step"

// The clauses of step 01's status contract (docs/contract.md states each in
// full, with the situation table and the legitimate designs). Checks name
// them in their Clauses; reports, the kill table and `make hint` show them.
const (
	ClauseMissing    = "S-MISSING"
	ClauseAcked      = "S-ACKED"
	ClauseNacked     = "S-NACKED"
	ClauseDeleted    = "S-DELETED"
	ClauseDrift      = "S-DRIFT"
	ClauseReadErr    = "S-READERR"
	ClauseObsGen     = "ST-OBSGEN"
	ClauseAfterAck   = "ST-AFTER-ACK"
	ClauseOneWrite   = "ST-ONE-WRITE"
	ClauseNoChurn    = "ST-NO-CHURN"
	ClauseMessage    = "ST-MESSAGE"
	ClauseSubres     = "ST-SUBRESOURCE"
	ClauseNoPoll     = "Q-NO-POLL"
	ClauseFanout     = "Q-FANOUT"
	ClauseCurrent    = "Q-CURRENT"
	ClauseNoFlap     = "Q-NO-FLAP"
	ClauseQuiet      = "Q-QUIET"
	ClauseBackoff    = "Q-BACKOFF"
	ClauseRestart    = "Q-RESTART"
	ClauseOneAtATime = "Q-ONE-AT-A-TIME"
	ClauseSchema     = "A-SCHEMA"
	ClauseRBAC       = "A-RBAC"
)

// Contract is step 01's contract, clause by clause.
func Contract() []step.Clause {
	return []step.Clause{
		{ID: ClauseMissing, Rule: "target Service missing: Accepted=False/ServiceNotFound, Programmed=False (never True), route withdrawn (a withdraw refused or never answered, or a refused read of the route, withdrew nothing: tried again until one is answered)"},
		{ID: ClauseAcked, Rule: "Service exists, push ACKed: Accepted=True/Valid, Programmed=True/Synced, the route present with the current spec"},
		{ID: ClauseNacked, Rule: "Service exists, push NACKed: Accepted=True/Valid, Programmed=False/PushFailed with the NACK's reason; the data plane as the proxy left it (no withdraw)"},
		{ID: ClauseDeleted, Rule: "EdgeRoute deleted: its route withdrawn (a refused withdraw tried again until one is answered) and the object gone (a finalizer removed after the withdraw), also when deleted while the controller was down, also when the proxy cannot be listed at first, and also while another controller's finalizer keeps the object (never pushed again nor reported Programmed=True meanwhile)"},
		{ID: ClauseDrift, Rule: "the proxy loses routes while the controller runs: every route it should hold pushed again within the drift period, a route whose EdgeRoute is gone withdrawn, with no event from the cluster"},
		{ID: ClauseReadErr, Rule: "Service read fails (not NotFound): status and data plane unchanged, the error returned"},
		{ID: ClauseObsGen, Rule: "every condition carries observedGeneration = the generation it describes"},
		{ID: ClauseAfterAck, Rule: "Programmed=True is written only when the proxy's latest answer for the route's current generation is an ACK"},
		{ID: ClauseOneWrite, Rule: "at most one status write per reconcile pass: every write is a whole status, and a failed write's error is returned"},
		{ID: ClauseMessage, Rule: "a condition's message is a function of what was observed: a refusal's reason (never the proxy's whole answer, which may carry a request id), a fixed text when no answer came (never a transport error's text); a refusal repeated writes no status"},
		{ID: ClauseNoChurn, Rule: "no status write when nothing changed; lastTransitionTime moves only when a condition's status changes"},
		{ID: ClauseSubres, Rule: "status is written through the status subresource"},
		{ID: ClauseNoPoll, Rule: "a route waiting for its Service costs nothing: no reconcile, push, withdraw, write or work on a timer while nothing changes"},
		{ID: ClauseFanout, Rule: "a Service created or deleted reaches every EdgeRoute in its namespace that names it"},
		{ID: ClauseCurrent, Rule: "every push carries the current spec; a Service that comes back gets its route pushed again; a NACK after an ACK turns Programmed False"},
		{ID: ClauseNoFlap, Rule: "a route that should stay programmed is never withdrawn, not even for a moment"},
		{ID: ClauseQuiet, Rule: "a converged controller writes nothing, pushes nothing and reconciles nothing"},
		{ID: ClauseBackoff, Rule: "a refused push is retried with backoff, never in a tight loop"},
		{ID: ClauseRestart, Rule: "a restarted controller reconverges from scratch, with no events: (1) the EdgeRoutes deleted while it was down are withdrawn; (2) a failed listing of the proxy is retried with backoff, never taken for an empty table; (3) an EdgeRoute created again ends routed, even while the old withdraw is unanswered or lands late (a withdraw names the uid it means); (4) a route it cannot judge on a shared proxy (a namespace it does not watch) is left alone, and keeps no orphan from being withdrawn"},
		{ID: ClauseOneAtATime, Rule: "one request of a route at a time: a push or withdraw is sent only once the proxy has answered the last one sent for that route, or the controller has given it up (closed its connection)"},
		{ID: ClauseSchema, Rule: "the CRD rejects invalid specs with a readable message, has the status subresource and the condition columns"},
		{ID: ClauseRBAC, Rule: "the controller's generated role grants what it reads and writes"},
	}
}
