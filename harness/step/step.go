// Package step describes a step of the workbook: where its learner module
// and reference solution are, its chapter, its checks and what the harness
// cleans up after each check. It plays the role of rustlings' info.toml:
// adding a step is one new Step value (see package steps) plus its files.
package step

import (
	"fmt"
	"path/filepath"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/evidence"
)

// Step is one step of the course.
type Step struct {
	// Name names the step everywhere: TODO(<name>) in the skeleton, reports.
	Name string
	// Dir is the learner's module, relative to the workbook root; Module its path.
	Dir, Module string
	// SolutionDir is the reference solution, relative to the root; SolutionModule its path.
	SolutionDir, SolutionModule string
	// Chapter is the step's chapter, relative to the root.
	Chapter string
	// ChecksDoc is where every check has its section, under an anchor
	// "check-<id>" (each failure links to it), relative to the root; ""
	// for the chapter itself.
	ChecksDoc string
	// Further is the chapter's second part, for after the checks pass
	// (questions and tasks no check needs), relative to the root; "" for
	// none. Its questions' answers are among the chapter's (AnswersOf).
	Further string
	// Sketch is the card's sketch, fitted to the learner's module, relative
	// to the root; SketchOver is the file of the module it replaces,
	// relative to Dir (make sketch saves it there). "" for none.
	Sketch, SketchOver string
	// Reference is a page of library reference the chapter sends its
	// questions to (controller-runtime's parts and their doc comments); ""
	// if the chapter holds it all.
	Reference string
	// Checks run in this order, which is also the order to fix them in.
	Checks []checks.Check
	// Contract is the step's status contract, clause by clause, as
	// docs/contract.md states it; every check names the clauses it proves.
	Contract []Clause
	// RBACCeiling is the most a controller of this step is ever granted:
	// the identity stage installs the intersection of the role its markers
	// generate with these rules and names what it left out. A submission's
	// markers cannot hand its controller the cluster (rewriting the CRD a
	// check reads, another namespace's objects); nil grants the role as
	// generated.
	RBACCeiling []rbacv1.PolicyRule
	// Seeds are the fixed seeds of the step's generated sequences: a grade
	// runs exactly these (the same code gets the same results, run after
	// run); make check runs a short sequence planned from one fresh seed
	// instead (the learner's budget); --budget full runs them plus one fresh seed.
	Seeds []int64
	// Invariants are the contract's clauses checked at every event of every
	// check (checks.Invariant): the runner gives them to each check.
	Invariants []checks.Invariant
	// Primary is the kind the step's controller reconciles (its GVK, its
	// resource, the causes its design gives a failed wait): package checks
	// knows it from here alone (checks.Env.Primary), and records, creates
	// and names its objects by it.
	Primary checks.Primary
	// Watched are the namespaced kinds, beside Primary, whose objects every check's recorder watches in the
	// check's namespace (checks.Env.Watched): their changes are evidence
	// and the invariants see them (checks.History.Objects).
	Watched []schema.GroupVersionKind
	// Triggers are the step's own kinds of action, beside every step's
	// (evidence.Generic): what its checks do to its other kinds, which its
	// Primary.Causes read (step 01: a Service created or deleted).
	// checks.T.Did refuses a trigger neither declares.
	Triggers []evidence.Trigger
	// Cleanup are the namespaced kinds a check may create, its primary kind
	// included, that the runner deletes after it, in this order, before the
	// namespace (envtest has no namespace controller to do it). Its only
	// job: the objects already in a dev cluster the controller under test
	// will reconcile are read from Primary.
	Cleanup []schema.GroupVersionKind
	// ControllerFlags are flags (name without dashes, value) the harness
	// gives a controller whose binary defines them, as its -h shows; a
	// binary without one is started without it (an unknown flag would stop
	// it at its start).
	ControllerFlags map[string]string
	// HandRun are the chapter's tasks a learner runs by hand against the
	// dev cluster (make cluster-up prints them), in the chapter's order;
	// each command appears in the chapter word for word.
	HandRun []Command
	// Evidence says, for each of the chapter's questions that links no
	// written answer, where its evidence is (a task's output, a check's
	// section, a timeline, make bench): make hint ID=<question> prints it.
	Evidence []QuestionEvidence
	// UnitTests is the `go test -run` pattern of the step's unit tests,
	// run in UnitPackage before any cluster starts; empty: none.
	UnitTests, UnitPackage string
}

