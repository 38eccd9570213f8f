//go:build e2e

package e2e

import (
	"context"
	"testing"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestMetricsShowTheQueueAndTheReconciles runs a manager of its own with its
// metrics served over plain HTTP on loopback (--metrics-secure=false, as lesson
// 3 runs it) and reads the same series the other tiers serve: controller-runtime
// names its queue after the controller, "guestbook".
func TestMetricsShowTheQueueAndTheReconciles(t *testing.T) {
	c := newClient(t)
	cs := kittest.Clientset(t)
	operatorNS := kittest.Namespace(t, cs, "guestbook-metrics-operator")
	installRBAC(t, c, operatorNS)
	addr := kittest.FreeAddress(t)
	startManager(t, "manager", operatorNS, "--metrics-bind-address="+addr, "--metrics-secure=false")

	ns := kittest.Namespace(t, cs, "guestbook-metrics")
	createGuestbook(t, c, ns, "shop", 1)
	kittest.Eventually(t, deadline, "/metrics to show the queue's, the reconciles' and the client's series of an idle loop", func(ctx context.Context) (bool, error) {
		m, err := kittest.Scrape(ctx, "http://"+addr+"/metrics")
		if err != nil {
			return false, err
		}
		if err = m.CheckLoop("guestbook", "guestbook", 1); err == nil {
			err = m.CheckClient()
		}
		return err == nil, err
	})
	if err := kittest.GetOK(context.Background(), "http://"+addr+"/debug/pprof/"); err != nil {
		t.Error(err)
	}
}
