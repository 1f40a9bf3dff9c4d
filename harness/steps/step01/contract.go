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
		{ID: ClauseMissing, Plain: "No Service, no route: the route leaves the proxy, and the status says why.", Rule: "target Service missing: Accepted=False/ServiceNotFound, Programmed=False (never True), route withdrawn (a withdraw refused or never answered, or a refused read of the route, withdrew nothing: tried again until one is answered)"},
		{ID: ClauseAcked, Plain: "The Service is there and the proxy took the route: the status says it is programmed.", Rule: "Service exists, push ACKed: Accepted=True/Valid, Programmed=True/Synced, the route present with the current spec"},
		{ID: ClauseNacked, Plain: "The proxy refused the route: the status says so, with the proxy's reason, and nothing is withdrawn.", Rule: "Service exists, push NACKed: Accepted=True/Valid, Programmed=False/PushFailed with the NACK's reason; the data plane as the proxy left it (no withdraw)"},
		{ID: ClauseDeleted, Plain: "A deleted EdgeRoute's route leaves the proxy, even when it was deleted while the controller was down.", Rule: "EdgeRoute deleted: its route withdrawn (a refused withdraw tried again until one is answered) and the object gone (a finalizer removed after the withdraw), also when deleted while the controller was down, also when the proxy cannot be listed at first, and also while another controller's finalizer keeps the object (never pushed again nor reported Programmed=True meanwhile)"},
		{ID: ClauseDrift, Plain: "When the proxy loses routes on its own, the controller notices within a drift period and puts them right.", Rule: "the proxy loses routes while the controller runs: every route it should hold pushed again within the drift period, a route whose EdgeRoute is gone withdrawn, with no event from the cluster"},
		{ID: ClauseReadErr, Plain: "When the controller cannot tell whether the Service exists, it changes nothing and tries again.", Rule: "Service read fails (not NotFound): status and data plane unchanged, the error returned"},
		{ID: ClauseObsGen, Plain: "Each condition says which generation of the spec it describes.", Rule: "every condition carries observedGeneration = the generation it describes"},
		{ID: ClauseAfterAck, Plain: "Programmed=True only after the proxy took this very spec.", Rule: "Programmed=True is written only when the proxy's latest answer for the route's current generation is an ACK"},
		{ID: ClauseOneWrite, Plain: "At most one status write per pass, and a failed write is an error.", Rule: "at most one status write per reconcile pass: every write is a whole status, and a failed write's error is returned"},
		{ID: ClauseMessage, Plain: "A message says what happened in words that stay the same while it does: never an error's text.", Rule: "a condition's message is a function of what was observed: a refusal's reason (never the proxy's whole answer, which may carry a request id), a fixed text when no answer came (never a transport error's text); a refusal repeated writes no status"},
		{ID: ClauseNoChurn, Plain: "The status is written only when something in it changed.", Rule: "no status write when nothing changed; lastTransitionTime moves only when a condition's status changes"},
		{ID: ClauseSubres, Plain: "The status is written through the status subresource.", Rule: "status is written through the status subresource"},
		{ID: ClauseNoPoll, Plain: "A route waiting for its Service costs nothing until the Service comes.", Rule: "a route waiting for its Service costs nothing: no reconcile, push, withdraw, write or work on a timer while nothing changes"},
		{ID: ClauseFanout, Plain: "A Service created or deleted wakes every EdgeRoute that names it.", Rule: "a Service created or deleted reaches every EdgeRoute in its namespace that names it"},
		{ID: ClauseCurrent, Plain: "The proxy ends up with the current spec, whatever happened on the way.", Rule: "every push carries the current spec; a Service that comes back gets its route pushed again; a NACK after an ACK turns Programmed False"},
		{ID: ClauseNoFlap, Plain: "A route that should stay programmed is never withdrawn, not even for a moment.", Rule: "a route that should stay programmed is never withdrawn, not even for a moment"},
		{ID: ClauseQuiet, Plain: "Once everything matches, the controller does nothing at all.", Rule: "a converged controller writes nothing, pushes nothing and reconciles nothing"},
		{ID: ClauseBackoff, Plain: "Retries after a refusal slow down; they never spin.", Rule: "a refused push is retried with backoff, never in a tight loop"},
		{ID: ClauseRestart, Plain: "A restarted controller puts everything right from what it finds, with no events to help it.", Rule: "a restarted controller reconverges from scratch, with no events: (1) the EdgeRoutes deleted while it was down are withdrawn; (2) a failed listing of the proxy is retried with backoff, never taken for an empty table; (3) an EdgeRoute created again ends routed, even while the old withdraw is unanswered or lands late (a withdraw names the uid it means); (4) a route it cannot judge on a shared proxy (a namespace it does not watch) is left alone, and keeps no orphan from being withdrawn"},
		{ID: ClauseOneAtATime, Plain: "At most one request per route is waiting on the proxy at a time.", Rule: "one request of a route at a time: a push or withdraw is sent only once the proxy has answered the last one sent for that route, or the controller has given it up (closed its connection)"},
		{ID: ClauseSchema, Plain: "The CRD itself rejects a bad spec, with a message that names the field.", Rule: "the CRD rejects invalid specs with a readable message, has the status subresource and the condition columns"},
		{ID: ClauseRBAC, Plain: "The controller's role lets it read and write what it needs.", Rule: "the controller's generated role grants what it reads and writes"},
	}
}
