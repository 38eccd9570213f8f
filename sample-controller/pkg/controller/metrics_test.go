package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
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

	// Read through component-base's testutil: the queue's series from the
	// registry /metrics serves, the reconcile metrics from their vectors (which
	// count only once registered there: unregistered, they are no-ops).
	series := []struct {
		name string
		read func() (float64, error)
		want float64 // how much it grows
	}{
		{"workqueue_adds_total", queueCounter("workqueue_adds_total"), 2}, // the add, and the retry after its backoff
		{"workqueue_retries_total", queueCounter("workqueue_retries_total"), 1},
		{"workqueue_queue_duration_seconds", queueObservations("workqueue_queue_duration_seconds"), 2}, // a histogram: its count of observations
		{"workqueue_work_duration_seconds", queueObservations("workqueue_work_duration_seconds"), 2},
		{"controller_runtime_reconcile_time_seconds", func() (float64, error) {
			n, err := testutil.GetHistogramMetricCount(reconcileTime.WithLabelValues(ControllerName))
			return float64(n), err
		}, 2},
		{"controller_runtime_reconcile_total{result=success}", func() (float64, error) {
			return testutil.GetCounterMetricValue(reconcileTotal.WithLabelValues(ControllerName, "success"))
		}, 1},
		{"controller_runtime_reconcile_total{result=error}", func() (float64, error) {
			return testutil.GetCounterMetricValue(reconcileTotal.WithLabelValues(ControllerName, "error"))
		}, 1},
	}
	before := make([]float64, len(series))
	for i, s := range series {
		if before[i], err = s.read(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}

	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "flaky"})
	if err := queueDepthIs(1); err != nil {
		t.Errorf("workqueue_depth after one add: %v", err)
	}
	c.processNextWorkItem(ctx) // fails: back on the queue after 5ms
	deadline := time.Now().Add(10 * time.Second)
	for c.queue.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	c.processNextWorkItem(ctx) // succeeds
	if err := queueDepthIs(0); err != nil {
		t.Errorf("workqueue_depth after the key succeeded: %v", err)
	}

	for i, s := range series {
		after, err := s.read()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := after - before[i]; got != s.want {
			t.Errorf("%s grew by %g, want %g", s.name, got, s.want)
		}
	}
}

// queueCounter reads the counter name of the Controller's queue from
// legacyregistry, the registry /metrics serves.
func queueCounter(name string) func() (float64, error) {
	return func() (float64, error) {
		values, err := testutil.GetCounterValuesFromGatherer(legacyregistry.DefaultGatherer, name, nil, "name")
		return values[QueueName], err
	}
}

// queueObservations reads how many observations the histogram name of the
// Controller's queue holds in legacyregistry.
func queueObservations(name string) func() (float64, error) {
	return func() (float64, error) {
		vec, err := testutil.GetHistogramVecFromGatherer(legacyregistry.DefaultGatherer, name, map[string]string{"name": QueueName})
		return float64(vec.GetAggregatedSampleCount()), err
	}
}

// queueDepthIs compares workqueue_depth of the Controller's queue, as
// legacyregistry serves it, with want; the error shows the difference.
func queueDepthIs(want int) error {
	return testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(fmt.Sprintf(`
# HELP workqueue_depth [BETA] Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{name=%q} %d
`, QueueName, want)), "workqueue_depth")
}
