package step01

import "github.com/10xdev/gw10/harness/step"

// questionEvidence says, for each of the chapter's questions that links no written
// answer (docs/step01-answers/), where the learner finds the evidence that
// answers it: make hint ID=<question> prints it. A question with a written
// answer needs none; TestEveryUnansweredQuestionSaysWhereItsEvidenceIs keeps
// this list and the chapter's questions in step.
func questionEvidence() []step.QuestionEvidence {
	const (
		timelines = "the two timelines of the chapter's second part (docs/step01-further.md#two-timelines) and your own reports/timeline.html after make check; how to read one: docs/harness.md#timeline"
		bench     = "make bench STEP=step01 ROUTES=20,100 once your controller passes (docs/bench.md#what-each-figure-is says what each figure counts)"
	)
	return []step.QuestionEvidence{
		{Question: "q-drift-source", Where: "internal/controller/dataplane_source.go's TODO, make proxy's log while your controller runs (a listing every drift period: make run ARGS=\"--dataplane-url=http://127.0.0.1:9901 --dataplane-drift-period=5s\" lists every 5 s, where the default is 30 s), and a table emptied by hand: restart make proxy and watch your routes come back (docs/contract.md#situations-what-must-hold-once-the-world-is-still, S-DRIFT)"},
		{Question: "q-drift-enqueue", Where: "the chapter's picture of the work queue (docs/step01.md#how-controller-runtime-calls-reconcile: one key never in two workers at once), your Reconcile beside your look's code (what each decides from: the proxy's table, and what your own status says of each route), the status contract's row for a missing Service (docs/step01.md#the-status-contract, S-MISSING), and, for a route your look skips because its push was refused, the rate limiter's longest wait (docs/controller-runtime.md#the-parts): how long after a long proxy outage ends would that route wait? No check waits that long and the contract sets no bound; a cap of your own on the limiter (docs/step01-further.md#the-rate-limiter-in-tutorials) is a choice, not a rule"},
		{Question: "q-restart-predict", Where: "task 3 itself: start make run again with kubectl get er -w open in another shell, and read the controller's log from its start"},
		{Question: "q-delete-predict", Where: "task 3 itself: once the controller runs again, curl -s http://127.0.0.1:9901/v1/routes, and read both logs: make proxy's (each push and withdraw it answers) and your controller's (each one it sends)"},
		{Question: "q-idempotent", Where: "the calls of Reconcile you did not ask for: task 4's log in docs/step01-further.md (two pushes for one spec change), and what check quiescent catches (docs/step01-checks.md#check-quiescent)"},
		{Question: "q-status-after-push", Where: "what checks push-failure and self-heal watch for (docs/step01-checks.md#check-push-failure, #check-self-heal); task 5 in docs/step01-further.md makes the crash by hand"},
		{Question: "q-watch-service", Where: "which object changes when a Pod behind a Service becomes ready: go doc k8s.io/api/discovery/v1.EndpointSlice and go doc k8s.io/api/core/v1.ServiceSpec (in step01/); then what your Service watch is woken by"},
		{Question: "q-twice", Where: "task 4's run: your controller's log (a line per push) and kubectl get er -w around the one spec change (the status write between the two pushes)"},
		{Question: "q-wipe", Where: "task 4's run: the kubectl get er -w of task 2 and your controller's log, just after the wipe"},
		{Question: "q-wipe-predicate", Where: "task 4's second run, with the predicate: your controller's log and kubectl get er -w after the spec change and after the wipe; go doc sigs.k8s.io/controller-runtime/pkg/predicate.TypedGenerationChangedPredicate"},
		{Question: "q-predicate-ship", Where: "both runs of task 4 side by side, docs/contract.md (does a clause ask the controller to repair a status someone else wrote?) and its designs that must pass (docs/contract.md#designs-that-must-pass)"},
		{Question: "q-crash-state", Where: "task 5's last two commands: the proxy's table beside the EdgeRoute's metadata.generation and each condition's observedGeneration"},
		{Question: "q-crash-restart", Where: "task 5, once make run runs again: your controller's log, curl of the proxy's table, and kubectl get er shop-api -o yaml"},
		{Question: "q-crash-reversed", Where: "what checks push-failure and restart-reconverge catch (docs/step01-checks.md#check-push-failure, #check-restart-reconverge)"},
		{Question: "q-timeline-between", Where: timelines},
		{Question: "q-timeline-which", Where: timelines},
		{Question: "q-timeline-cost", Where: timelines + "; for your own controller's cost per route, " + bench},
		{Question: "q-timeline-early", Where: timelines + ", and what check self-heal watches before it creates the Service (docs/step01-checks.md#check-self-heal)"},
		{Question: "q-cost-reads", Where: "your Reconcile's reads and writes beside the page on the informer cache (docs/controller-runtime.md#the-parts); the API requests per route of " + bench},
		{Question: "q-invisible-write", Where: "what check quiescent watches, and what it cannot see (docs/step01-checks.md#check-quiescent); what check status-writes counts (#check-status-writes); and the API requests per route of " + bench},
		{Question: "q-cost-fanout", Where: "your SetupWithManager and the function that maps a Service to EdgeRoutes: what it lists, and in which namespace"},
		{Question: "q-cost-restart", Where: "the converged restart's pushes and status writes per route in " + bench + ", and what check restart-reconverge does to the proxy (docs/step01-checks.md#check-restart-reconverge)"},
		{Question: "q-cost-cold", Where: "the cold start's reconciles and pushes per route in " + bench + ", and task 4's log (docs/step01-further.md) for one route by hand"},
		{Question: "q-cost-sweep", Where: "your start-up sweep's code and log line, and make proxy's log when the controller starts (each listing, push and withdraw it answers)"},
		{Question: "q-cost-workers", Where: "the work queue on the parts' page (docs/controller-runtime.md#the-parts) and go doc sigs.k8s.io/controller-runtime/pkg/controller.TypedOptions.MaxConcurrentReconciles; the limit's workers column of " + bench},
	}
}
