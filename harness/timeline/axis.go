package timeline

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/10xdev/gw10/harness/evidence"
)

// Layout constants, in SVG pixels.
const (
	// quietGap is the longest stretch without events drawn to scale; a
	// longer one is drawn as a break of breakWidth that says how long it was.
	quietGap   = 1500 * time.Millisecond
	breakWidth = 44.0
	// pad is the time drawn before and after each busy stretch.
	pad = 250 * time.Millisecond
	// targetWidth is what the busy stretches of a check share, within the
	// bounds of minScale and maxScale pixels per second.
	targetWidth = 1000.0
	minScale    = 40.0
	maxScale    = 400.0
	gutter      = 96.0 // the lane names, left of the time axis
	tickRoom    = 22.0 // between a break and the nearest axis label
)

// stretch is a busy part of a check, drawn to scale from x.
type stretch struct {
	from, to time.Duration // since the check's start
	x        float64
}

// gap is a quiet part of a check drawn as a break.
type gap struct {
	x   float64
	dur time.Duration
}

// axis maps the time since a check's start to x, with quiet stretches
// compressed into breaks.
type axis struct {
	start     time.Time
	stretches []stretch
	gaps      []gap
	scale     float64 // pixels per second in the busy stretches
	width     float64 // the whole drawing, gutter included
}

// newAxis lays out the events of one check, from the first event's time to
// end (or the last event, when that is later).
func newAxis(events []evidence.Event, end time.Time) axis {
	a := axis{start: events[0].At}
	type span struct{ from, to time.Duration }
	spans := make([]span, 0, len(events)+1)
	if end.After(a.start) {
		spans = append(spans, span{end.Sub(a.start), end.Sub(a.start)})
	}
	for _, ev := range events {
		from := ev.At.Sub(a.start)
		to := from
		if ev.End.After(ev.At) {
			to = ev.End.Sub(a.start)
		}
		spans = append(spans, span{from, to})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	// Merge what is closer than quietGap; what is left between is quiet.
	var merged []span
	for _, s := range spans {
		if n := len(merged); n > 0 && s.from-merged[n-1].to <= quietGap {
			if s.to > merged[n-1].to {
				merged[n-1].to = s.to
			}
			continue
		}
		merged = append(merged, s)
	}
	busy := time.Duration(0)
	for i := range merged {
		merged[i].from = max(merged[i].from-pad, 0)
		merged[i].to += pad
		busy += merged[i].to - merged[i].from
	}
	a.scale = math.Max(minScale, math.Min(maxScale, targetWidth/busy.Seconds()))
	x := gutter
	for i, m := range merged {
		if i > 0 {
			a.gaps = append(a.gaps, gap{x: x, dur: m.from - merged[i-1].to})
			x += breakWidth
		}
		a.stretches = append(a.stretches, stretch{from: m.from, to: m.to, x: x})
		x += (m.to - m.from).Seconds() * a.scale
	}
	a.width = x + 16
	return a
}

// X is where a moment is drawn.
func (a axis) X(t time.Time) float64 {
	d := t.Sub(a.start)
	for i, s := range a.stretches {
		if d <= s.to || i == len(a.stretches)-1 {
			if d < s.from { // inside the break before s: at its right edge
				return s.x
			}
			return s.x + (d-s.from).Seconds()*a.scale
		}
	}
	return gutter
}

// tick is a labelled mark on the time axis.
type tick struct {
	X     float64
	Label string
}

// ticks are the axis labels: round seconds (or halves, or fives) inside the
// busy stretches.
func (a axis) ticks() []tick {
	step := 1.0
	switch {
	case a.scale >= 250:
		step = 0.25
	case a.scale >= 120:
		step = 0.5
	case a.scale < 60:
		step = 2
	}
	var out []tick
	for i, s := range a.stretches {
		first := math.Ceil(s.from.Seconds()/step) * step
		for v := first; v <= s.to.Seconds(); v += step {
			x := s.x + (v-s.from.Seconds())*a.scale
			// Leave room for a break's label on either side.
			if (i > 0 && x < s.x+tickRoom) || (i < len(a.stretches)-1 && x > s.x+(s.to-s.from).Seconds()*a.scale-tickRoom) {
				continue
			}
			out = append(out, tick{X: x, Label: trimSeconds(v)})
		}
	}
	return out
}

func trimSeconds(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s + " s"
}
