package timeline

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/report"
)

// sample is a failed check's evidence: a route created, its Service
// missing, a 4 s quiet stretch, then an expectation not met.
func sample() *report.Report {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	evs := []evidence.Event{
		{At: at(0), Source: evidence.Harness, Kind: evidence.Action, Trigger: evidence.RouteCreated, Text: "created EdgeRoute web"},
		{At: at(5), Source: evidence.APIServer, Kind: evidence.Object, Object: "EdgeRoute ns/web", Text: "EdgeRoute web exists (generation 1)"},
		{At: at(40), Source: evidence.APIServer, Kind: evidence.Status, Object: "EdgeRoute ns/web",
			Text: "status of web: Accepted=False/ServiceNotFound, Programmed=False/ServiceNotFound", Detail: `{"conditions": []}`},
		{At: at(100), Source: evidence.Controller, Kind: evidence.Reconcile, Count: map[string]int{"success": 2}, Text: "2 reconciles"},
		{At: at(300), Source: evidence.Harness, Kind: evidence.Action, Trigger: "service-created", Text: "created Service web <b>"},
		{At: at(320), End: at(324), Source: evidence.Proxy, Kind: evidence.Push, Text: "push web refused: nope", Bad: true, Detail: "hostname=a.example"},
		{At: at(4500), Source: evidence.Harness, Kind: evidence.Expectation, Bad: true, Text: "expected Programmed=True", Detail: "expected Programmed=True\nsaw False"},
	}
	return &report.Report{Dir: "step07", Cluster: "envtest", Summary: report.Summary{Gradable: true, Total: 2, Failed: 1, Skipped: 1}, Checks: []report.CheckResult{
		{ID: "self-heal", Title: "heals", Status: report.Fail, Message: "expected Programmed=True", Evidence: evs},
		{ID: "quiescent", Title: "quiet", Status: report.Skip, Message: "not run: --run left it out"},
	}}
}

func TestQuietStretchesAreDrawnAsBreaksWithTheirLength(t *testing.T) {
	a := newAxis(sample().Checks[0].Evidence, time.Time{})
	if len(a.gaps) != 1 {
		t.Fatalf("want 1 break (the 4 s between 0.324 s and 4.5 s), got %d: %+v", len(a.gaps), a.gaps)
	}
	// 4.5 s - 0.324 s, less the padding drawn on both sides.
	if got, want := a.gaps[0].dur, 4176*time.Millisecond-2*pad; got != want {
		t.Fatalf("break of %s, want %s", got, want)
	}
	t0 := a.start
	if x1, x2 := a.X(t0.Add(324*time.Millisecond)), a.X(t0.Add(4500*time.Millisecond)); x2-x1 > breakWidth+2*pad.Seconds()*a.scale+1 {
		t.Fatalf("the quiet stretch takes %.0f px, more than the break and its padding", x2-x1)
	}
}

func TestConditionsLabel(t *testing.T) {
	for in, want := range map[string]string{
		"status of web: Accepted=True/Valid, Programmed=True/Synced":                "A✓ P✓",
		"status of web: Accepted=True/Valid, Programmed=False/PushFailed":           "A✓ P✗ PushFailed",
		"status of web: no conditions":                                              "status of web: no conditions",
		"status of web: Accepted=Unknown/Pending, Programmed=False/ServiceNotFound": "A? P✗ ServiceNotFound",
	} {
		if got := conditionsLabel(in); got != want {
			t.Errorf("conditionsLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPageIsSelfContainedAndMarksTheFailure(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, sample()); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	assertOffline(t, html)
	for _, want := range []string{
		`data-lane="harness"`, `data-lane="API server"`, `data-lane="controller"`, `data-lane="proxy"`,
		`data-check="self-heal" data-status="fail"`, `data-expectation="failed"`, "✗ expected Programmed=True",
		"A✗ P✗ ServiceNotFound", "created Service web &lt;b&gt;", "hostname=a.example", "NACK",
		`data-check="quiescent" data-status="skip"`, "not run: --run left it out",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// offSite finds what could make a page reach off the machine: a URL with a
// scheme whose host is not this machine, and the HTML and CSS that load
// something (src, link, import, url()).
var (
	schemeURL = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://(\[[^\]]*\]|[^/\s"'<>:]*)`)
	loader    = regexp.MustCompile(`(?i)\ssrc\s*=|<link\b|<iframe\b|<object\b|<embed\b|@import|url\(`)
)

// offline lists what could make a page reach off the machine.
func offline(html string) []string {
	var out []string
	for _, m := range schemeURL.FindAllStringSubmatch(html, -1) {
		switch m[1] {
		case "127.0.0.1", "localhost", "[::1]":
		default:
			out = append(out, "a place off the machine: "+m[0])
		}
	}
	for _, m := range loader.FindAllString(html, 5) {
		out = append(out, "something loaded: "+m)
	}
	if !strings.Contains(html, "default-src 'none'") {
		out = append(out, "no Content-Security-Policy that forbids loading anything")
	}
	return out
}

// assertOffline fails when the page could reach off the machine.
func assertOffline(t *testing.T, html string) {
	t.Helper()
	for _, p := range offline(html) {
		t.Error("the page has " + p)
	}
}

func TestOfflineCheckCatchesWhatReachesOut(t *testing.T) {
	for _, page := range []string{
		`<img src="x.png">`, `<a href="https://example.com/">`, `<style>@import "a.css"</style>`,
		`<div style="background: url(a.png)">`, `see http://10.0.0.1/v1`,
	} {
		if len(offline(page+"default-src 'none'")) == 0 {
			t.Errorf("offline passed %q", page)
		}
	}
	if p := offline("log: dataplane http://127.0.0.1:4567/v1 default-src 'none'"); len(p) > 0 {
		t.Errorf("a loopback address in a log line counts as off the machine: %q", p)
	}
}

// TestAnObjectOfThePrimaryKindIsLabelledWithoutItsKind: the kind the
// check's route actions name is left out of its objects' labels, whatever
// the step calls it; another kind's objects keep theirs.
func TestAnObjectOfThePrimaryKindIsLabelledWithoutItsKind(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	events := []evidence.Event{
		{At: at(0), Source: evidence.Harness, Kind: evidence.Action, Trigger: evidence.RouteCreated, Object: "Widget ns/w", Text: "creating Widget w"},
		{At: at(5), Source: evidence.APIServer, Kind: evidence.Object, Object: "Widget ns/w", Text: "Widget w exists (generation 1)"},
		{At: at(9), Source: evidence.APIServer, Kind: evidence.Object, Object: "Service ns/s", Text: "Service s created"},
	}
	var labels []string
	for _, it := range draw(events, time.Second).Items {
		if it.Class == "object" {
			labels = append(labels, it.Label)
		}
	}
	if want := []string{"w exists (generation 1)", "Service s created"}; !slices.Equal(labels, want) {
		t.Errorf("object labels %q, want %q", labels, want)
	}
}
