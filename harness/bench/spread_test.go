package bench

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepeatsGiveTheMedianRunAndTheSpread: three runs of one N keep the
// run whose cold-start ratio is the median, the spread's least and most,
// both tables, and JSON the documented schema accepts.
func TestRepeatsGiveTheMedianRunAndTheSpread(t *testing.T) {
	run := func(ratio, limit float64) Point {
		p := Point{Routes: 1000}
		p.Cold.Measured, p.Cold.RatioToLimit, p.Cold.Seconds = true, ratio, 1000/(ratio*limit)
		p.Limit.PerSecond = limit
		return p
	}
	median, sp := spreadOf([]Point{run(0.83, 110), run(0.50, 322), run(0.61, 200)})
	if median.Cold.RatioToLimit != 0.61 || median.Limit.PerSecond != 200 {
		t.Errorf("the median run is %+v, want the one at 0.61", median.Cold)
	}
	if r := sp.ColdRatio; r.N != 3 || r.Median != 0.61 || r.Min != 0.5 || r.Max != 0.83 {
		t.Errorf("the cold ratio's spread is %+v", r)
	}
	if l := sp.LimitPerSec; l.Min != 110 || l.Max != 322 || l.Median != 200 {
		t.Errorf("the limit's spread is %+v", l)
	}
	// An even count keeps a run that happened: the lower median.
	if m, _ := spreadOf([]Point{run(0.7, 1), run(0.5, 1)}); m.Cold.RatioToLimit != 0.5 {
		t.Errorf("of two runs the median is %v, want 0.5", m.Cold.RatioToLimit)
	}

	res := &Result{Schema: SchemaVersion, Repeat: 3, LoadBefore: []float64{1, 1, 1}, LoadAfter: []float64{1, 1, 1},
		ControllerArgs: []string{}, Notes: []string{}, Runs: []Point{median}, Spread: []Spread{sp}}
	var term, md bytes.Buffer
	res.Terminal(&term)
	res.Markdown(&md)
	for name, out := range map[string]string{"terminal": term.String(), "markdown": md.String()} {
		for _, want := range []string{"over 3 runs of each N", "0.61 (0.5–0.83)"} {
			if !strings.Contains(strings.ToLower(out), strings.ToLower(want)) {
				t.Errorf("the %s table lacks %q:\n%s", name, want, out)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "bench.json")
	if err := res.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	validateAgainstDoc(t, path)
}
