package checks

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/evidence"
)

// A wait ends as soon as the evidence proves it cannot succeed, instead of
// at its timeout. Every proof rests on the same argument: since the check's
// last action the world has been still, so a controller that keeps doing
// the same failing thing will keep doing it. And every proof is a defect
// of its own: a correct controller never has a write of its objects
// refused, never panics and never loops, so none of them can end a wait
// early on a correct controller.
//
// The proofs, read from the evidence the check already holds:
//   - a write of the check's objects of the primary kind refused (RBAC forbids it: the object
//     written with r.Update where only edgeroutes/status is granted; the
//     status subresource missing from the CRD, a 404; a status the schema
//     rejects), refusedWrites times with no status written since;
//   - Reconcile panicking panicLoop times with no status written since;
//   - a hot loop: hotLoop reconciles or more since the action, still going;
//   - a worker busy for Timeouts.StuckFor with no reconcile finishing: a Reconcile
//     that never returns.
//
// A controller that exited ends the check through its context (the runner
// watches the process), not through a wait.
const (
	// refusedWrites: two refusals of one write are a retry that failed the
	// same way, not a one-off.
	refusedWrites = 2
	// panicLoop: Reconcile panicked this often with nothing written between.
	panicLoop = 3
	// hotLoop is far beyond what a correct controller does after one action
	// (a pass or two per route, and its status write's echo), and
	// Timeouts.HotLoopWait lets the first burst after an action settle first.
	hotLoop = 100
	// hotLoopRecent: the loop must still be running, not a burst that ended.
	hotLoopRecent = time.Second
)

// What a Blocker is.
const (
	refusedStatus = "refused"
	stuckWorkers  = "stuck"
)

// Blocker is a proof that holds for the rest of the run, so that every
// later check would wait in vain the same way: the controller's writes of
// its status refused (RBAC and the CRD do not change while it runs), or
// every worker stuck in a Reconcile that never returns.
type Blocker struct {
	Kind string `json:"kind"` // refusedStatus or stuckWorkers
	Why  string `json:"why"`  // in a few words
	Hint string `json:"hint,omitempty"`
}

// Prior is a Blocker an earlier check of the run found: a later check's
// waits name it as their prerequisite as soon as their own evidence
// confirms it.
type Prior struct {
	Check string `json:"check"`
	Blocker
}

// Stuck says every worker is stuck: the controller will reconcile nothing again.
func (p Prior) Stuck() bool { return p.Kind == stuckWorkers }

func (p Prior) String() string {
	if p.Kind == stuckWorkers {
		return fmt.Sprintf("every worker of the controller is stuck in Reconcile, as check %s found: %s", p.Check, p.Why)
	}
	return fmt.Sprintf("the controller cannot write its status, as check %s found: %s", p.Check, p.Why)
}

// doomEvidence is what the proofs read: the controller's log lines about the
// check's namespace since the last action, the record's events, and how
// long the controller's workers have been stuck.
type doomEvidence struct {
	primary Primary // whose writes the controller's log may show refused
	// timeouts bound the proofs that need time (StuckFor, StuckConfirm,
	// HotLoopWait).
	timeouts Timeouts
	since    time.Time // the last action (or the check's start)
	now      time.Time
	lines    []ctrlproc.Line
	events   []evidence.Event
	// noStatusSubresource: the installed CRD has none, so a status write
	// is answered NotFound although the object exists.
	noStatusSubresource bool
	// stuck is how long the scrapes have seen a worker busy and no
	// reconcile finishing; allStuck: every worker is.
	stuck    time.Duration
	allStuck bool
	// prior is what an earlier check of the run proved (Env.Prior), which
	// this check's evidence then only needs to confirm.
	prior *Prior
}

// doom is a proof that a wait cannot succeed.
type doom struct {
	// Proof says what the evidence shows, in the learner's terms.
	Proof string
	// Hint is what to do, where the runner's diagnosis has nothing to say.
	Hint string
	// Blocker, when set, holds for the rest of the run.
	Blocker *Blocker
	// Prerequisite: the proof is an earlier check's (Env.Prior), which this
	// check's evidence confirms: the check was not run properly.
	Prerequisite bool
}

