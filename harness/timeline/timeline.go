// Package timeline renders what the harness saw during each check of a run
// (the checks' evidence) as one self-contained HTML page: one section per
// check, one lane per source (harness, API server, controller, proxy), time
// in seconds from the check's start, quiet stretches compressed. The SVG is
// drawn here, in Go; the page loads nothing (its Content-Security-Policy
// forbids it) and its only script shows the hovered event's details.
package timeline

import (
	_ "embed"
	"fmt"
	"github.com/10xdev/gw10/harness/words"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/10xdev/gw10/harness/evidence"
	"github.com/10xdev/gw10/harness/report"
)

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("timeline").Funcs(template.FuncMap{
	"f":    func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"add":  func(a, b float64) float64 { return a + b },
	"half": func(v float64) float64 { return v / 2 },
}).Parse(pageTemplate))

type pageView struct {
	Step, Cluster, Started, Headline string
	OK                               bool
	Stages                           []report.Stage // the failed ones
	Checks                           []checkView
}

type checkView struct {
	ID, Title, Status, Duration string
	Counts                      string
	Message                     string
	Causes                      []string
	Drawing                     *drawing
}

// Render writes the timeline page of a run.
func Render(w io.Writer, rep *report.Report) error {
	v := pageView{Step: rep.Dir, Cluster: rep.Cluster, Headline: rep.Headline(), OK: rep.Summary.OK}
	for _, st := range rep.Stages {
		if st.Status == report.Fail {
			v.Stages = append(v.Stages, st)
		}
	}
	if !rep.Started.IsZero() {
		v.Started = rep.Started.UTC().Format(time.RFC3339)
	}
	for _, c := range rep.Checks {
		v.Checks = append(v.Checks, checkView{
			ID: c.ID, Title: c.Title, Status: string(c.Status),
			Duration: fmt.Sprintf("%.1f s", float64(c.Duration)),
			Counts:   counts(c.Evidence), Message: c.Message, Causes: c.Causes,
			Drawing: draw(c.Evidence, time.Duration(float64(c.Duration)*float64(time.Second))),
		})
	}
	if err := page.Execute(w, v); err != nil {
		return fmt.Errorf("rendering the timeline: %w", err)
	}
	return nil
}

// Write writes the timeline page of a run to path, creating its directory.
func Write(path string, rep *report.Report) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the timeline: %w", err)
	}
	if err := Render(f, rep); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the timeline %s: %w", path, err)
	}
	return nil
}

// counts is the check's activity in one line: what tells a quiet,
// event-driven controller from a busy one at a glance.
func counts(events []evidence.Event) string {
	if len(events) == 0 {
		return ""
	}
	tl := evidence.TallyAfter(events, events[0].At, "")
	parts := []string{
		words.Count(tl.Reconciles, "reconcile", "reconciles"),
		words.Count(tl.StatusWrites, "status write", "status writes"),
		words.Count(tl.Pushes, "push", "pushes"),
	}
	if tl.NACKs > 0 {
		parts[len(parts)-1] += fmt.Sprintf(" (%d refused)", tl.NACKs)
	}
	parts = append(parts, words.Count(tl.Withdraws, "withdraw", "withdraws"))
	return strings.Join(parts, " · ")
}
