package ctrlproc

import (
	"strings"
	"testing"
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
			name: "an exit with a Go panic is a crash",
			snap: Snapshot{Exited: true, ExitText: "exit status 2", Log: []string{"panic: assignment to entry in nil map", "goroutine 1 [running]:"}},
			want: []string{"panicked and exited: panic: assignment to entry in nil map"},
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
