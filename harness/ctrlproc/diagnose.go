package ctrlproc

import (
	"fmt"
	"regexp"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Finding is one thing the harness could tell about why the controller
// misbehaved, in the learner's terms, with what to do about it.
type Finding struct {
	Cause string
	Hint  string
}

var (
	forbiddenRE = regexp.MustCompile(`cannot (\w+) resource \\?"([^"\\]+)\\?" in API group \\?"([^"\\]*)\\?"`)
	// Older controller-runtime versions log "Observed a panic in reconciler:
	// <value>"; v0.25 logs "Observed a panic" with a "panic" key.
	reconcilePanicRE = regexp.MustCompile(`Observed a panic in reconciler: (.*?)(?:\s*\{|"|$)`)
	panicKeyRE       = regexp.MustCompile(`Observed a panic\t.*?"panic": "((?:[^"\\]|\\.)*)"`)
)

// Snapshot is what Diagnose looks at.
type Snapshot struct {
	Exited   bool
	ExitText string
	Log      []string // the lines to search (usually since the check started)
	Metrics  *Metrics // nil when they could not be scraped
	Metrics2 *Metrics // a second scrape a moment later, to tell a hang; may be nil
	// Role is what the controller's ClusterRole grants (generated from its
	// RBAC markers): a forbidden request is judged against it.
	Role []rbacv1.PolicyRule
	// NothingToReconcile says the check changed nothing the controller
	// watches (crd-schema only creates with dry-run): no reconcile is then
	// no sign of a reconciler left unregistered.
	NothingToReconcile bool
	// DoneOutside is what the controller was seen doing from outside its
	// process during the check ("the proxy received 31 pushes"; empty:
	// nothing): a reconcile count of 0 beside it is not believed.
	DoneOutside string
	// Kind and GoType name the kind the controller reconciles in hints
	// ("EdgeRoute", "netv1.EdgeRoute": the step's checks.Primary); the
	// harness knows no kind of its own.
	Kind, GoType string
}

// Diagnose turns the controller's state into findings, most telling first.
func Diagnose(s Snapshot) []Finding {
	var out []Finding
	if s.Exited {
		if line := first(s.Log, "panic: "); line != "" {
			out = append(out, Finding{
				Cause: "the controller panicked and exited: " + strings.TrimSpace(line),
				Hint:  "the stack trace in the log below names the file and line; guard that nil or index",
			})
		} else {
			out = append(out, Finding{
				Cause: "the controller exited (" + s.ExitText + ") while the check ran",
				Hint:  "its last log lines below say why; main returns when the manager cannot start",
			})
		}
	}
	if first(s.Log, "unable to find leader election namespace") != "" {
		out = append(out, Finding{
			Cause: "leader election out of a cluster needs a namespace: controller-runtime finds the Lease's namespace only inside a Pod " +
				"(its service account's namespace file), and the manager's LeaderElectionNamespace is empty",
			Hint: "set the manager's LeaderElectionNamespace, e.g. from the POD_NAMESPACE environment variable (the harness sets it to a namespace " +
				"it makes for the Lease; a Deployment sets it from the Downward API), or keep --leader-elect off by default as the scaffold does",
		})
	}
	if line := first(s.Log, "Observed a panic"); line != "" || (s.Metrics != nil && s.Metrics.Panics > 0) {
		msg, ok := ReconcilePanic(line)
		if !ok || msg == "" {
			msg = "see the log"
		}
		out = append(out, Finding{
			Cause: "Reconcile panicked (controller-runtime recovered and retried it): " + msg,
			Hint:  "a panic in Reconcile is a bug: the stack trace in the log names the line",
		})
	}
	out = append(out, Forbidden(s.Log, s.Role)...)
	if line := first(s.Log, "the server could not find the requested resource"); line != "" && strings.Contains(strings.ToLower(line), "status") {
		out = append(out, Finding{
			Cause: "writing the status failed with NotFound: the CRD has no status subresource",
			Hint:  "add +kubebuilder:subresource:status above the " + s.kind() + " type (the harness regenerates the CRD from the markers)",
		})
	}
	if !s.Exited && first(s.Log, "timed out waiting for cache to be synced") != "" {
		out = append(out, Finding{
			Cause: "a watch never synced its cache, so the controller never started",
			Hint:  "usually RBAC: every watched resource needs get, list and watch",
		})
	}
	if !s.Exited && s.Metrics != nil {
		switch {
		case s.Metrics.ReconcileTotal == 0 && s.DoneOutside != "":
			out = append(out, Finding{
				Cause: "the controller's /metrics count no reconcile, yet " + s.DoneOutside + ": its work runs outside Reconcile, or its /metrics do not show what it does",
				Hint:  "serve controller-runtime's own metrics on the address --metrics-bind-address names (the manager's Metrics options), and do the work in Reconcile",
			})
		case s.Metrics.ReconcileTotal == 0 && s.Metrics.ActiveWorkers == 0 && !s.NothingToReconcile:
			out = append(out, Finding{
				Cause: "the controller never reconciled anything",
				Hint:  "is the reconciler registered with the manager (SetupWithManager) with For(&" + s.goType() + "{})?",
			})
		case s.Metrics2 != nil && s.Metrics.ActiveWorkers > 0 && s.Metrics2.ActiveWorkers > 0 &&
			s.Metrics2.ReconcileTotal == s.Metrics.ReconcileTotal:
			out = append(out, Finding{
				Cause: "Reconcile is stuck: a call started and has not returned",
				Hint:  "look for a blocking call in Reconcile: a channel, a lock, a loop, or a request without the ctx",
			})
		}
	}
	return out
}

// kind names the reconciled kind in a hint; goType its Go type.
func (s Snapshot) kind() string {
	if s.Kind == "" {
		return "reconciled"
	}
	return s.Kind
}

func (s Snapshot) goType() string {
	switch {
	case s.GoType != "":
		return s.GoType
	case s.Kind != "":
		return s.Kind
	}
	return "YourKind"
}

// Forbidden explains each distinct request the API server refused in lines,
// against the controller's role.
func Forbidden(lines []string, role []rbacv1.PolicyRule) []Finding {
	var out []Finding
	seen := map[string]bool{}
	for _, line := range lines {
		m := forbiddenRE.FindStringSubmatch(line)
		if m == nil || seen[m[1]+" "+m[2]+"/"+m[3]] {
			continue
		}
		seen[m[1]+" "+m[2]+"/"+m[3]] = true
		out = append(out, forbidden(m[1], m[2], m[3], role))
	}
	return out
}

// ReconcilePanic reads a log line saying controller-runtime recovered a
// panic in Reconcile, and the panic's value (empty when the line holds none).
func ReconcilePanic(line string) (string, bool) {
	if !strings.Contains(line, "Observed a panic") {
		return "", false
	}
	if m := reconcilePanicRE.FindStringSubmatch(line); m != nil {
		return m[1], true
	}
	if m := panicKeyRE.FindStringSubmatch(line); m != nil {
		return strings.ReplaceAll(m[1], `\"`, `"`), true
	}
	return "", true
}

// ForbiddenRequest reads a request the API server refused on RBAC grounds
// from a log line: its verb, its resource ("edgeroutes/status" for a
// subresource) and its API group.
func ForbiddenRequest(line string) (verb, resource, group string, ok bool) {
	m := forbiddenRE.FindStringSubmatch(line)
	if m == nil {
		return "", "", "", false
	}
	return m[1], m[2], m[3], true
}

// String is the finding as the failure blocks print it.
func (f Finding) String() string { return "cause: " + f.Cause + "\nhint:  " + f.Hint }

func first(lines []string, substr string) string {
	for _, l := range lines {
		if strings.Contains(l, substr) {
			return l
		}
	}
	return ""
}

func quoteEmpty(group string) string {
	if group == "" {
		return `""`
	}
	return group
}

// forbidden explains a refused request: which call, and whether the fix is
// a marker or a different call.
func forbidden(verb, resource, group string, role []rbacv1.PolicyRule) Finding {
	main, sub, _ := strings.Cut(resource, "/")
	call := callFor(verb, sub)
	if sub == "" && (verb == "update" || verb == "patch") && grants(role, group, main+"/status", verb) {
		return Finding{
			Cause: fmt.Sprintf("the controller is forbidden to %s %q in API group %q (%s on the object itself): its role grants %s on %s/status only, as it should",
				verb, resource, group, call, verb, main),
			Hint: "write status through the status subresource: r.Status().Update(ctx, &er) or r.Status().Patch(...), not r.Update; no RBAC marker is missing",
		}
	}
	verbs := verb
	if verb == "get" || verb == "list" || verb == "watch" {
		verbs = "get;list;watch" // a watch needs all three
	}
	return Finding{
		Cause: fmt.Sprintf("the controller is forbidden to %s %q in API group %q (%s): its ClusterRole lacks it", verb, resource, group, call),
		Hint: fmt.Sprintf("add the RBAC marker above Reconcile: // +kubebuilder:rbac:groups=%s,resources=%s,verbs=%s (the harness regenerates the role from markers)",
			quoteEmpty(group), resource, verbs),
	}
}

// callFor names the client call behind a verb.
func callFor(verb, subresource string) string {
	prefix := "r."
	if subresource == "status" {
		prefix = "r.Status()."
	}
	switch verb {
	case "list", "watch":
		return "a watch or a List: the cache lists and watches what the controller reads"
	case "get":
		return "r.Get, or the cache behind it"
	default:
		return prefix + strings.ToUpper(verb[:1]) + verb[1:]
	}
}

// grants reports whether the rules allow verb on resource in group.
func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func has(xs []string, x string) bool {
	for _, s := range xs {
		if s == x || s == "*" {
			return true
		}
	}
	return false
}
