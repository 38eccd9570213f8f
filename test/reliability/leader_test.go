//go:build e2e

package reliability

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestLeaderTakeOver measures, for tiers 2 and 3, how long a standby replica
// takes to lead after the leader is SIGKILLed: it cannot release its Lease, so
// the standby waits until the Lease has not been renewed for a lease duration.
// The e2e suites test the hand-over itself (the old leader, frozen and
// thawed, exits); this scenario reports the time, with the Lease timings of
// outageLeaseTimings (10 s, 7 s, 1 s: the take-over should take a little over
// 10 s; kube-controller-manager's defaults, 15 s, 10 s, 2 s, would make it a
// little over 15 s). Who holds the Lease is read from the Lease itself.
func TestLeaderTakeOver(t *testing.T) {
	scenario(t)
	cs := kittest.Clientset(t)
	for _, tier := range []struct {
		name      string
		namespace string // where the tier's RBAC lets it keep its Lease
		start     func(t *testing.T, name, lease string) *kittest.Process
	}{
		{"sample-controller", sampleControllerNamespace, func(t *testing.T, name, lease string) *kittest.Process {
			ns := kittest.Namespace(t, cs, "leader-foo")
			return startSampleController(t, name, ns, append([]string{"--leader-elect",
				"--leader-elect-resource-namespace=" + sampleControllerNamespace, "--leader-elect-resource-name=" + lease}, outageLeaseTimings...)...)
		}},
		{"guestbook-manager", guestbookNamespace, func(t *testing.T, name, lease string) *kittest.Process {
			return startManager(t, name, append([]string{"--leader-elect",
				"--leader-elect-resource-namespace=" + guestbookNamespace, "--leader-elect-resource-name=" + lease}, outageLeaseTimings...)...)
		}},
	} {
		t.Run(tier.name, func(t *testing.T) {
			t.Parallel()
			lease := "takeover-" + tier.name
			holder := func(ctx context.Context) (string, error) { return leaseHolder(ctx, cs, tier.namespace, lease) }
			leader := tier.start(t, tier.name+"-leader", lease)
			var first string
			kittest.Eventually(t, deadline, "the first replica to take the Lease", func(ctx context.Context) (bool, error) {
				h, err := holder(ctx)
				first = h
				return h != "", err
			})
			standby := tier.start(t, tier.name+"-standby", lease)
			// Let the standby's first attempt find the Lease held.
			time.Sleep(3 * time.Second)
			if standby.Exited() {
				t.Fatalf("the standby exited while the leader held the Lease: %v", standby.State())
			}
			killed := time.Now()
			leader.Signal(syscall.SIGKILL)
			kittest.Eventually(t, deadline, "the standby to take the Lease", func(ctx context.Context) (bool, error) {
				h, err := holder(ctx)
				return h != "" && h != first, err
			})
			record(t, tier.name+": standby leads after the leader was killed", time.Since(killed).Seconds(), "s")
		})
	}
}
