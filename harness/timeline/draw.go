package timeline

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/evidence"
)

// Lane geometry, in SVG pixels.
const (
	failStrip  = 20.0 // above the lanes: the failed expectations' words
	laneHeight = 62.0
	markY      = 47.0 // the markers' middle, from a lane's top
	labelRows  = 3
	labelTop   = 12.0 // the first label row's baseline, from a lane's top
	labelStep  = 11.0
	charWidth  = 5.6 // of the 10 px label font, for placing labels
	maxLabel   = 30  // characters
	axisHeight = 22.0
	minDrawing = 900.0 // wide enough for a failed expectation's words
	failChar   = 6.3   // width of a character of the 11 px bold failure label
)

// lanes are the sources in drawing order, with their names.
var lanes = []struct {
	source evidence.Source
	name   string
}{
	{evidence.Harness, "harness"},
	{evidence.APIServer, "API server"},
	{evidence.Controller, "controller"},
	{evidence.Proxy, "proxy"},
}

// drawing is one check's SVG.
type drawing struct {
	Width, Height float64
	Lanes         []laneView
	Ticks         []tick
	AxisY         float64
	Breaks        []breakView
	Items         []item
	Fails         []failView
	End           *endView
}

// endView marks where the check ended.
type endView struct {
	X     float64
	Label string
}

type laneView struct {
	Name    string
	Y, Mid  float64
	Striped bool
}

type breakView struct {
	X, W, Y, H float64
	Label      string
}

// item is one event drawn: a shape, an optional label, and the hover text.
type item struct {
	Shape      string // span, dot, diamond, tick, flag, cross
	Class      string
	X, Y, W, H float64
	Label      string
	LX, LY     float64
	Tip        string
}

// failView is a failed expectation: a line across every lane and its words.
type failView struct {
	X, Y1, Y2 float64
	Label     string
	LX        float64
	Anchor    string // text-anchor
	Tip       string
}

// draw lays out the events of one check that took dur.
func draw(events []evidence.Event, dur time.Duration) *drawing {
	if len(events) == 0 {
		return nil
	}
	// The check started a little before its first event: its end is at
	// most this. Drawing it shows how long nothing happened at the end.
	end := events[0].At.Add(dur)
	a := newAxis(events, end)
	d := &drawing{Width: max(a.width, minDrawing)}
	d.Ticks = a.ticks()
	if end.After(events[len(events)-1].At) {
		d.End = &endView{X: a.X(end), Label: "end " + trimSeconds(dur.Seconds())}
		kept := d.Ticks[:0]
		for _, t := range d.Ticks { // the end's label takes their place
			if t.X < d.End.X-3*tickRoom || t.X > d.End.X+3*tickRoom {
				kept = append(kept, t)
			}
		}
		d.Ticks = kept
	}
	laneOf := map[evidence.Source]int{}
	for i, l := range lanes {
		y := failStrip + float64(i)*laneHeight
		d.Lanes = append(d.Lanes, laneView{Name: l.name, Y: y, Mid: y + markY, Striped: i%2 == 1})
		laneOf[l.source] = i
	}
	bottom := failStrip + float64(len(lanes))*laneHeight
	d.AxisY = bottom
	d.Height = bottom + axisHeight
	for _, g := range a.gaps {
		d.Breaks = append(d.Breaks, breakView{X: g.x, W: breakWidth, Y: failStrip, H: bottom - failStrip,
			Label: "⋯ " + trimSeconds(g.dur.Seconds())})
	}
	rows := make([][labelRows]float64, len(lanes)) // where each label row is free from
	primary := primaryKind(events)
	for _, ev := range events {
		lane, ok := laneOf[ev.Source]
		if !ok {
			lane = 0
		}
		top := failStrip + float64(lane)*laneHeight
		it := shape(ev, a, primary)
		it.Y = top + markY
		it.Tip = tip(ev, a)
		if it.Label != "" {
			placeLabel(&it, &rows[lane], top)
		}
		d.Items = append(d.Items, it)
		if ev.Kind == evidence.Expectation && ev.Bad {
			d.Fails = append(d.Fails, failLabel(it, ev.Text, d.Width, bottom))
		}
	}
	return d
}

// failLabel draws a failed expectation: its words on the side of the line
// with more room, shortened to fit.
func failLabel(it item, text string, width, bottom float64) failView {
	f := failView{X: it.X, Y1: failStrip - 4, Y2: bottom, LX: it.X + 4, Anchor: "start", Tip: it.Tip}
	room := width - it.X - 8
	if left := it.X - 8; left > room {
		f.LX, f.Anchor, room = it.X-4, "end", left
	}
	f.Label = "✗ " + shorten(text, max(int(room/failChar), 12))
	return f
}

