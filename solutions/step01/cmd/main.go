// Command manager runs the EdgeRoute controller.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	netv1 "github.com/10xdev/gw10/solutions/step01/api/v1"
	"github.com/10xdev/gw10/solutions/step01/internal/controller"
	"github.com/10xdev/gw10/solutions/step01/internal/dataplane"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		metricsAddr      string
		probeAddr        string
		enableLeaderElec bool
		dataplaneURL     string
		dataplaneTimeout time.Duration
		workers          int
		namespaces       string
		driftPeriod      time.Duration
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0",
		"The address the metrics endpoint binds to, served as plain HTTP (e.g. 127.0.0.1:8080). Use 0 to disable it.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":0",
		"The address the probe endpoint (/healthz, /readyz) binds to. The default, port 0, takes a free port and logs it "+
			"(\"starting server\" … \"health probe\"), so two managers on one machine never collide; "+
			"a Deployment whose probes need a fixed port passes one (e.g. :8081). Use 0 to disable it.")
	flag.BoolVar(&enableLeaderElec, "leader-elect", false,
		"Enable leader election, ensuring only one active controller manager.")
	flag.StringVar(&dataplaneURL, "dataplane-url", "",
		"Base URL of the proxy admin API (e.g. http://127.0.0.1:9901). Empty: log pushes and always ACK.")
	flag.DurationVar(&dataplaneTimeout, "dataplane-timeout", 5*time.Second, "Timeout of one data plane request.")
	flag.IntVar(&workers, "max-concurrent-reconciles", 1,
		"How many EdgeRoutes are reconciled at once. Each reconcile mostly waits on the proxy and the API server, "+
			"so a few workers converge many routes faster; one key is never reconciled by two workers at once.")
	flag.StringVar(&namespaces, "namespaces", "",
		"Comma-separated namespaces whose objects the manager watches and reconciles; empty: every namespace. "+
			"(make check runs one manager per check, each on its check's namespaces.)")
	flag.DurationVar(&driftPeriod, "dataplane-drift-period", controller.DefaultDriftPeriod,
		"How often the controller compares the proxy's routes with the EdgeRoutes and repairs what differs "+
			"(a proxy that restarted with an empty table, a route whose EdgeRoute is gone).")
	opts := zap.Options{Development: true}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(netv1.AddToScheme(scheme))

	var dp dataplane.DataPlane = &dataplane.Logging{Log: ctrl.Log.WithName("dataplane")}
	if dataplaneURL != "" {
		h, err := dataplane.NewHTTP(dataplaneURL, dataplaneTimeout)
		if err != nil {
			return err
		}
		dp = h
	}

	cfg, err := ctrl.GetConfig()
	if err != nil {
		// The line a learner reads last, below controller-runtime's stack
		// trace: a shell without the dev cluster's KUBECONFIG is the usual cause.
		return fmt.Errorf("loading kubeconfig (no cluster found: export KUBECONFIG, as make cluster-up prints, in this shell): %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         enableLeaderElec,
		LeaderElectionID:       "edgeroute.net.10xdev.io",
		Controller:             config.Controller{MaxConcurrentReconciles: workers},
		Cache:                  cache.Options{DefaultNamespaces: watchedNamespaces(namespaces)},
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}

	ctx := ctrl.SetupSignalHandler() // cancelled on SIGTERM or SIGINT: clean shutdown
	if err := (&controller.EdgeRouteReconciler{
		Client:      mgr.GetClient(),
		Programmer:  dp,
		Namespaces:  slices.Collect(maps.Keys(watchedNamespaces(namespaces))),
		DriftPeriod: driftPeriod,
	}).SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("setting up the EdgeRoute controller: %w", err)
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding ready check: %w", err)
	}

	log.Info("starting manager", "dataplane", dataplaneURLOrLogging(dataplaneURL))
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running manager: %w", err)
	}
	return nil
}

func dataplaneURLOrLogging(u string) string {
	if u == "" {
		return "logging (always ACKs)"
	}
	return u
}

// watchedNamespaces is --namespaces as the cache takes it: nil (every
// namespace) when empty.
func watchedNamespaces(list string) map[string]cache.Config {
	if list == "" {
		return nil
	}
	m := map[string]cache.Config{}
	for _, ns := range strings.Split(list, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			m[ns] = cache.Config{}
		}
	}
	return m
}
