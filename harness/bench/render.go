package bench

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
)

// row is one figure across the runs.
type row struct {
	name  string
	value func(Point) string
}

func rows() []row {
	cold := func(f func(Cold) string) func(Point) string {
		return func(r Point) string {
			if !r.Cold.Measured {
				return "n/a"
			}
			return f(r.Cold)
		}
	}
	restart := func(f func(Restart) string) func(Point) string {
		return func(r Point) string {
			if !r.Restart.Measured {
				return "n/a"
			}
			return f(r.Restart)
		}
	}
	return []row{
		{"limit: status writes/s (workers)", func(r Point) string { return fmt.Sprintf("%.0f (%d)", r.Limit.PerSecond, r.Limit.Workers) }},
		{"limit: time for N writes", func(r Point) string { return fmt.Sprintf("%.2f s", r.Limit.Seconds) }},
		{"cold: all Programmed", cold(func(c Cold) string { return fmt.Sprintf("%.2f s", c.Seconds) })},
		{"cold: from ready", cold(func(c Cold) string { return fmt.Sprintf("%.2f s", c.FromReady) })},
		{"cold: routes/s", cold(func(c Cold) string { return fmt.Sprintf("%.0f", c.RoutesPerSec) })},
		{"cold: × the limit", cold(func(c Cold) string { return fmt.Sprintf("%.2f", c.RatioToLimit) })},
		{"cold: Programmed", func(r Point) string { return fmt.Sprintf("%d/%d", r.Cold.Programmed, r.Routes) }},
		{"restart: queue drained", restart(func(x Restart) string { return fmt.Sprintf("%.2f s", x.Seconds) })},
		{"restart: status writes", func(r Point) string { return fmt.Sprintf("%.0f", r.Restart.StatusWrites) }},
		{"restart: proxy pushes", func(r Point) string { return fmt.Sprintf("%.0f", r.Restart.ProxyPushes) }},
		{"self-heal p50/p95/p99/max", func(r Point) string { return latencies(r.SelfHeal) }},
		{"spec change p50/p95/p99/max", func(r Point) string { return latencies(r.SpecChange) }},
		{"per route: reconciles", func(r Point) string { return num(r.Cold.PerRoute.Reconciles) }},
		{"per route: status writes", func(r Point) string { return num(r.Cold.PerRoute.StatusWrites) }},
		{"per route: API requests", func(r Point) string { return num(r.Cold.PerRoute.APIRequests) }},
		{"per route: proxy pushes", func(r Point) string { return num(r.Cold.PerRoute.ProxyPushes) }},
		{"per route: CPU", func(r Point) string { return fmt.Sprintf("%.2f ms", r.Cold.PerRoute.CPUSeconds*1000) }},
		{"peak RSS", func(r Point) string { return fmt.Sprintf("%.0f MiB", float64(r.Cold.Cost.PeakRSS)/(1<<20)) }},
	}
}

func latencies(l Latency) string {
	if !l.Measured {
		return "n/a"
	}
	return fmt.Sprintf("%.0f/%.0f/%.0f/%.0f ms", l.P50, l.P95, l.P99, l.Max)
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Terminal writes the table: a column per N, a row per figure.
func (r *Result) Terminal(w io.Writer) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	header := "\tN ="
	for _, run := range r.Runs {
		header += "\t" + strconv.Itoa(run.Routes)
	}
	fmt.Fprintln(tw, header+"\t")
	for _, rw := range rows() {
		line := "\t" + rw.name
		for _, run := range r.Runs {
			line += "\t" + rw.value(run)
		}
		fmt.Fprintln(tw, line+"\t")
	}
	_ = tw.Flush()
	if rows := r.spreadRows(); rows != nil {
		fmt.Fprintf(w, "\nover %d runs of each N, median (least–most); the table above is the median run:\n", r.Repeat)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
		for _, row := range rows {
			fmt.Fprintln(tw, "\t"+strings.Join(row, "\t")+"\t")
		}
		_ = tw.Flush()
	}
	fmt.Fprintln(w)
	for _, s := range r.said() {
		fmt.Fprintln(w, s)
	}
}

// said is what the table cannot show: growth, what was not measured, notes.
func (r *Result) said() []string {
	out := []string{r.Growth.Sentence}
	for _, run := range r.Runs {
		for _, n := range []struct{ what, note string }{{"cold start", run.Cold.Note}, {"restart", run.Restart.Note},
			{"self-heal", run.SelfHeal.Note}, {"spec change", run.SpecChange.Note}} {
			if n.note != "" {
				out = append(out, fmt.Sprintf("N=%d %s: %s", run.Routes, n.what, n.note))
			}
		}
	}
	out = append(out, r.Notes...)
	load := func(l []float64) string {
		if len(l) < 3 {
			return "unknown"
		}
		return fmt.Sprintf("%.2f %.2f %.2f", l[0], l[1], l[2])
	}
	flags := "none beyond the harness's own"
	if len(r.ControllerArgs) > 0 {
		flags = strings.Join(r.ControllerArgs, " ")
	}
	out = append(out, fmt.Sprintf("%s on %s, %d CPUs, load average before %s, after %s; controller flags: %s",
		r.Step, r.Cluster, r.CPUs, load(r.LoadBefore), load(r.LoadAfter), flags))
	return out
}

// Markdown writes the table and the sentences as a Markdown section.
func (r *Result) Markdown(w io.Writer) {
	fmt.Fprintf(w, "### Bench: %s (%s)\n\n", r.Step, r.Started.Format("2006-01-02 15:04 UTC"))
	var ns []int
	for _, run := range r.Runs {
		ns = append(ns, run.Routes)
	}
	markdownHeader(w, ns)
	for _, rw := range rows() {
		fmt.Fprintf(w, "| %s |", rw.name)
		for _, run := range r.Runs {
			fmt.Fprintf(w, " %s |", rw.value(run))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	if rows := r.spreadRows(); rows != nil {
		fmt.Fprintf(w, "Over %d runs of each N, median (least–most); the table above is the median run by cold-start ratio:\n\n", r.Repeat)
		var ns []int
		for _, sp := range r.Spread {
			ns = append(ns, sp.Routes)
		}
		markdownHeader(w, ns)
		for _, row := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
		fmt.Fprintln(w)
	}
	for _, s := range r.said() {
		fmt.Fprintf(w, "- %s\n", s)
	}
	if h := r.Harness; h != nil {
		fmt.Fprintf(w, "\n#### The harness's own figures (%s, %s): %.1f s in all\n\n| stage or check | status | seconds |\n|---|---|---:|\n",
			h.Step, h.Source, h.Seconds)
		for _, t := range append(append([]Timing{}, h.Stages...), h.Checks...) {
			fmt.Fprintf(w, "| %s | %s | %.2f |\n", t.Name, t.Status, t.Seconds)
		}
	}
}

// markdownHeader writes a table's header: a figure column, one per N.
func markdownHeader(w io.Writer, ns []int) {
	fmt.Fprint(w, "| figure |")
	for _, n := range ns {
		fmt.Fprintf(w, " N=%d |", n)
	}
	fmt.Fprint(w, "\n|---|")
	for range ns {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
}

// WriteMarkdown writes Markdown to path.
func (r *Result) WriteMarkdown(path string) error {
	var b strings.Builder
	r.Markdown(&b)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
