package ctrlproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics are the controller-runtime figures the checks and the diagnosis use,
// summed over every controller in the process.
type Metrics struct {
	ReconcileTotal float64 // controller_runtime_reconcile_total
	// ByResult splits ReconcileTotal by its result label: success, error,
	// requeue, requeue_after.
	ByResult      map[string]float64
	Panics        float64 // controller_runtime_reconcile_panics_total
	ActiveWorkers float64 // controller_runtime_active_workers
	MaxWorkers    float64 // controller_runtime_max_concurrent_reconciles
	QueueDepth    float64 // workqueue_depth
	// RESTRequests are the API requests the process made
	// (rest_client_requests_total).
	RESTRequests float64
}

// Idle reports that nothing is queued or being reconciled.
func (m Metrics) Idle() bool { return m.ActiveWorkers == 0 && m.QueueDepth == 0 }

// Scrape reads /metrics.
func (p *Process) Scrape(ctx context.Context) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.MetricsAddr+"/metrics", nil)
	if err != nil {
		return Metrics{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Metrics{}, fmt.Errorf("scraping controller metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Metrics{}, fmt.Errorf("scraping controller metrics: HTTP %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return Metrics{}, fmt.Errorf("parsing controller metrics: %w", err)
	}
	return Metrics{
		ReconcileTotal: sum(families["controller_runtime_reconcile_total"]),
		ByResult:       byLabel(families["controller_runtime_reconcile_total"], "result"),
		Panics:         sum(families["controller_runtime_reconcile_panics_total"]),
		ActiveWorkers:  sum(families["controller_runtime_active_workers"]),
		MaxWorkers:     sum(families["controller_runtime_max_concurrent_reconciles"]),
		QueueDepth:     sum(families["workqueue_depth"]),
		RESTRequests:   sum(families["rest_client_requests_total"]),
	}, nil
}

// PID is the process's id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Usage is what the process has used so far, read from /proc.
type Usage struct {
	CPUSeconds float64 // user + system time
	PeakRSS    int64   // bytes: VmHWM, the resident set's high-water mark
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// Usage reads /proc/<pid>/stat and /proc/<pid>/status.
func (p *Process) Usage() (Usage, error) {
	return ReadUsage(p.PID())
}

// ReadUsage reads the CPU time and peak RSS of process pid from /proc.
func ReadUsage(pid int) (Usage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("reading the controller's CPU time: %w", err)
	}
	// The command name (field 2) may hold spaces: count fields after its ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return Usage{}, fmt.Errorf("parsing /proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 { // utime and stime are fields 14 and 15 of the whole line
		return Usage{}, fmt.Errorf("parsing /proc/%d/stat: %d fields", pid, len(fields))
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return Usage{}, fmt.Errorf("parsing /proc/%d/stat: %w", pid, err)
	}
	u := Usage{CPUSeconds: (utime + stime) / clockTicks}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("reading the controller's memory use: %w", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return Usage{}, fmt.Errorf("parsing VmHWM in /proc/%d/status: %w", pid, err)
			}
			u.PeakRSS = kb * 1024
		}
	}
	return u, nil
}

func sum(mf *dto.MetricFamily) float64 {
	if mf == nil {
		return 0
	}
	var total float64
	for _, m := range mf.GetMetric() {
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Untyped != nil:
			total += m.GetUntyped().GetValue()
		}
	}
	return total
}

// byLabel sums a family's samples by the value of one label.
func byLabel(mf *dto.MetricFamily, label string) map[string]float64 {
	out := map[string]float64{}
	if mf == nil {
		return out
	}
	for _, m := range mf.GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == label {
				out[lp.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	return out
}
