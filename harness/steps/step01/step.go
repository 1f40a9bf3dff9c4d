// Package step01 is step 01 of the workbook: a CRD and a level-triggered
// reconcile loop (the card: docs/card.md; the status contract its checks
// prove: docs/contract.md). It holds the step's descriptor and its checks;
// the checks' machinery is package checks.
package step01

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/10xdev/gw10/harness/checks"
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
		Checks:         Checks(),
		Contract:       Contract(),
		Seeds:          fixedSeeds(),
		Invariants:     invariants(),
		Cleanup:        []schema.GroupVersionKind{checks.EdgeRouteGVK},
		UnitTests:      "^TestConditionsFor$",
		UnitPackage:    "./internal/controller",
	}
}

// Checks are step 01's checks, in the order they run and should be fixed.
func Checks() []checks.Check {
	return []checks.Check{
		crdSchemaCheck,
		missingServiceCheck,
		selfHealCheck,
		serviceRemovedCheck,
		specUpdateCheck,
		pushFailureCheck,
		quiescentCheck,
		routeDeletedCheck,
		restartReconvergeCheck,
		deletedWhileDownCheck,
		sequencesCheck,
	}
}
