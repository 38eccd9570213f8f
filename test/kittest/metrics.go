package kittest

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is one scrape of a controller's /metrics: its metric families by
// name, as Prometheus' own text parser reads them.
type Metrics map[string]*dto.MetricFamily

// Scrape GETs url, a controller's /metrics, and parses the answer in
// Prometheus' text format. The error says what failed: the request, the
// status, or the parse.
func Scrape(ctx context.Context, url string) (Metrics, error) {
	return scrape(ctx, http.DefaultClient, url)
}

// selfSigned is the client of ScrapeSelfSigned: it accepts any serving
// certificate.
var selfSigned = &http.Client{Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback only, see ScrapeSelfSigned
}}

// ScrapeSelfSigned is Scrape for a Kubernetes component's secure port
// (https://127.0.0.1:PORT/metrics of a kube-scheduler started with
// --authorization-always-allow-paths=/metrics, say). Such a component, given no
// certificate, makes a self-signed one at start that no CA vouches for, so this
// client does not verify it: sound only for an address the test itself chose on
// 127.0.0.1. The errors are Scrape's.
func ScrapeSelfSigned(ctx context.Context, url string) (Metrics, error) {
	return scrape(ctx, selfSigned, url)
}

// ScrapeWith is Scrape through client: a kube-apiserver's /metrics, say, with
// the client rest.HTTPClientFor makes of the kit's kubeconfig (its CA and
// credentials). The errors are Scrape's.
func ScrapeWith(ctx context.Context, client *http.Client, url string) (Metrics, error) {
	return scrape(ctx, client, url)
}

func scrape(ctx context.Context, client *http.Client, url string) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return nil, fmt.Errorf("GET %s: %s, want 200 OK: %s", url, resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s did not answer in Prometheus' text format: %w", url, err)
	}
	return Metrics(families), nil
}

// Value returns the sum, over the series of the metric name whose labels
// include every label in labels, of a counter's or gauge's value or a
// histogram's count of observations; found is false when no series matches.
func (m Metrics) Value(name string, labels map[string]string) (value float64, found bool) {
	return m.sum(name, labels, func(s *dto.Metric) float64 {
		switch {
		case s.Counter != nil:
			return s.GetCounter().GetValue()
		case s.Gauge != nil:
			return s.GetGauge().GetValue()
		case s.Histogram != nil:
			return float64(s.GetHistogram().GetSampleCount())
		}
		return 0
	})
}

// HistogramSum returns the sum, over the series of the histogram name whose
// labels include every label in labels, of their sums of observations (for a
// *_seconds histogram: the total time observed); found is false when no
// series matches.
func (m Metrics) HistogramSum(name string, labels map[string]string) (sum float64, found bool) {
	return m.sum(name, labels, func(s *dto.Metric) float64 { return s.GetHistogram().GetSampleSum() })
}

func (m Metrics) sum(name string, labels map[string]string, value func(*dto.Metric) float64) (total float64, found bool) {
	family, ok := m[name]
	if !ok {
		return 0, false
	}
series:
	for _, s := range family.GetMetric() {
		have := map[string]string{}
		for _, l := range s.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue series
			}
		}
		total += value(s)
		found = true
	}
	return total, found
}

// CheckLoop returns nil when m shows a controller loop that has reconciled
// at least reconciled keys and is now idle, in the series every tier serves
// under the same names: the workqueue metrics of the queue called queue (adds,
// depth back at 0, time waiting and time worked, retries and the two in-flight
// gauges), and controller_runtime_reconcile_total{controller,result="success"}
// with a controller_runtime_reconcile_time_seconds observation for every
// reconcile. Its error names the first series that does not fit, and what it
// holds.
func (m Metrics) CheckLoop(queue, controller string, reconciled int) error {
	q, c := map[string]string{"name": queue}, map[string]string{"controller": controller}
	atLeast := []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"workqueue_adds_total", q, float64(reconciled)},
		{"workqueue_queue_duration_seconds", q, float64(reconciled)},
		{"workqueue_work_duration_seconds", q, float64(reconciled)},
		{"workqueue_retries_total", q, 0},
		{"workqueue_unfinished_work_seconds", q, 0},
		{"workqueue_longest_running_processor_seconds", q, 0},
		{"controller_runtime_reconcile_total", map[string]string{"controller": controller, "result": "success"}, float64(reconciled)},
	}
	for _, s := range atLeast {
		v, found := m.Value(s.name, s.labels)
		if !found {
			return fmt.Errorf("/metrics has no series %s%v", s.name, s.labels)
		}
		if v < s.min {
			return fmt.Errorf("%s%v = %g, want at least %g", s.name, s.labels, v, s.min)
		}
	}
	if depth, _ := m.Value("workqueue_depth", q); depth != 0 {
		return fmt.Errorf("workqueue_depth%v = %g, want 0 once every key is reconciled", q, depth)
	}
	total, _ := m.Value("controller_runtime_reconcile_total", c)
	timed, _ := m.Value("controller_runtime_reconcile_time_seconds", c)
	if timed != total {
		return fmt.Errorf("controller_runtime_reconcile_time_seconds%v counts %g reconciles, controller_runtime_reconcile_total%v %g: want one observation per reconcile", c, timed, c, total)
	}
	return nil
}

// CheckClient returns nil when m has observations of the REST client's
// request latency and of the time requests waited for the client's own rate
// limiter (rest_client_request_duration_seconds and
// rest_client_rate_limiter_duration_seconds). client-go observes requests
// only: an informer's watch is none, so a controller that has sent no other
// request has neither series yet.
func (m Metrics) CheckClient() error {
	for _, name := range []string{"rest_client_request_duration_seconds", "rest_client_rate_limiter_duration_seconds"} {
		if n, _ := m.Value(name, nil); n < 1 {
			return fmt.Errorf("/metrics has no observation of %s", name)
		}
	}
	return nil
}

// GetOK returns nil when a GET of url answers 200 OK, such as a controller's
// /debug/pprof/ index.
func GetOK(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s, want 200 OK", url, resp.Status)
	}
	return nil
}

// FreeAddress returns a 127.0.0.1 host:port that nobody listens on now, for
// a controller's --metrics-bind-address or a webhook's port; the test fails
// at once if there is none (FreeAddressE says how it is found and the race it
// leaves open).
func FreeAddress(t testing.TB) string {
	t.Helper()
	addr, err := FreeAddressE()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// FreeAddressE is FreeAddress without a test (the bench uses it): it listens
// on 127.0.0.1 port 0, reads the port the kernel picked and closes the
// listener. That leaves a race open: another process may take the port
// between this return and the controller's own listen, which then fails with
// "address already in use" (the controller exits; run again). The error is
// net.Listen's, when 127.0.0.1 takes no listener.
func FreeAddressE() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("cannot find a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
