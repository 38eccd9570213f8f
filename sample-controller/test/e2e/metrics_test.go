//go:build e2e

package e2e

import (
	"context"
	"testing"

	"github.com/controller-kit/controller-kit/test/kittest"
)

func TestMetricsShowTheQueueAndTheReconciles(t *testing.T) {
	t.Parallel()
	cs, fooClient := clients(t)
	ns := kittest.Namespace(t, cs, "sc-metrics")
	addr := kittest.FreeAddress(t)
	startController(t, "controller", ns, "--metrics-bind-address="+addr)

	names := []string{"m-1", "m-2", "m-3"}
	for _, name := range names {
		createFoo(t, fooClient, newFoo(ns, name, 1))
	}
	// Each Foo is reconciled at least once; then the queue is idle. The client
	// has sent requests from the start (it asked whether Foos are served).
	kittest.Eventually(t, deadline, "/metrics to show the queue's, the reconciles' and the client's series of an idle loop", func(ctx context.Context) (bool, error) {
		m, err := kittest.Scrape(ctx, "http://"+addr+"/metrics")
		if err != nil {
			return false, err
		}
		if err = m.CheckLoop("foos", "sample-controller", len(names)); err == nil {
			err = m.CheckClient()
		}
		return err == nil, err
	})
	if err := kittest.GetOK(context.Background(), "http://"+addr+"/debug/pprof/"); err != nil {
		t.Error(err)
	}
}
