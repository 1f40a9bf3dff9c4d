package watch_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkSaveToVerdict measures, on the solution with one check
// (self-heal), what a learner waits for after a save: a compile error
// (s-to-build-error), and the verdict of the fixed code (s-to-verdict),
// each from the watch's first event of the save to its printed verdict;
// and the two parts of a verdict that take most of it: the build stage
// (s-build) and the check itself (s-check).
// The control plane starts once per benchmark run, outside the figures:
//
//	go test -run '^$' -bench SaveToVerdict -benchtime 5x ./harness/watch
func BenchmarkSaveToVerdict(b *testing.B) {
	s := startWatch(b, "self-heal")
	if section, headline, _ := s.waitRun(1, firstRun); !strings.Contains(section, "PASS self-heal") {
		b.Fatalf("the first run: %s", headline)
	}
	run := 1
	var buildErr, verdict, build, check float64
	b.ResetTimer()
	for i := range b.N {
		var errLat float64
		s.edit(conditionsFile, func(src string) string { return src + "\nvar _ = notDeclaredAnywhere\n" })
		run++
		section, _, lat := s.waitRun(run, laterRun)
		if !strings.Contains(section, "notDeclaredAnywhere") {
			b.Fatalf("run %d shows no compile error:\n%s", run, section)
		}
		buildErr, errLat = buildErr+lat, lat
		s.edit(conditionsFile, func(src string) string {
			return strings.TrimSuffix(src, "\nvar _ = notDeclaredAnywhere\n") + fmt.Sprintf("\n// save %d\n", i)
		})
		run++
		section, headline, lat := s.waitRun(run, laterRun)
		if !strings.Contains(section, "PASS self-heal") {
			b.Fatalf("run %d, fixed: %s\n%s", run, headline, section)
		}
		verdict += lat
		build += seconds(b, buildTime, section)
		check += seconds(b, checkTime, section)
		b.Logf("save %d: build error %.1fs, verdict %.1fs\n%s", i, errLat, lat, section)
	}
	b.ReportMetric(buildErr/float64(b.N), "s-to-build-error")
	b.ReportMetric(verdict/float64(b.N), "s-to-verdict")
	b.ReportMetric(build/float64(b.N), "s-build")
	b.ReportMetric(check/float64(b.N), "s-check")
	b.ReportMetric(0, "ns/op") // the figures above are the measure, not the loop's time
}

var (
	buildTime = regexp.MustCompile(`build \.\.\.\s+ok \(([0-9.]+)s\)`)
	checkTime = regexp.MustCompile(`PASS self-heal\s+([0-9.]+)s`)
)

// seconds is the time a run's section gives at re's group.
func seconds(b *testing.B, re *regexp.Regexp, section string) float64 {
	b.Helper()
	m := re.FindStringSubmatch(section)
	if m == nil {
		b.Fatalf("no %s in:\n%s", re, section)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}
