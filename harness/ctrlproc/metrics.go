package ctrlproc

import (
	"context"
	"fmt"
	"net/http"

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
	ByResult        map[string]float64
	ReconcileErrors float64 // controller_runtime_reconcile_errors_total
	Panics          float64 // controller_runtime_reconcile_panics_total
	ActiveWorkers   float64 // controller_runtime_active_workers
	QueueDepth      float64 // workqueue_depth
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
		ReconcileTotal:  sum(families["controller_runtime_reconcile_total"]),
		ByResult:        byLabel(families["controller_runtime_reconcile_total"], "result"),
		ReconcileErrors: sum(families["controller_runtime_reconcile_errors_total"]),
		Panics:          sum(families["controller_runtime_reconcile_panics_total"]),
		ActiveWorkers:   sum(families["controller_runtime_active_workers"]),
		QueueDepth:      sum(families["workqueue_depth"]),
	}, nil
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
