package step01

import (
	"strings"
	"testing"
	"time"
)

// TestPollingWordsNameTheirWindows: the polling failure counts reconciles in
// the quiet window it watched and retries since the route was created; each
// count says which, so "1 reconcile in 3s" never reads as the window of "10
// retries".
func TestPollingWordsNameTheirWindows(t *testing.T) {
	for _, c := range []struct {
		polls, retries  int
		cause, observed []string
	}{
		{1, 10,
			[]string{"Reconcile ran once in the last 3s while r waited for its Service", "since r was created, 10 of its reconciles asked for a retry", "that is polling"},
			[]string{"1 reconcile in the last 3s", "10 of the route's reconciles since it was created asked for a retry"}},
		{0, 1,
			[]string{"Reconcile did not run in the last 3s", "a retry is still waiting in its queue", "since r was created, 1 of its reconciles asked", "that is polling"},
			[]string{"0 reconciles in the last 3s", "1 of the route's reconciles since it was created"}},
		{-4, 2, // a restarted process's counter started again from zero
			[]string{"Reconcile did not run in the last 3s"}, []string{"0 reconciles in the last 3s"}},
	} {
		cause, observed := pollingWords("r", "its Service", c.polls, 3*time.Second, c.retries)
		for _, w := range c.cause {
			if !strings.Contains(cause, w) {
				t.Errorf("polls %d, retries %d: the cause does not say %q:\n%s", c.polls, c.retries, w, cause)
			}
		}
		for _, w := range c.observed {
			if !strings.Contains(observed, w) {
				t.Errorf("polls %d, retries %d: observed does not say %q:\n%s", c.polls, c.retries, w, observed)
			}
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
