package ctrlproc

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestDiagnose(t *testing.T) {
	tests := []struct {
		name string
		snap Snapshot
		want []string // substrings of causes or hints, in order of findings
	}{
		{
			name: "a forbidden list names the missing RBAC marker",
			snap: Snapshot{Log: []string{`E1202 reflector.go:200] "Failed to watch" err="failed to list *v1.Service: services is forbidden: User \"gw10-controller\" cannot list resource \"services\" in API group \"\" at the cluster scope"`}, Metrics: &Metrics{ReconcileTotal: 3}},
			want: []string{`groups="",resources=services,verbs=get;list;watch`},
		},
		{
			name: "a recovered panic in Reconcile is called a panic",
			snap: Snapshot{Log: []string{`2026-12-02T12:00:00Z	INFO	Observed a panic in reconciler: runtime error: invalid memory address or nil pointer dereference	{"controller": "edgeroute"}`}, Metrics: &Metrics{ReconcileTotal: 1, Panics: 1}},
			want: []string{"Reconcile panicked", "nil pointer dereference"},
		},
		{
			name: "a recovered panic, as controller-runtime v0.25 logs it",
			snap: Snapshot{Log: []string{`2026-12-04T07:06:04Z	ERROR	Observed a panic	{"controller": "edgeroute", "namespace": "gw10-missing-service-vfwzk", "name": "orphan", ` +
				`"panic": "assignment to entry in nil map", "panicGoValue": "\"assignment to entry in nil map\"", "stacktrace": "goroutine 130 [running]:\n"}`},
				Metrics: &Metrics{ReconcileTotal: 1, Panics: 1}},
			want: []string{"Reconcile panicked (controller-runtime recovered and retried it): assignment to entry in nil map"},
		},
		{
			name: "an exit with a Go panic is a crash",
			snap: Snapshot{Exited: true, ExitText: "exit status 2", Log: []string{"panic: assignment to entry in nil map", "goroutine 1 [running]:"}},
			want: []string{"panicked and exited: panic: assignment to entry in nil map"},
		},
		{
			name: "leader election without a namespace out of a cluster is named",
			snap: Snapshot{Exited: true, ExitText: "before ready", Log: []string{"--- controller started (pid 7) ---",
				"manager: creating manager: unable to find leader election namespace: not running in-cluster, please specify LeaderElectionNamespace"}},
			want: []string{"controller exited", "leader election out of a cluster needs a namespace", "POD_NAMESPACE"},
		},
		{
			name: "a plain exit says the exit status",
			snap: Snapshot{Exited: true, ExitText: "exit status 1", Log: []string{"manager: creating manager: boom"}},
			want: []string{"exited (exit status 1)"},
		},
		{
			name: "no reconcile at all",
			snap: Snapshot{Metrics: &Metrics{}},
			want: []string{"never reconciled"},
		},
		{
			name: "no reconcile counted while the proxy saw pushes: the metrics are not believed",
			snap: Snapshot{Metrics: &Metrics{}, DoneOutside: "the proxy received 31 pushes and withdraws"},
			want: []string{"the controller's /metrics count no reconcile, yet the proxy received 31 pushes and withdraws: its work runs outside Reconcile, or its /metrics do not show what it does"},
		},
		{
			name: "no reconcile when there was nothing to reconcile says nothing",
			snap: Snapshot{Metrics: &Metrics{}, NothingToReconcile: true},
			want: nil,
		},
		{
			name: "a worker busy across two scrapes with no progress is a hang",
			snap: Snapshot{Metrics: &Metrics{ReconcileTotal: 2, ActiveWorkers: 1}, Metrics2: &Metrics{ReconcileTotal: 2, ActiveWorkers: 1}},
			want: []string{"stuck"},
		},
		{
			name: "a healthy controller yields nothing",
			snap: Snapshot{Metrics: &Metrics{ReconcileTotal: 12}, Metrics2: &Metrics{ReconcileTotal: 12}},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diagnose(tt.snap)
			var text []string
			for _, f := range got {
				text = append(text, f.Cause+" | "+f.Hint)
			}
			all := strings.Join(text, "\n")
			if len(tt.want) == 0 && len(got) != 0 {
				t.Fatalf("want no findings, got:\n%s", all)
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("findings lack %q:\n%s", w, all)
				}
			}
		})
	}
}

func TestForbiddenSaysWhetherTheFixIsAMarkerOrADifferentCall(t *testing.T) {
	role := []rbacv1.PolicyRule{
		{APIGroups: []string{"net.10xdev.io"}, Resources: []string{"edgeroutes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"net.10xdev.io"}, Resources: []string{"edgeroutes/status"}, Verbs: []string{"get", "update", "patch"}},
	}
	tests := []struct {
		name string
		line string
		want []string
		not  string
	}{
		{
			name: "an update of the object where only status is granted is the wrong call",
			line: `E1202 "Reconciler error" err="edgeroutes.net.10xdev.io \"a\" is forbidden: User \"gw10-controller\" cannot update resource \"edgeroutes\" in API group \"net.10xdev.io\" in the namespace \"ns\""`,
			want: []string{"r.Update", "status subresource", "r.Status().Update", "no RBAC marker is missing"},
			not:  "add the RBAC marker",
		},
		{
			name: "a missing verb on services is a marker",
			line: `E1202 reflector.go:200] "Failed to watch" err="failed to list *v1.Service: services is forbidden: User \"gw10-controller\" cannot list resource \"services\" in API group \"\" at the cluster scope"`,
			want: []string{"forbidden to list \"services\"", `groups="",resources=services,verbs=get;list;watch`},
		},
		{
			name: "a status update without the marker is a marker with the verb",
			line: `cannot update resource \"edgeroutes/status\" in API group \"net.10xdev.io\"`,
			want: []string{"r.Status().Update", "resources=edgeroutes/status,verbs=update"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var text []string
			r := role
			if strings.Contains(tt.line, "edgeroutes/status") {
				r = role[:1]
			}
			for _, f := range Diagnose(Snapshot{Log: []string{tt.line}, Role: r}) {
				text = append(text, f.Cause+" | "+f.Hint)
			}
			all := strings.Join(text, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("findings lack %q:\n%s", w, all)
				}
			}
			if tt.not != "" && strings.Contains(all, tt.not) {
				t.Errorf("findings say %q:\n%s", tt.not, all)
			}
		})
	}
}

// TestDiagnosisHintsNameTheStepsKind: the hints name the kind the step's
// descriptor declares (Snapshot.Kind, GoType), never one of the harness's own.
func TestDiagnosisHintsNameTheStepsKind(t *testing.T) {
	notFound := "failed to update status: the server could not find the requested resource (put widgets.example.com w)"
	hints := func(s Snapshot) string {
		var out []string
		for _, f := range Diagnose(s) {
			out = append(out, f.Hint)
		}
		return strings.Join(out, "\n")
	}
	got := hints(Snapshot{Log: []string{notFound}, Metrics: &Metrics{}, Kind: "Widget", GoType: "examplev1.Widget"})
	for _, want := range []string{"above the Widget type", "For(&examplev1.Widget{})"} {
		if !strings.Contains(got, want) {
			t.Errorf("the hints lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "EdgeRoute") {
		t.Errorf("a Widget step's hints name EdgeRoute:\n%s", got)
	}
	if got := hints(Snapshot{Metrics: &Metrics{}, Kind: "Widget"}); !strings.Contains(got, "For(&Widget{})") {
		t.Errorf("without a Go type the hint names the kind: %s", got)
	}
}
