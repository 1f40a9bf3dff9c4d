package ctrlproc

import (
	"fmt"
	"regexp"
	"strings"
)

// Finding is one thing the harness could tell about why the controller
// misbehaved, in the learner's terms, with what to do about it.
type Finding struct {
	Cause string
	Hint  string
}

var (
	forbiddenRE      = regexp.MustCompile(`cannot (\w+) resource \\?"([^"\\]+)\\?" in API group \\?"([^"\\]*)\\?"`)
	reconcilePanicRE = regexp.MustCompile(`Observed a panic in reconciler: (.*?)(?:\s*\{|"|$)`)
)

// Snapshot is what Diagnose looks at.
type Snapshot struct {
	Exited   bool
	ExitText string
	Log      []string // the lines to search (usually since the check started)
	Metrics  *Metrics // nil when they could not be scraped
	Metrics2 *Metrics // a second scrape a moment later, to tell a hang; may be nil
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
	if line := first(s.Log, "Observed a panic in reconciler"); line != "" || (s.Metrics != nil && s.Metrics.Panics > 0) {
		msg := "see the log"
		if m := reconcilePanicRE.FindStringSubmatch(line); m != nil {
			msg = m[1]
		}
		out = append(out, Finding{
			Cause: "Reconcile panicked (controller-runtime recovered and retried it): " + msg,
			Hint:  "a panic in Reconcile is a bug: the stack trace in the log names the line",
		})
	}
	seen := map[string]bool{}
	for _, line := range s.Log {
		m := forbiddenRE.FindStringSubmatch(line)
		if m == nil || seen[m[2]+"/"+m[3]] {
			continue
		}
		seen[m[2]+"/"+m[3]] = true
		group := m[3]
		out = append(out, Finding{
			Cause: fmt.Sprintf("the controller is forbidden to %s %q in API group %q: its ClusterRole lacks it", m[1], m[2], group),
			Hint: fmt.Sprintf("add the RBAC marker above Reconcile: // +kubebuilder:rbac:groups=%s,resources=%s,verbs=get;list;watch (the harness regenerates the role from markers)",
				quoteEmpty(group), m[2]),
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
		case s.Metrics.ReconcileTotal == 0 && s.Metrics.ActiveWorkers == 0:
			out = append(out, Finding{
				Cause: "the controller never reconciled anything",
				Hint:  "is the reconciler registered with the manager (SetupWithManager) with For(&netv1.EdgeRoute{})?",
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
