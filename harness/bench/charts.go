package bench

import (
	"fmt"
	"image/color"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Chart file names, written into the directory WriteCharts is given.
const (
	LatencyChart  = "bench-latency.png"
	PerRouteChart = "bench-per-route.png"
)

// chartSize keeps the images small enough for the docs.
var chartWidth, chartHeight = 6 * vg.Inch, 3.5 * vg.Inch

var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

// WriteCharts draws the latency distribution and the time per route
// against N as PNG files in dir, and returns their paths. A chart with
// nothing measured is not drawn.
func (r *Result) WriteCharts(dir string) ([]string, error) {
	var paths []string
	for name, draw := range map[string]func() (*plot.Plot, bool){LatencyChart: r.latencyPlot, PerRouteChart: r.perRoutePlot} {
		p, ok := draw()
		if !ok {
			continue
		}
		path := filepath.Join(dir, name)
		if err := p.Save(chartWidth, chartHeight, path); err != nil {
			return paths, fmt.Errorf("drawing %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	slices.Sort(paths)
	return paths, nil
}

// latencyPlot: for each N and change, the share of changes Programmed
// within x ms (an empirical CDF).
func (r *Result) latencyPlot() (*plot.Plot, bool) {
	p := plot.New()
	p.Title.Text = "Change → Programmed=True seen on a watch"
	p.X.Label.Text = "latency (ms)"
	p.Y.Label.Text = "share of changes"
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	p.Add(plotter.NewGrid())
	i := 0
	for _, run := range r.Runs {
		for _, l := range []struct {
			name string
			lat  Latency
		}{{"self-heal", run.SelfHeal}, {"spec change", run.SpecChange}} {
			if !l.lat.Measured {
				continue
			}
			line, err := plotter.NewLine(cdf(l.lat.Samples))
			if err != nil {
				continue
			}
			line.Color = palette[i%len(palette)]
			line.Width = vg.Points(1.5)
			if l.name == "spec change" {
				line.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
			}
			p.Add(line)
			p.Legend.Add(fmt.Sprintf("%s, N=%d", l.name, run.Routes), line)
			i++
		}
	}
	return p, i > 0
}

func cdf(samples []float64) plotter.XYs {
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	xys := make(plotter.XYs, 0, len(sorted)+1)
	xys = append(xys, plotter.XY{X: 0, Y: 0})
	for i, v := range sorted {
		xys = append(xys, plotter.XY{X: v, Y: float64(i+1) / float64(len(sorted))})
	}
	return xys
}

// perRoutePlot: milliseconds per route against N for the limit, the cold
// start and the converged restart, on logarithmic N. Flat lines are
// linear totals.
func (r *Result) perRoutePlot() (*plot.Plot, bool) {
	p := plot.New()
	p.Title.Text = "Time per route against N"
	p.X.Label.Text = "routes (N)"
	p.Y.Label.Text = "ms per route"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min = 0
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	series := []struct {
		name string
		ms   func(Point) (float64, bool)
	}{
		{"the limit (status write)", func(x Point) (float64, bool) { return x.Limit.MsPerItem, x.Limit.PerSecond > 0 }},
		{"cold start", func(x Point) (float64, bool) { return x.Cold.Seconds * 1000 / float64(x.Routes), x.Cold.Measured }},
		{"converged restart", func(x Point) (float64, bool) { return x.Restart.Seconds * 1000 / float64(x.Routes), x.Restart.Measured }},
	}
	drawn := 0
	for i, s := range series {
		var xys plotter.XYs
		for _, run := range r.Runs {
			if v, ok := s.ms(run); ok && run.Routes > 0 {
				xys = append(xys, plotter.XY{X: float64(run.Routes), Y: v})
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			continue
		}
		line.Color, points.Color = palette[i], palette[i]
		points.Shape = draw.CircleGlyph{}
		p.Add(line, points)
		p.Legend.Add(s.name, line, points)
		drawn++
	}
	return p, drawn > 0
}
