package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// SchemaVersion names the JSON format documented in docs/bench.md.
const SchemaVersion = "gw10-bench/v1"

// Result is one bench run: its JSON form is documented in docs/bench.md.
type Result struct {
	Schema  string    `json:"schema"`
	Step    string    `json:"step"`
	Cluster string    `json:"cluster"`
	Started time.Time `json:"started"`
	// Seconds is the run's wall time, setup included.
	Seconds float64 `json:"seconds"`
	// CPUs and the load averages (1, 5, 15 min) before and after the run
	// say how busy the machine was: absolute times depend on it.
	CPUs           int       `json:"cpus"`
	LoadBefore     []float64 `json:"loadBefore"`
	LoadAfter      []float64 `json:"loadAfter"`
	ControllerArgs []string  `json:"controllerArgs"`
	// Setup are the pipeline's stages (build, generate, cluster, ...).
	Setup []Timing `json:"setup"`
	// Repeat is how many times each N was measured; Runs holds, for each
	// N, the median run by cold-start ratio, and Spread (Repeat > 1) the
	// median, least and most of the headline figures over the repeats.
	Repeat int      `json:"repeat"`
	Runs   []Point  `json:"runs"`
	Spread []Spread `json:"spread,omitempty"`
	Growth Growth   `json:"growth"`
	Notes  []string `json:"notes"`
	// Harness are the harness's own figures from a `gw10 check --json`
	// report, when one was given.
	Harness *HarnessFigures `json:"harness,omitempty"`
}

// Spread is how one N's headline figures varied over the repeats.
type Spread struct {
	Routes       int  `json:"routes"`
	ColdRatio    Stat `json:"coldRatioToLimit"`
	ColdSeconds  Stat `json:"coldSeconds"`
	LimitPerSec  Stat `json:"limitWritesPerS"`
	SelfHealP50  Stat `json:"selfHealP50Ms"`
	SpecP50      Stat `json:"specChangeP50Ms"`
	ColdCPUPerRt Stat `json:"coldCpuSecondsPerRoute"`
}

// Stat is the median, least and most of a figure over N measurements.
type Stat struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Timing is a named duration.
type Timing struct {
	Name    string  `json:"name"`
	Status  string  `json:"status"`
	Seconds float64 `json:"seconds"`
}

// Point holds the figures for one number of routes.
type Point struct {
	Routes     int     `json:"routes"`
	Limit      Limit   `json:"limit"`
	Cold       Cold    `json:"cold"`
	Restart    Restart `json:"restart"`
	SelfHeal   Latency `json:"selfHeal"`
	SpecChange Latency `json:"specChange"`
}

// Limit is the API server's raw throughput for status writes.
type Limit struct {
	// ByWorkers maps a worker count ("1", "4", "16") to status writes per second.
	ByWorkers map[string]float64 `json:"byWorkers"`
	Workers   int                `json:"workers"`     // the best worker count
	PerSecond float64            `json:"writesPerS"`  // the best rate: the limit
	MsPerItem float64            `json:"msPerWrite"`  // 1000 / PerSecond
	Seconds   float64            `json:"secondsForN"` // N / PerSecond
}

// Cold is the reconvergence of a controller started on N existing routes.
type Cold struct {
	Measured bool   `json:"measured"`
	Note     string `json:"note,omitempty"`
	// Programmed is how many routes were seen Programmed=True.
	Programmed int `json:"programmed"`
	// Seconds runs from the process start to the last route seen
	// Programmed; FromReady from the controller's /readyz.
	Seconds      float64 `json:"seconds"`
	FromReady    float64 `json:"secondsFromReady"`
	RoutesPerSec float64 `json:"routesPerS"`
	// RatioToLimit is RoutesPerSec over the limit's writes per second.
	RatioToLimit float64 `json:"ratioToLimit"`
	Cost         Cost    `json:"cost"`
	PerRoute     Cost    `json:"perRoute"`
}

// Cost is what the controller spent (totals, or per route).
type Cost struct {
	Reconciles   float64 `json:"reconciles"`
	StatusWrites float64 `json:"statusWrites"`
	APIRequests  float64 `json:"apiRequests"`
	ProxyPushes  float64 `json:"proxyPushes"`
	CPUSeconds   float64 `json:"cpuSeconds"`
	// PeakRSS is the process's resident set high-water mark (bytes); per
	// route it is not divided.
	PeakRSS int64 `json:"peakRssBytes"`
}

// Restart is a converged controller killed and started again.
type Restart struct {
	Measured     bool    `json:"measured"`
	Note         string  `json:"note,omitempty"`
	Seconds      float64 `json:"seconds"` // process start to drained queue
	FromReady    float64 `json:"secondsFromReady"`
	Reconciles   float64 `json:"reconciles"`
	StatusWrites float64 `json:"statusWrites"`
	ProxyPushes  float64 `json:"proxyPushes"`
	APIRequests  float64 `json:"apiRequests"`
}

// Latency is the distribution of one change's time to Programmed=True.
type Latency struct {
	Measured bool      `json:"measured"`
	Note     string    `json:"note,omitempty"`
	Samples  []float64 `json:"samplesMs"`
	Missed   int       `json:"missed"` // changes not Programmed within the per-change bound
	P50      float64   `json:"p50Ms"`
	P95      float64   `json:"p95Ms"`
	P99      float64   `json:"p99Ms"`
	Max      float64   `json:"maxMs"`
}

// Growth compares the smallest and the largest N with a measured cold start.
type Growth struct {
	Measured bool   `json:"measured"`
	From     int    `json:"fromRoutes"`
	To       int    `json:"toRoutes"`
	Sentence string `json:"sentence"`
	// Ratios of per-route figures, largest N over smallest: 1 = linear total.
	TimePerRoute float64 `json:"timePerRouteRatio"`
	CPUPerRoute  float64 `json:"cpuPerRouteRatio"`
	APIPerRoute  float64 `json:"apiRequestsPerRouteRatio"`
}

// HarnessFigures are the wall times of one `gw10 check` run.
type HarnessFigures struct {
	Source  string   `json:"source"`
	Step    string   `json:"step"`
	Seconds float64  `json:"seconds"`
	Stages  []Timing `json:"stages"`
	Checks  []Timing `json:"checks"`
}

// WriteJSON writes the result, indented.
func (r *Result) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the bench result: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
