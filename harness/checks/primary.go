package checks

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/10xdev/gw10/harness/evidence"
)

// Primary is the kind a step's controller reconciles (step 01's EdgeRoute),
// as the checks reach it and name it: the step's descriptor declares it
// (step.Step.Primary), the runner hands it to every check (Env.Primary), and
// nothing in this package knows it otherwise. The recorder follows its
// objects, the route handles create and read them, the proofs read the
// controller's refused writes of them, and every text a learner reads names
// them by Kind ("EdgeRoute ns/name").
type Primary struct {
	GVK schema.GroupVersionKind
	// Resource is its plural as the API server names it in URLs, RBAC and
	// errors ("edgeroutes"); its CRD is Resource.Group.
	Resource string
	// GoType is how the step's code names the kind's Go type where a hint
	// quotes it ("netv1.EdgeRoute", as in For(&netv1.EdgeRoute{})); empty:
	// its Kind.
	GoType string
	// Causes are the step's words for what a failed wait's evidence shows
	// (wait.go): its own triggers and the design they call for. Nil fields
	// say only what this package can say of any step.
	Causes Causes
}

// Causes are the step's conclusions, in its own words, when a wait fails
// after an action with the given trigger; each returns "" where it has none.
type Causes struct {
	// NoReconcile follows "no reconcile followed <the action>" when nothing
	// reconciled after it.
	NoReconcile func(trigger evidence.Trigger) string
	// DidNothing reads the reconciles that did follow it, all of them
	// successful (tally), and says why they changed nothing, starting with
	// ". ".
	DidNothing func(trigger evidence.Trigger, tally evidence.Tally) string
}

// Kind is how texts name the primary kind: "EdgeRoute".
func (p Primary) Kind() string { return p.GVK.Kind }

// Type is how hints name the kind's Go type: GoType, or its Kind.
func (p Primary) Type() string {
	if p.GoType != "" {
		return p.GoType
	}
	return p.GVK.Kind
}

// Object names one object of the kind in evidence: "EdgeRoute ns/name".
func (p Primary) Object(namespace, name string) string {
	return p.GVK.Kind + " " + namespace + "/" + name
}

// List is the kind of a list of it, for a watch ("EdgeRouteList").
func (p Primary) List() schema.GroupVersionKind {
	return p.GVK.GroupVersion().WithKind(p.GVK.Kind + "List")
}

// CRD is the name of its CustomResourceDefinition ("edgeroutes.net.10xdev.io").
func (p Primary) CRD() string { return p.Resource + "." + p.GVK.Group }

// A is the kind with its indefinite article: "an EdgeRoute", "a ConfigMap".
func (p Primary) A() string {
	if p.GVK.Kind != "" && strings.ContainsAny(p.GVK.Kind[:1], "AEIOUaeiou") {
		return "an " + p.GVK.Kind
	}
	return "a " + p.GVK.Kind
}
