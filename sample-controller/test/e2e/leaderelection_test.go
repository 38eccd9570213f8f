//go:build e2e

package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// What the controller logs when it takes the Lease, and when it sees another
// replica holding it.
const (
	becameLeader  = "Became the leader"
	followerWaits = "Another replica is the leader"
)

// startReplicas starts two controllers with leader election on a Lease of
// their own in the controller namespace (shorter timings than the defaults keep
// the test quick, with room for a loaded machine).
// It returns them and the Lease name.
func startReplicas(t *testing.T, cs kubernetes.Interface, ns string) ([]*kittest.Process, string) {
	t.Helper()
	lease := "sample-controller-" + ns
	t.Cleanup(func() {
		_ = cs.CoordinationV1().Leases(controllerNamespace).Delete(context.Background(), lease, metav1.DeleteOptions{})
	})
	args := []string{
		"--leader-elect",
		"--leader-elect-resource-namespace=" + controllerNamespace,
		"--leader-elect-resource-name=" + lease,
		"--leader-elect-lease-duration=10s",
		"--leader-elect-renew-deadline=7s",
		"--leader-elect-retry-period=1s",
	}
	return []*kittest.Process{
		startController(t, "replica-a", ns, args...),
		startController(t, "replica-b", ns, args...),
	}, lease
}

// leaders returns the replicas that have logged taking the Lease.
func leaders(replicas []*kittest.Process) []*kittest.Process {
	var out []*kittest.Process
	for _, r := range replicas {
		if strings.Contains(r.Logs(), becameLeader) {
			out = append(out, r)
		}
	}
	return out
}

// waitForOneLeader waits until exactly one replica leads and returns it and
// the other one.
func waitForOneLeader(t *testing.T, replicas []*kittest.Process) (leader, follower *kittest.Process) {
	t.Helper()
	kittest.Eventually(t, deadline, "one replica to lead and the other to wait for it", func(context.Context) (bool, error) {
		waiting := 0
		for _, r := range replicas {
			if strings.Contains(r.Logs(), followerWaits) {
				waiting++
			}
		}
		return len(leaders(replicas)) > 0 && waiting > 0, nil
	})
	l := leaders(replicas)
	if len(l) != 1 {
		t.Fatalf("%d replicas lead at once, want exactly 1", len(l))
	}
	if l[0] == replicas[0] {
		return replicas[0], replicas[1]
	}
	return replicas[1], replicas[0]
}

// assertFooReconciled creates a Foo and waits for its Deployment.
func assertFooReconciled(t *testing.T, ns, name string) {
	t.Helper()
	cs, fooClient := clients(t)
	createFoo(t, fooClient, newFoo(ns, name, 1))
	waitForDeployment(t, cs, ns, name, "Deployment "+name+" to be created", func(*appsv1.Deployment) bool { return true })
}

func TestLeaderElectionFollowerTakesOverWhenLeaderIsKilled(t *testing.T) {
	t.Parallel()
	cs, _ := clients(t)
	ns := kittest.Namespace(t, cs, "sample-leader")
	replicas, _ := startReplicas(t, cs, ns)

	leader, follower := waitForOneLeader(t, replicas)
	assertFooReconciled(t, ns, "first")

	// SIGKILL: no graceful release, so the follower must wait out the Lease.
	leader.Signal(syscall.SIGKILL)

	waitForTakeOver(t, follower)
	assertFooReconciled(t, ns, "second")
}

func TestLeaderExitsNonZeroWhenLeaseIsLost(t *testing.T) {
	t.Parallel()
	cs, _ := clients(t)
	ns := kittest.Namespace(t, cs, "sample-lost")
	replicas, leaseName := startReplicas(t, cs, ns)
	leader, follower := waitForOneLeader(t, replicas)

	// Someone else takes the Lease (as a partitioned leader would find when
	// it reconnects): the leader cannot renew it and must stop.
	kittest.Eventually(t, deadline, "the Lease to be taken by a third party", func(ctx context.Context) (bool, error) {
		lease, err := cs.CoordinationV1().Leases(controllerNamespace).Get(ctx, leaseName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		now := metav1.NewMicroTime(time.Now())
		lease.Spec = coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("e2e-thief"),
			LeaseDurationSeconds: ptr.To[int32](8),
			AcquireTime:          &now,
			RenewTime:            &now,
		}
		_, err = cs.CoordinationV1().Leases(controllerNamespace).Update(ctx, lease, metav1.UpdateOptions{})
		return err == nil, err
	})

	code, err := leader.Wait(deadline)
	if err != nil {
		t.Fatalf("the old leader kept running after losing its Lease: %v", err)
	}
	if code == 0 {
		t.Errorf("the old leader exited with code 0, want non-zero")
	}
	if !strings.Contains(leader.Logs(), "lost leadership") {
		t.Errorf("the old leader's log does not say it lost leadership")
	}

	// The thief never renews, so the follower takes over once it expires.
	waitForTakeOver(t, follower)
	assertFooReconciled(t, ns, "after")
}

func TestGracefulShutdownReleasesLease(t *testing.T) {
	t.Parallel()
	cs, _ := clients(t)
	ns := kittest.Namespace(t, cs, "sample-shutdown")
	replicas, leaseName := startReplicas(t, cs, ns)
	leader, follower := waitForOneLeader(t, replicas)

	code, err := leader.Stop(30 * time.Second)
	if err != nil || code != 0 {
		t.Fatalf("SIGTERM: exit code %d (%v), want a clean exit 0", code, err)
	}

	// Released, not expired: the follower may take it at its next retry.
	waitForTakeOver(t, follower)
	lease, err := cs.CoordinationV1().Leases(controllerNamespace).Get(context.Background(), leaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil || !strings.Contains(follower.Logs(), *lease.Spec.HolderIdentity) {
		t.Errorf("Lease holder = %v, want %s's identity", lease.Spec.HolderIdentity, follower.Name)
	}
}

// waitForTakeOver waits until follower logs that it became the leader.
func waitForTakeOver(t *testing.T, follower *kittest.Process) {
	t.Helper()
	kittest.Eventually(t, deadline, follower.Name+" to take over the Lease", func(context.Context) (bool, error) {
		return len(follower.Lines(becameLeader)) > 0, nil
	})
}