// doomed returns the proof that a wait begun after the check's last action
// cannot succeed, if the evidence holds one.
func (t *T) doomed(ctx context.Context, now time.Time) (doom, bool) {
	since := t.start
	if a, ok := t.Record.LastAction(now); ok {
		since = a.At
	}
	ev := doomEvidence{primary: t.Primary, timeouts: t.Timeouts, since: since, now: now, events: t.Record.Since(since), prior: t.Prior,
		noStatusSubresource: t.noStatusSubresource(ctx)}
	ev.stuck, ev.allStuck = t.activity.stuck()
	if t.Controller != nil {
		for _, l := range t.Controller.LogSince(since) {
			if strings.Contains(l.Text, t.Namespace) {
				ev.lines = append(ev.lines, l)
			}
		}
	}
	return judge(ev)
}

// judge is doomed's reading of the evidence, the most specific proof first.
func judge(ev doomEvidence) (doom, bool) {
	priorKind := ""
	if ev.prior != nil {
		priorKind = ev.prior.Kind
	}
	lastWrite := ev.since
	for _, e := range ev.events {
		if e.Source == evidence.APIServer && e.Kind == evidence.Status && e.At.After(lastWrite) {
			lastWrite = e.At
		}
	}
	var refused, panics []ctrlproc.Line
	for _, l := range ev.lines {
		if l.At.Before(lastWrite) {
			continue
		}
		if _, _, ok := refusedWrite(ev.primary, l.Text, ev.noStatusSubresource); ok {
			refused = append(refused, l)
		}
		if _, ok := ctrlproc.ReconcilePanic(l.Text); ok {
			panics = append(panics, l)
		}
	}
	need := refusedWrites
	if priorKind == refusedStatus {
		need = 1
	}
	if len(refused) >= need {
		why, lasting, _ := refusedWrite(ev.primary, refused[len(refused)-1].Text, ev.noStatusSubresource)
		if priorKind == refusedStatus {
			return doom{Proof: ev.prior.String() + " (refused here too)", Hint: ev.prior.Hint, Prerequisite: true}, true
		}
		d := doom{Proof: fmt.Sprintf("the API server refused the controller's write of %s %s since the last change (%s), and no status was written: %s",
			ev.primary.A(), Times(len(refused)), ago(ev.since, refused[0].At), why), Hint: refusalHint(ev.primary, why)}
		if lasting {
			d.Blocker = &Blocker{Kind: refusedStatus, Why: why, Hint: d.Hint}
		}
		return d, true
	}
	if priorKind == stuckWorkers && ev.allStuck && ev.stuck >= ev.timeouts.StuckConfirm {
		return doom{Proof: ev.prior.String() + " (still stuck here)", Hint: ev.prior.Hint, Prerequisite: true}, true
	}
	if ev.stuck >= ev.timeouts.StuckFor {
		why := fmt.Sprintf("a worker has been busy for %s and no reconcile finished: a call in Reconcile has not returned", ev.stuck.Round(100*time.Millisecond))
		d := doom{Proof: "Reconcile is stuck: " + why}
		if ev.allStuck {
			d.Blocker = &Blocker{Kind: stuckWorkers, Why: why}
		}
		return d, true
	}
	if len(panics) >= panicLoop {
		return doom{Proof: fmt.Sprintf("Reconcile panicked %s since the last change and wrote nothing in between (controller-runtime recovers a panic and retries): %s",
			Times(len(panics)), panicText(panics[len(panics)-1].Text))}, true
	}
	if n, recent := reconcilesSince(ev); n >= hotLoop && recent && ev.now.Sub(ev.since) >= ev.timeouts.HotLoopWait {
		return doom{Proof: fmt.Sprintf("the controller reconciled %s in %s since the last change and is still at it: a hot loop "+
			"(each pass wakes the next one, with nothing in the world changing)",
			Times(n), ev.now.Sub(ev.since).Round(100*time.Millisecond)),
			Hint: "a pass that changes nothing must write nothing and wake nothing (ST-NO-CHURN, Q-QUIET)"}, true
	}
	return doom{}, false
}

