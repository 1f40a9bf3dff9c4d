package step01

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/10xdev/gw10/harness/apifront"
	"github.com/10xdev/gw10/harness/checks"
)

// TestStatusWritesJudgesWhatTheFrontSaw: the writes that answered one
// change, as the API front recorded them: one that changed the status
// passes, refused ones before it included; two that changed it break
// ST-ONE-WRITE; one that carried the stored status breaks ST-NO-CHURN.
func TestStatusWritesJudgesWhatTheFrontSaw(t *testing.T) {
	at := time.Now()
	cond := func(status, reason string, gen int64) metav1.Condition {
		return metav1.Condition{Type: accepted, Status: metav1.ConditionStatus(status), Reason: reason, ObservedGeneration: gen,
			LastTransitionTime: metav1.NewTime(at.Truncate(time.Second))}
	}
	stored := []metav1.Condition{cond("False", "ServiceNotFound", 1)}
	write := func(code int, injected bool, rv string, conds ...metav1.Condition) apifront.Request {
		at = at.Add(time.Millisecond)
		return apifront.Request{At: at, Verb: "update", Subresource: "status", Name: "writes", Code: code, Injected: injected,
			ResourceVersion: rv, Conditions: conds}
	}
	for _, tc := range []struct {
		name   string
		writes []apifront.Request
		want   string // a cause; empty: it passes
	}{
		{"one write that changed the status", []apifront.Request{write(200, false, "8", cond("True", "Valid", 1))}, ""},
		{"a conflict, then the write that landed", []apifront.Request{write(409, false, "", cond("True", "Valid", 1)), write(200, false, "8", cond("True", "Valid", 1))}, ""},
		{"two writes for one change", []apifront.Request{write(200, false, "8", cond("True", "Valid", 1)), write(200, false, "9", cond("True", "Valid", 1), cond("True", "Synced", 1))}, ClauseOneWrite},
		{"the stored status written again", []apifront.Request{write(200, false, "7", stored...)}, ClauseNoChurn},
		{"a change, then the same status again", []apifront.Request{write(200, false, "8", cond("True", "Valid", 1)), write(200, false, "8", cond("True", "Valid", 1))}, ClauseNoChurn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct := checks.NewT("status-writes", checks.Env{Namespace: "ns", Primary: primary()})
			w := &statusWrites{t: ct}
			done := make(chan struct{})
			go func() {
				defer close(done)
				w.judge(ct.Route("writes", "svc"), "a change", stored, "7", tc.writes)
			}()
			<-done
			causes := strings.Join(ct.Causes(), "\n")
			switch {
			case tc.want == "" && ct.Failed():
				t.Errorf("failed: %s", causes)
			case tc.want != "" && !strings.Contains(causes, tc.want+" broken"):
				t.Errorf("causes %q, want %s broken", causes, tc.want)
			}
		})
	}
}
