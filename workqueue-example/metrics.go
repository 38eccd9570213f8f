// The loop's metrics, and the server that shows them: what --metrics-bind-address
// turns on. Nothing here decides what the loop does; read main.go first. In order:
// the blank imports that give client-go's workqueue and REST client their metrics,
// the two reconcile metrics processNextWorkItem records (startReconcile), and
// serveMetrics, which serves /metrics and /debug/pprof/.
//
// sample-controller carries the same code on purpose (the tiers are separate
// modules and never import each other): its serveMetrics in sample-controller/main.go,
// and its reconcile metrics in sample-controller/pkg/controller/controller.go.

package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	// Imported for their init functions, as kube-controller-manager imports them:
	// one hands client-go's workqueue a MetricsProvider (workqueue.SetProvider),
	// so every queue reports workqueue_depth, workqueue_adds_total, ... with its
	// name as the label "name"; the other registers client-go's REST-client hooks,
	// so every request reports rest_client_request_duration_seconds and the time it
	// waited for the client's own rate limiter,
	// rest_client_rate_limiter_duration_seconds. Both register in legacyregistry.
	_ "k8s.io/component-base/metrics/prometheus/restclient"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
	"k8s.io/klog/v2"
)

// The reconcile metrics, named and labelled as controller-runtime names them
// (pkg/internal/controller/metrics/metrics.go there), so that one query reads
// all three tiers.
var (
	reconcileTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Name: "controller_runtime_reconcile_total",
		Help: "Reconcile calls per controller and result (success or error).",
	}, []string{"controller", "result"})
	reconcileTime = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Name:    "controller_runtime_reconcile_time_seconds",
		Help:    "How long one Reconcile call takes, in seconds.",
		Buckets: metrics.DefBuckets,
	}, []string{"controller"})
)

func init() {
	legacyregistry.MustRegister(reconcileTotal, reconcileTime)
}

// startReconcile starts the clock of one Reconcile call. Call the function it returns
// with the call's error: it counts the call by its result (success or error) and
// records how long it took, in seconds.
func startReconcile() (observe func(err error)) {
	start := time.Now()
	return func(err error) {
		result := "success"
		if err != nil {
			result = "error"
		}
		reconcileTotal.WithLabelValues(ControllerName, result).Inc()
		reconcileTime.WithLabelValues(ControllerName).Observe(time.Since(start).Seconds())
	}
}

// serveMetrics serves, on addr until stop is called, /metrics (everything
// registered in component-base's legacyregistry, in Prometheus' text format) and
// /debug/pprof/ (the runtime's profiles: go tool pprof reads them). It fails at
// once when addr cannot be listened on. kube-controller-manager serves both on
// its secure port (compare with NewBaseHandler in
// k8s.io/controller-manager/app/serve.go).
func serveMetrics(logger klog.Logger, addr string) (stop func(), err error) {
	// A mux of our own: importing net/http/pprof also registers its handlers on
	// http.DefaultServeMux, which this program never serves.
	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	mux.HandleFunc("/debug/pprof/", httppprof.Index) // the index, and /debug/pprof/<name> for each profile
	mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)

	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-bind-address: %w", err)
	}
	// No write timeout: a CPU profile answers only after its 30 s.
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := server.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
			logger.Error(err, "The metrics endpoint stopped")
		}
	}()
	logger.Info("Serving metrics and profiles", "metrics", "http://"+listener.Addr().String()+"/metrics",
		"pprof", "http://"+listener.Addr().String()+"/debug/pprof/")
	return func() { _ = server.Close() }, nil
}
