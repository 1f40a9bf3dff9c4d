package bench

import (
	"fmt"
	"slices"
	"sort"
)

// spreadOf returns the median run of points by cold-start ratio (the
// lower median for an even count: a run that happened, not an average of
// two) and the spread of the headline figures.
func spreadOf(points []Point) (Point, Spread) {
	byRatio := slices.Clone(points)
	sort.SliceStable(byRatio, func(i, j int) bool { return byRatio[i].Cold.RatioToLimit < byRatio[j].Cold.RatioToLimit })
	median := byRatio[(len(byRatio)-1)/2]
	sp := Spread{Routes: median.Routes}
	stat := func(f func(Point) float64) Stat {
		var vs []float64
		for _, p := range points {
			vs = append(vs, f(p))
		}
		slices.Sort(vs)
		return Stat{N: len(vs), Median: vs[(len(vs)-1)/2], Min: vs[0], Max: vs[len(vs)-1]}
	}
	sp.ColdRatio = stat(func(p Point) float64 { return p.Cold.RatioToLimit })
	sp.ColdSeconds = stat(func(p Point) float64 { return p.Cold.Seconds })
	sp.LimitPerSec = stat(func(p Point) float64 { return p.Limit.PerSecond })
	sp.SelfHealP50 = stat(func(p Point) float64 { return p.SelfHeal.P50 })
	sp.SpecP50 = stat(func(p Point) float64 { return p.SpecChange.P50 })
	sp.ColdCPUPerRt = stat(func(p Point) float64 { return p.Cold.PerRoute.CPUSeconds })
	return median, sp
}

// text is "0.50 (0.41–0.62)": the median and the range.
func (s Stat) text() string {
	return fmt.Sprintf("%s (%s–%s)", num(s.Median), num(s.Min), num(s.Max))
}

// spreadRows are the lines of the spread table, one per figure.
func (r *Result) spreadRows() [][]string {
	if len(r.Spread) == 0 {
		return nil
	}
	figures := []struct {
		name string
		of   func(Spread) Stat
	}{
		{"cold: ratio to the limit", func(s Spread) Stat { return s.ColdRatio }},
		{"cold: all Programmed (s)", func(s Spread) Stat { return s.ColdSeconds }},
		{"limit (writes/s)", func(s Spread) Stat { return s.LimitPerSec }},
		{"self-heal p50 (ms)", func(s Spread) Stat { return s.SelfHealP50 }},
		{"spec change p50 (ms)", func(s Spread) Stat { return s.SpecP50 }},
		{"cold: CPU s per route", func(s Spread) Stat { return s.ColdCPUPerRt }},
	}
	var rows [][]string
	for _, f := range figures {
		row := []string{f.name}
		for _, s := range r.Spread {
			row = append(row, f.of(s).text())
		}
		rows = append(rows, row)
	}
	return rows
}
