package step01

import (
	"strings"
	"testing"
	"time"
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
