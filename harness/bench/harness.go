package bench

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/10xdev/gw10/harness/report"
)

// ReadHarnessFigures takes the stage and check wall times out of a
// `gw10 check --json` report.
func ReadHarnessFigures(path string) (*HarnessFigures, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the check report: %w", err)
	}
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("parsing the check report %s: %w", path, err)
	}
	h := &HarnessFigures{Source: "gw10 check --json", Step: rep.Dir, Seconds: round(float64(rep.Duration), 2),
		Stages: []Timing{}, Checks: []Timing{}}
	for _, st := range rep.Stages {
		h.Stages = append(h.Stages, Timing{Name: st.Name, Status: string(st.Status), Seconds: round(float64(st.Duration), 2)})
	}
	for _, c := range rep.Checks {
		h.Checks = append(h.Checks, Timing{Name: c.ID, Status: string(c.Status), Seconds: round(float64(c.Duration), 2)})
	}
	return h, nil
}