// primaryKind is the kind of the step's primary objects, as the check's
// evidence names it ("EdgeRoute" of "EdgeRoute ns/name"): the kind of the
// objects its status writes are of and its route actions act on. Empty
// when the check saw neither.
func primaryKind(events []evidence.Event) string {
	for _, ev := range events {
		switch {
		case ev.Kind == evidence.Status,
			ev.Trigger == evidence.RouteCreated, ev.Trigger == evidence.RouteEdited, ev.Trigger == evidence.RouteDeleted:
			if kind, _, ok := strings.Cut(ev.Object, " "); ok {
				return kind
			}
		}
	}
	return ""
}

// shape says how an event is drawn; an object of the primary kind is
// labelled without its kind, which every status mark shares.
func shape(ev evidence.Event, a axis, primary string) item {
	it := item{X: a.X(ev.At)}
	bad := ""
	if ev.Bad {
		bad = " bad"
	}
	switch ev.Kind {
	case evidence.Push, evidence.Withdraw:
		it.Shape, it.H = "span", 12
		it.W = 3.0
		if ev.End.After(ev.At) {
			it.W = max(a.X(ev.End)-it.X, 3)
		}
		if ev.Kind == evidence.Push {
			it.Class, it.Label = "push"+bad, "ACK"
			if ev.Bad {
				it.Label = "NACK"
			}
		} else {
			it.Class, it.Label = "withdraw"+bad, "withdraw"
		}
	case evidence.Status:
		it.Shape, it.Class, it.Label = "diamond", "status "+statusClass(ev), conditionsLabel(ev.Text)
	case evidence.Object:
		it.Shape, it.Class, it.Label = "dot", "object", ev.Text
		if primary != "" {
			it.Label = strings.TrimPrefix(ev.Text, primary+" ")
		}
	case evidence.Reconcile:
		n := 0
		for _, c := range ev.Count {
			n += c
		}
		it.Shape, it.Class, it.Label = "tick", "reconcile"+bad, fmt.Sprintf("×%d", n)
	case evidence.Log:
		it.Shape, it.Class = "dot", "log"+bad
		if ev.Bad {
			it.Label = "error"
		}
	case evidence.Action:
		it.Shape, it.Class, it.Label = "flag", "action", ev.Text
	case evidence.Expectation:
		it.Shape, it.Class = "cross", "expectation"+bad
	default:
		it.Shape, it.Class = "dot", "note"+bad
	}
	it.Label = shorten(it.Label, maxLabel)
	return it
}

// statusClass colours a status write: all conditions True, some False, or
// a write that changed nothing.
func statusClass(ev evidence.Event) string {
	switch {
	case ev.Bad:
		return "bad"
	case strings.Contains(ev.Text, "=False"):
		return "false"
	case strings.Contains(ev.Text, "=True"):
		return "true"
	}
	return "none"
}

// conditionsLabel makes "status of web: Accepted=True/Valid,
// Programmed=False/ServiceNotFound" into "A✓ P✗ ServiceNotFound".
func conditionsLabel(text string) string {
	_, conds, ok := strings.Cut(text, ": ")
	if !ok || !strings.Contains(conds, "=") {
		return text
	}
	var marks []string
	reason := ""
	for _, c := range strings.Split(conds, ", ") {
		typ, rest, _ := strings.Cut(c, "=")
		st, why, _ := strings.Cut(rest, "/")
		mark := "?"
		switch st {
		case "True":
			mark = "✓"
		case "False":
			mark = "✗"
			if reason == "" {
				reason = why
			}
		}
		initial, _ := utf8.DecodeRuneInString(typ)
		marks = append(marks, string(initial)+mark)
	}
	if reason != "" {
		marks = append(marks, reason)
	}
	return strings.Join(marks, " ")
}

// placeLabel puts a label in the first row of its lane with room for it,
// or drops it (the hover text still has it).
func placeLabel(it *item, rows *[labelRows]float64, top float64) {
	w := float64(utf8.RuneCountInString(it.Label)) * charWidth
	for r := range rows {
		if it.X >= rows[r] {
			it.LX, it.LY = it.X, top+labelTop+float64(r)*labelStep
			rows[r] = it.X + w + 6
			return
		}
	}
	it.Label = ""
}

// tip is the hover text: when, what, and the detail.
func tip(ev evidence.Event, a axis) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%.3f s", ev.At.Sub(a.start).Seconds())
	if ev.End.After(ev.At) {
		fmt.Fprintf(&b, " – %.3f s (%.1f ms)", ev.End.Sub(a.start).Seconds(), float64(ev.End.Sub(ev.At).Microseconds())/1000)
	}
	fmt.Fprintf(&b, " · %s %s", ev.Source, ev.Kind)
	if ev.Object != "" {
		fmt.Fprintf(&b, " · %s", ev.Object)
	}
	b.WriteString("\n" + ev.Text)
	if ev.Detail != "" && ev.Detail != ev.Text {
		b.WriteString("\n" + ev.Detail)
	}
	return b.String()
}

// shorten is the first line of s, at most n characters.
func shorten(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	return ctrlproc.Shorten(s, n)
}
