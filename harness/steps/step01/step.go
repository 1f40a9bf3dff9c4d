// Package step01 is step 01 of the workbook: a CRD and a level-triggered
// reconcile loop (the card: docs/card.md; the status contract its checks
// prove: docs/contract.md). It holds the step's descriptor and its checks;
// the checks' machinery is package checks.
package step01

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"strconv"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/step"
)

// Step is step 01's descriptor.
func Step() step.Step {
	return step.Step{
		Name:           "step01",
		Dir:            "step01",
		Module:         "github.com/10xdev/gw10/step01",
		SolutionDir:    "solutions/step01",
		SolutionModule: "github.com/10xdev/gw10/solutions/step01",
		Chapter:        "docs/step01.md",
		Sketch:         "docs/step01-sketch.go.txt",
		SketchOver:     "internal/controller/edgeroute_controller.go",
		Reference:      "docs/controller-runtime.md",
		ChecksDoc:      "docs/step01-checks.md",
		Further:        "docs/step01-further.md",
		Checks:         Checks(),
		Contract:       Contract(),
		RBACCeiling:    rbacCeiling(),
		Seeds:          fixedSeeds(),
		Invariants:     invariants(),
		Primary:        primary(),
		// The routes first, then the Services they name.
		Cleanup: []schema.GroupVersionKind{EdgeRouteGVK, serviceGVK},
		// The reference's drift period, short (see DriftPeriod), and the
		// scaffold's workers flag above one (see Workers).
		ControllerFlags: map[string]string{"dataplane-drift-period": DriftPeriod.String(), "max-concurrent-reconciles": strconv.Itoa(Workers)},
		// The invariants read the Services' comings and goings (serviceAt).
		Watched:     []schema.GroupVersionKind{serviceGVK},
		Triggers:    []evidence.Trigger{ServiceCreated, ServiceDeleted, ServiceTouched},
		HandRun:     handRun(),
		Evidence:    questionEvidence(),
		UnitTests:   "^(TestConditionsFor|TestSetCondition)$",
		UnitPackage: "./internal/controller",
	}
}

// serviceGVK is the kind step 01's routes name, which its checks create
// and watch.
var serviceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Service"}

// handRun are the chapter's tasks 1 and 2 in its order: the EdgeRoute
// first, while its Service is missing, and a watch already running when the
// Service arrives, so the flip is seen.
func handRun() []step.Command {
	return []step.Command{
		{Command: "make install", Why: "the CRD, from your markers"},
		{Command: "make run", Why: "shell 2: your controller"},
		{Command: "kubectl get er -w", Why: "shell 3: watch the status flip"},
		{Command: "kubectl apply -f config/samples/net_v1_edgeroute.yaml", Why: "its Service \"web\" is missing"},
		{Command: "kubectl apply -f config/samples/web_service.yaml", Why: "now create it: no edit of the route"},
	}
}

// rbacCeiling is all a step 01 controller may need: its EdgeRoutes (a
// finalizer included, never creating or deleting them), their status, the
// Services they name (read only), events, and leader election's leases. The
// kubebuilder scaffold's default markers ask for more (create and delete of
// EdgeRoutes); those verbs are simply not granted.
func rbacCeiling() []rbacv1.PolicyRule {
	read := []string{"get", "list", "watch"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"net.10xdev.io"}, Resources: []string{"edgeroutes"}, Verbs: append(read, "update", "patch")},
		{APIGroups: []string{"net.10xdev.io"}, Resources: []string{"edgeroutes/status"}, Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{"net.10xdev.io"}, Resources: []string{"edgeroutes/finalizers"}, Verbs: []string{"update"}},
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: read},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: append(read, "create", "update", "patch", "delete")},
	}
}

// Checks are step 01's checks, in the order they run and should be fixed.
func Checks() []checks.Check {
	return []checks.Check{
		crdSchemaCheck,
		missingServiceCheck,
		selfHealCheck,
		serviceRemovedCheck,
		readErrorCheck,
		statusWritesCheck,
		specUpdateCheck,
		pushFailureCheck,
		quiescentCheck,
		routeDeletedCheck,
		restartReconvergeCheck,
		deletedWhileDownCheck,
		sequencesCheck,
	}
}
