package checks

import (
	"strings"
	"testing"
	"time"
)

// TestHalfWrittenStatusesAreFound: a write of one condition at a time shows
// as a version whose conditions describe two generations; whole writes,
// other routes and versions before the window do not.
func TestHalfWrittenStatusesAreFound(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 4, 0, 0, 0, time.UTC)
	conds := func(a, p int64) []condition {
		return []condition{{Type: "Accepted", Status: "True", ObservedGeneration: a}, {Type: "Programmed", Status: "True", ObservedGeneration: p}}
	}
	versions := []seenVersion{
		{at: t0, name: "r", rv: "1", generation: 1, conds: conds(1, 1)},
		{at: t0.Add(time.Second), name: "r", rv: "2", generation: 2, conds: conds(1, 1)},     // the spec edit
		{at: t0.Add(2 * time.Second), name: "r", rv: "3", generation: 2, conds: conds(2, 1)}, // Accepted written alone
		{at: t0.Add(3 * time.Second), name: "r", rv: "4", generation: 2, conds: conds(2, 2)},
		{at: t0.Add(3 * time.Second), name: "other", rv: "5", generation: 2, conds: conds(2, 1)},
	}
	got := halfWritten(versions, "r", t0)
	if len(got) != 1 || !strings.Contains(got[0], "resourceVersion 3") || !strings.Contains(got[0], "Programmed=True observedGeneration=1") {
		t.Errorf("halfWritten = %q, want the one version with Accepted at 2 and Programmed at 1", got)
	}
	if got := halfWritten(versions, "r", t0.Add(2500*time.Millisecond)); len(got) != 0 {
		t.Errorf("before the window: %q", got)
	}
	if got := halfWritten(versions[:2], "r", t0); len(got) != 0 {
		t.Errorf("whole writes called half-written: %q", got)
	}
}