// refusedWrite says why a log line is a refused write of an object of the
// primary kind (its
// status or the object), and whether the refusal lasts for the whole run
// (RBAC and the CRD do not change while the controller runs; an invalid
// status is refused for what it holds).
//
// Without a status subresource a status write is answered with a NotFound
// naming the object, as if it were gone: noStatusSubresource (read from the
// installed CRD) tells the two apart.
func refusedWrite(primary Primary, line string, noStatusSubresource bool) (why string, lasting, ok bool) {
	if verb, resource, group, ok := ctrlproc.ForbiddenRequest(line); ok {
		main, _, _ := strings.Cut(resource, "/")
		if main == primary.Resource && (verb == "update" || verb == "patch") {
			return fmt.Sprintf("it is forbidden to %s %q in API group %q", verb, resource, group), true, true
		}
		return "", false, false
	}
	if primary.Resource == "" || !strings.Contains(line, primary.Resource) && !strings.Contains(line, primary.Kind()) {
		return "", false, false
	}
	switch {
	case noStatusSubresource && objectNotFound(primary).MatchString(line):
		return "the CRD has no status subresource, so a write of the status is answered NotFound (404) although the " + primary.Kind() + " exists", true, true
	case strings.Contains(line, "is invalid: status."):
		return "the status written is invalid by the CRD's schema: " + after(line, "is invalid: "), false, true
	}
	return "", false, false
}

// refusalHint is what to do about a refused write, where the runner's
// diagnosis of the log (RBAC) has nothing to say.
func refusalHint(primary Primary, why string) string {
	switch {
	case strings.Contains(why, "no status subresource"):
		return "add +kubebuilder:subresource:status above the " + primary.Kind() + " type (the harness regenerates the CRD from the markers), " +
			"and write the status with r.Status().Update or r.Status().Patch"
	case strings.Contains(why, "invalid"):
		return "every condition must pass the CRD's schema (the message names the field): a reason is CamelCase letters, a status True, False or Unknown"
	}
	return ""
}

// objectNotFound matches the API server's NotFound for an object of the
// primary kind, as a log line quotes it: edgeroutes.net.10xdev.io \"name\"
// not found.
func objectNotFound(primary Primary) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(primary.CRD()) + ` \\?"[^"\\]+\\?" not found`)
}

// noStatusSubresource reads the installed CRD once per check: whether its
// version has no status subresource. An unreadable CRD says nothing.
func (t *T) noStatusSubresource(ctx context.Context) bool {
	t.crdOnce.Do(func() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if t.Client == nil || t.Primary.Resource == "" || t.Client.Get(ctx, client.ObjectKey{Name: t.Primary.CRD()}, crd) != nil {
			return
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == t.Primary.GVK.Version {
				t.noStatus = v.Subresources == nil || v.Subresources.Status == nil
			}
		}
	})
	return t.noStatus
}

// reconcilesSince counts the reconciles the scrapes saw after ev.since, and
// whether some finished within hotLoopRecent of now.
func reconcilesSince(ev doomEvidence) (int, bool) {
	n, recent := 0, false
	for _, e := range ev.events {
		if e.Kind != evidence.Reconcile || e.At.Before(ev.since) {
			continue
		}
		for _, c := range e.Count {
			n += c
		}
		if ev.now.Sub(e.At) <= hotLoopRecent {
			recent = true
		}
	}
	return n, recent
}

func panicText(line string) string {
	if msg, _ := ctrlproc.ReconcilePanic(line); msg != "" {
		return ctrlproc.Shorten(msg, 120)
	}
	return "see the log"
}

// after is the text of line from sep on (sep excluded), cut at the end of
// the JSON string it sits in; the whole line when sep is not in it.
func after(line, sep string) string {
	_, rest, ok := strings.Cut(line, sep)
	if !ok {
		return ctrlproc.Shorten(line, 160)
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] == '"' && (i == 0 || rest[i-1] != '\\') {
			rest = rest[:i]
			break
		}
	}
	return ctrlproc.Shorten(strings.TrimSpace(strings.ReplaceAll(rest, `\"`, `"`)), 160)
}

// ago reads "the first 12ms after it".
func ago(since, at time.Time) string {
	d := at.Sub(since)
	if d < time.Second {
		d = d.Round(time.Millisecond)
	} else {
		d = d.Round(100 * time.Millisecond)
	}
	return "the first " + d.String() + " after it"
}
