package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/legacyregistry"
	// The MetricsProvider main installs (through component-base's clientgo
	// package), so that the queue New makes reports workqueue_* metrics.
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
	"k8s.io/klog/v2/ktesting"

	foofake "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/clientset/versioned/fake"
	fooinformers "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/informers/externalversions"
)

// failOnce is a Reconciler whose first call fails and every later one succeeds.
type failOnce struct{ calls int }

func (r *failOnce) Reconcile(context.Context, cache.ObjectName) error {
	r.calls++
	if r.calls == 1 {
		return errors.New("injected failure on the first attempt")
	}
	return nil
}

// TestMetricsCountAddsRetriesAndReconcilesAndDepthReturnsToZero drives the
// queue New makes by hand: one key added, failed once, retried after its
// backoff and reconciled. The registry /metrics serves (component-base's
// legacyregistry, the process's own) then shows both adds and the retry, a
// depth back at 0, and one reconcile of each result; the test compares before
// with after.
func TestMetricsCountAddsRetriesAndReconcilesAndDepthReturnsToZero(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	kubeFactory := kubeinformers.NewSharedInformerFactory(kubefake.NewClientset(), 0)
	fooFactory := fooinformers.NewSharedInformerFactory(foofake.NewSimpleClientset(), 0)
	c, err := New(ctx, fooFactory.Samplecontroller().V1alpha1().Foos(), kubeFactory.Apps().V1().Deployments(), &failOnce{}, time.Second)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer c.queue.ShutDown()

	queue := map[string]string{"name": QueueName}
	controller := map[string]string{"controller": ControllerName}
	success := map[string]string{"controller": ControllerName, "result": "success"}
	failure := map[string]string{"controller": ControllerName, "result": "error"}
	series := []struct {
		name   string
		labels map[string]string
		want   float64 // how much it grows
	}{
		{"workqueue_adds_total", queue, 2}, // the add, and the retry after its backoff
		{"workqueue_retries_total", queue, 1},
		{"workqueue_queue_duration_seconds", queue, 2}, // a histogram: its count of observations
		{"workqueue_work_duration_seconds", queue, 2},
		{"controller_runtime_reconcile_time_seconds", controller, 2},
		{"controller_runtime_reconcile_total", success, 1},
		{"controller_runtime_reconcile_total", failure, 1},
	}
	before := make([]float64, len(series))
	for i, s := range series {
		before[i] = metricValue(t, s.name, s.labels)
	}

	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "flaky"})
	if got := metricValue(t, "workqueue_depth", queue); got != 1 {
		t.Errorf("workqueue_depth after one add = %g, want 1", got)
	}
	c.processNextWorkItem(ctx) // fails: back on the queue after 5ms
	deadline := time.Now().Add(10 * time.Second)
	for c.queue.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	c.processNextWorkItem(ctx) // succeeds
	if got := metricValue(t, "workqueue_depth", queue); got != 0 {
		t.Errorf("workqueue_depth after the key succeeded = %g, want 0", got)
	}

	for i, s := range series {
		if got := metricValue(t, s.name, s.labels) - before[i]; got != s.want {
			t.Errorf("%s%v grew by %g, want %g", s.name, s.labels, got, s.want)
		}
	}
}

// metricValue reads the series of the metric name with the given labels from
// legacyregistry, the registry /metrics serves: a counter's or gauge's value, a
// histogram's count of observations, 0 when no such series exists yet.
func metricValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatalf("gathering the metrics: %v", err)
	}
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
	series:
		for _, m := range family.GetMetric() {
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue series
				}
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return 0
}
