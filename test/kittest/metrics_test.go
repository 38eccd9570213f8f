package kittest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// loopExposition is what an idle controller that reconciled two keys, one of
// them after a retry, serves on /metrics (abridged to the series CheckLoop reads).
const loopExposition = `# TYPE workqueue_adds_total counter
workqueue_adds_total{name="foos"} 3
# TYPE workqueue_depth gauge
workqueue_depth{name="foos"} %d
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{name="foos",le="+Inf"} 3
workqueue_queue_duration_seconds_sum{name="foos"} 0.01
workqueue_queue_duration_seconds_count{name="foos"} 3
# TYPE workqueue_work_duration_seconds histogram
workqueue_work_duration_seconds_bucket{name="foos",le="+Inf"} 3
workqueue_work_duration_seconds_sum{name="foos"} 0.2
workqueue_work_duration_seconds_count{name="foos"} 3
# TYPE workqueue_retries_total counter
workqueue_retries_total{name="foos"} 1
# TYPE workqueue_unfinished_work_seconds gauge
workqueue_unfinished_work_seconds{name="foos"} 0
# TYPE workqueue_longest_running_processor_seconds gauge
workqueue_longest_running_processor_seconds{name="foos"} 0
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="sample-controller",result="error"} 1
controller_runtime_reconcile_total{controller="sample-controller",result="success"} 2
# TYPE controller_runtime_reconcile_time_seconds histogram
controller_runtime_reconcile_time_seconds_bucket{controller="sample-controller",le="+Inf"} 3
controller_runtime_reconcile_time_seconds_sum{controller="sample-controller"} 0.2
controller_runtime_reconcile_time_seconds_count{controller="sample-controller"} 3
# TYPE rest_client_request_duration_seconds histogram
rest_client_request_duration_seconds_bucket{host="127.0.0.1:6443",verb="POST",le="+Inf"} 2
rest_client_request_duration_seconds_sum{host="127.0.0.1:6443",verb="POST"} 0.1
rest_client_request_duration_seconds_count{host="127.0.0.1:6443",verb="POST"} 2
# TYPE rest_client_rate_limiter_duration_seconds histogram
rest_client_rate_limiter_duration_seconds_bucket{host="127.0.0.1:6443",verb="GET",le="+Inf"} 1
rest_client_rate_limiter_duration_seconds_sum{host="127.0.0.1:6443",verb="GET"} 0.5
rest_client_rate_limiter_duration_seconds_count{host="127.0.0.1:6443",verb="GET"} 1
rest_client_rate_limiter_duration_seconds_bucket{host="127.0.0.1:6443",verb="POST",le="+Inf"} 2
rest_client_rate_limiter_duration_seconds_sum{host="127.0.0.1:6443",verb="POST"} 1.5
rest_client_rate_limiter_duration_seconds_count{host="127.0.0.1:6443",verb="POST"} 2
`

func serveExposition(t *testing.T, depth int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, loopExposition, depth)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

func TestScrapeReadsCountersGaugesAndHistograms(t *testing.T) {
	m, err := Scrape(context.Background(), serveExposition(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"workqueue_adds_total", map[string]string{"name": "foos"}, 3},
		{"controller_runtime_reconcile_total", map[string]string{"controller": "sample-controller"}, 3}, // both results
		{"controller_runtime_reconcile_total", map[string]string{"result": "error"}, 1},
		{"rest_client_rate_limiter_duration_seconds", nil, 3}, // a histogram: its observations, over both verbs
	} {
		if got, found := m.Value(tt.name, tt.labels); !found || got != tt.want {
			t.Errorf("Value(%s, %v) = %g, %t; want %g, true", tt.name, tt.labels, got, found, tt.want)
		}
	}
	if got, _ := m.HistogramSum("rest_client_rate_limiter_duration_seconds", nil); got != 2 {
		t.Errorf("HistogramSum(rest_client_rate_limiter_duration_seconds) = %g, want 2 (0.5 s + 1.5 s)", got)
	}
	if _, found := m.Value("workqueue_adds_total", map[string]string{"name": "other"}); found {
		t.Error("Value found a series of another queue")
	}
}

func TestScrapeWithSendsThroughItsClient(t *testing.T) {
	var asked bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer kit" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		asked = true
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, loopExposition, 0)
	}))
	t.Cleanup(srv.Close)
	if _, err := Scrape(context.Background(), srv.URL+"/metrics"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("Scrape without the token = %v, want the 401 named", err)
	}
	client := &http.Client{Transport: bearer{"kit"}}
	m, err := ScrapeWith(context.Background(), client, srv.URL+"/metrics")
	if err != nil || !asked {
		t.Fatalf("ScrapeWith = %v (server asked: %t), want the scrape through the client's token", err, asked)
	}
	if got, found := m.Value("workqueue_adds_total", map[string]string{"name": "foos"}); !found || got != 3 {
		t.Errorf("Value(workqueue_adds_total) = %g, %t; want 3, true", got, found)
	}
}

// bearer is a RoundTripper that adds a bearer token, as a client of a
// kubeconfig does.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestCheckLoopWantsAnIdleQueueAndEveryReconcileCounted(t *testing.T) {
	for _, tt := range []struct {
		depth      int
		reconciled int
		wantErr    string // empty: no error
	}{
		{0, 2, ""},
		{1, 2, "workqueue_depth"},
		{0, 4, "workqueue_adds_total"},
	} {
		m, err := Scrape(context.Background(), serveExposition(t, tt.depth))
		if err != nil {
			t.Fatal(err)
		}
		err = m.CheckLoop("foos", "sample-controller", tt.reconciled)
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("depth %d, %d reconciled: CheckLoop = %v, want an error naming %q", tt.depth, tt.reconciled, err, tt.wantErr)
		}
	}
	m, err := Scrape(context.Background(), serveExposition(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckClient(); err != nil {
		t.Errorf("CheckClient = %v, want nil", err)
	}
	if err := (Metrics{}).CheckClient(); err == nil {
		t.Error("CheckClient of a scrape without client series = nil, want an error")
	}
	if _, err := Scrape(context.Background(), "http://127.0.0.1:1/metrics"); err == nil {
		t.Error("Scrape of an address nobody listens on returned no error")
	}
}

func TestFreeAddressIsALoopbackPortFreeToListenOn(t *testing.T) {
	addr := FreeAddress(t)
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("FreeAddress = %q (%v), want 127.0.0.1:<a port other than 0>", addr, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on %s, which FreeAddress returned: %v", addr, err)
	}
	_ = l.Close()
}