// A Command is one shell command of a hand-run task, with why it is run.
type Command struct {
	Command, Why string
}

// QuestionEvidence is where the evidence that answers one of the chapter's
// questions is, for a question that links no written answer.
type QuestionEvidence struct {
	Question string // its anchor, q-…
	Where    string // what to run or read, in a sentence
}

// EvidenceFor is where the evidence of a question is; "" when the step
// names none.
func (s Step) EvidenceFor(question string) string {
	for _, e := range s.Evidence {
		if e.Question == question {
			return e.Where
		}
	}
	return ""
}

// A Clause is one rule of a step's contract: what a correct controller
// does, in a sentence, under a stable short ID ("ST-ONE-WRITE"). Plain says
// it in a few everyday words, for a reader who meets it first; Rule says it
// in full, as the checks hold it.
type Clause struct {
	ID, Plain, Rule string
}

// Clause returns the contract clause with the given ID.
func (s Step) Clause(id string) (Clause, bool) {
	for _, c := range s.Contract {
		if c.ID == id {
			return c, true
		}
	}
	return Clause{}, false
}

// ChecksFile is the file where every check has its section: ChecksDoc, or
// the chapter.
func (s Step) ChecksFile() string {
	if s.ChecksDoc != "" {
		return s.ChecksDoc
	}
	return s.Chapter
}

// DocAnchor is where the workbook explains a check.
func (s Step) DocAnchor(id string) string { return s.ChecksFile() + "#check-" + id }

// ChapterParts are the files the chapter is written in, in reading order:
// Chapter, then Reference, ChecksDoc and Further if the step has them.
func (s Step) ChapterParts() []string {
	out := []string{s.Chapter}
	for _, f := range []string{s.Reference, s.ChecksDoc, s.Further} {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Is reports whether dir (relative to the root, or absolute under root) is
// the step's learner module or its solution.
func (s Step) Is(root, dir string) bool {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	dir = filepath.Clean(dir)
	return dir == filepath.Join(root, s.Dir) || dir == filepath.Join(root, s.SolutionDir)
}

// Validate reports what is missing from a descriptor.
func (s Step) Validate() error {
	switch {
	case s.Name == "" || s.Dir == "" || s.SolutionDir == "" || s.Module == "" || s.SolutionModule == "":
		return fmt.Errorf("step %q: name, directories and modules are required", s.Name)
	case len(s.Checks) == 0:
		return fmt.Errorf("step %q has no checks", s.Name)
	case s.Primary.GVK.Kind == "" || s.Primary.GVK.Version == "" || s.Primary.Resource == "":
		return fmt.Errorf("step %q declares no primary kind (its GVK and resource): the checks could not record, create or name its objects", s.Name)
	}
	seen := map[string]bool{}
	for _, c := range s.Checks {
		if c.ID == "" || c.Run == nil || c.Hint == "" || c.Direction == "" || c.LongHint == "" || c.Title == "" || c.SeedRef == "" {
			return fmt.Errorf("step %q: check %q lacks an ID, title, card reference, hint, direction, long hint or Run", s.Name, c.ID)
		}
		if seen[c.ID] {
			return fmt.Errorf("step %q: check ID %q twice", s.Name, c.ID)
		}
		seen[c.ID] = true
		for _, id := range c.Clauses {
			if _, ok := s.Clause(id); !ok {
				return fmt.Errorf("step %q: check %q names clause %q, which its contract lacks", s.Name, c.ID, id)
			}
		}
	}
	for i, tr := range s.Triggers {
		if tr == "" || evidence.Generic(tr) || slices.Contains(s.Triggers[:i], tr) {
			return fmt.Errorf("step %q: trigger %q is empty, twice, or one of every step's (package evidence)", s.Name, tr)
		}
	}
	for _, inv := range s.Invariants {
		if _, ok := s.Clause(inv.Clause); !ok || inv.Eval == nil || inv.Rule == "" {
			return fmt.Errorf("step %q: invariant %q names no clause of its contract, or lacks a rule or Eval", s.Name, inv.Clause)
		}
	}
	return nil
}
