package runner

import (
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/evidence"
)

// TestDoneOutsideCountsTheCurrentProcesssWork: what the proxy and the API
// server saw counts from the check's last restart of the controller (a new
// process's counters start at 0, so the old one's pushes say nothing of
// its metrics), and nothing seen says nothing.
func TestDoneOutsideCountsTheCurrentProcesssWork(t *testing.T) {
	at := time.Now()
	ev := func(s int, kind evidence.Kind, tr evidence.Trigger) evidence.Event {
		return evidence.Event{At: at.Add(time.Duration(s) * time.Second), Kind: kind, Trigger: tr}
	}
	before := []evidence.Event{ev(1, evidence.Push, ""), ev(2, evidence.Push, ""), ev(3, evidence.Status, "")}
	if got, want := doneOutside(before), "the proxy received 2 pushes and withdraws and the API server 1 status write"; got != want {
		t.Errorf("doneOutside = %q, want %q", got, want)
	}
	restarted := append(append([]evidence.Event{}, before...), ev(4, evidence.Action, evidence.Killed), ev(5, evidence.Action, evidence.Restarted))
	if got := doneOutside(restarted); got != "" {
		t.Errorf("the old process's work counted for the new one: %q", got)
	}
	if got, want := doneOutside(append(restarted, ev(6, evidence.Withdraw, ""))), "the proxy received 1 push or withdraw"; got != want {
		t.Errorf("doneOutside = %q, want %q", got, want)
	}
}
