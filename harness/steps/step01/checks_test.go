package step01

import (
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestPollingWordsNameTheirWindows: the polling failure counts the
// reconciles of the quiet window it watched, and says so, with their rate
// and results.
func TestPollingWordsNameTheirWindows(t *testing.T) {
	cause, observed := pollingWords("r", "its Service", 2, 3*time.Second, map[string]int{"requeue": 2})
	for _, w := range []string{"Reconcile ran twice in the last 3s", "0.7 per second: 2 requeue", "while r waited for its Service", "that is polling"} {
		if !strings.Contains(cause, w) {
			t.Errorf("the cause does not say %q:\n%s", w, cause)
		}
	}
	if w := "2 reconciles in the last 3s, counted once the controller had gone idle (2 requeue)"; !strings.Contains(observed, w) {
		t.Errorf("observed does not say %q:\n%s", w, observed)
	}
}

// TestPollingWordsSayWhenTheWakeCameFromOutsideReconcile: passes that all
// succeeded asked for nothing, so the cause points away from Reconcile's
// result (to a source or a watch); a requeue's cause does not.
func TestPollingWordsSayWhenTheWakeCameFromOutsideReconcile(t *testing.T) {
	const outside = "no pass asked to run again"
	if cause, _ := pollingWords("r", "its Service", 1, 3*time.Second, map[string]int{"success": 1}); !strings.Contains(cause, outside) || !strings.Contains(cause, "a source of your own") {
		t.Errorf("passes that all succeeded: the cause does not say the wake came from outside Reconcile:\n%s", cause)
	}
	for _, r := range []string{"requeue", "requeue_after", "error"} {
		if cause, _ := pollingWords("r", "its Service", 2, 3*time.Second, map[string]int{"success": 1, r: 1}); strings.Contains(cause, outside) {
			t.Errorf("a pass ended %s, yet the cause says none asked to run again:\n%s", r, cause)
		}
	}
}

// TestSelfHealsOneLinerBlamesNoDesign: self-heal fails for several designs
// (Owns(), no Service watch at all, polling, skipping a pass on
// observedGeneration), and its hint is the one line a learner sees whenever
// it is not the first failure, whatever the cause. It must not name one of
// them: the causes drawn from the evidence do that.
func TestSelfHealsOneLinerBlamesNoDesign(t *testing.T) {
	for _, word := range []string{"Owns", "observedGeneration", "Requeue"} {
		if strings.Contains(selfHealCheck.Hint, word) {
			t.Errorf("self-heal's hint names %s, which a failing controller may not use: %q", word, selfHealCheck.Hint)
		}
	}
}

func TestAConditionColumnShowsTheConditionsStatus(t *testing.T) {
	path := `.status.conditions[?(@.type=="Accepted")].status`
	col := func(name, typ, jsonPath string, priority int32) []apiextensionsv1.CustomResourceColumnDefinition {
		return []apiextensionsv1.CustomResourceColumnDefinition{{Name: name, Type: typ, JSONPath: jsonPath, Priority: priority}}
	}
	cases := []struct {
		name string
		cols []apiextensionsv1.CustomResourceColumnDefinition
		want string // in the problem; "" for none
	}{
		{"the card's", col("Accepted", "string", path, 0), ""},
		{"single quotes and spaces", col("Accepted", "string", `.status.conditions[?(@.type == 'Accepted')].status`, 0), ""},
		{"none", nil, "shows no Accepted column"},
		{"another condition's", col("Accepted", "string", `.status.conditions[?(@.type=="Programmed")].status`, 0), "not the Accepted condition's status"},
		{"boolean", col("Accepted", "boolean", path, 0), "type=boolean"},
		{"wide only", col("Accepted", "string", path, 1), "only with -o wide"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := conditionColumnProblem(c.cols, "Accepted")
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("conditionColumnProblem = %q, want one saying %q", got, c.want)
			}
		})
	}
}
