package step01

import (
	"context"
	"strings"

	"github.com/10xdev/gw10/harness/checks"
)

// statusWritesCheck proves ST-ONE-WRITE where the cluster cannot: two status
// writes of one pass carrying the same generation look like two passes from
// outside. It runs the second test of read-error's probe (one source, so the
// runner compiles the probe once per run for both checks).
var statusWritesCheck = checks.Check{
	ID:      "status-writes",
	Title:   "each Reconcile call writes the status at most once, not at all when nothing changed, and returns the error of a status write that failed",
	SeedRef: "Acceptance 1: status conditions stay accurate (the card's defect 3: two status writes, errors dropped)",
	Points:  10,
	Clauses: []string{ClauseOneWrite, ClauseNoChurn},
	Probe:   true,
	Hint:    "every Reconcile call writes the route's status at most once and not at all when nothing changed; a status write that fails makes Reconcile fail (ST-ONE-WRITE)",
	LongHint: `Two status writes in one pass show readers a half-written status in between,
cost the API server twice, and the second can fail after the first landed. From
the cluster, two writes of one pass that carry the same generation look like two
passes, so this check does not use the cluster: it compiles a test of its own
beside your package (nothing is written to your files), builds an
EdgeRouteReconciler whose exported client fields hold a fake client that counts
every write of an EdgeRoute's status (an update or a patch of the status
subresource), and calls Reconcile in each situation: Service missing, Service
present with the push ACKed, the push NACKed, after a spec edit, after the Service
was deleted. Each call may write the status once; the call after it, with nothing
to change, writes nothing. Then every status write fails (a conflict, then an
HTTP 500): a call whose status write failed must return an error (a conflict may
be answered by a requeue instead), or the queue never retries and the status stays
stale. Keep the type, its exported Client and Programmer fields (or any exported
client.Reader / dataplane.DataPlane fields) and Reconcile's signature.`,
	Run: func(ctx context.Context, t *checks.T) {
		if lines := runProbe(ctx, t, "^TestGW10StatusWrites$", "status writes", "ST-ONE-WRITE", "ST-NO-CHURN"); lines != nil {
			t.Fatalf("the grader's test called Reconcile with a client that counts and can fail status writes; what it saw "+
				"breaks the contract's ST-ONE-WRITE (at most one status write per pass, a failed write's error returned):\n%s",
				strings.Join(lines, "\n"))
		}
	},
}
