//go:build e2e

/*
Copyright 2026 The controller-kit Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// acquired is what controller-runtime's leader election logs when it takes the Lease.
const acquired = "Successfully acquired lease"

// TestLeaderElectionHandsOverAndTheOldLeaderExits runs two managers with leader
// election on. Only the leader reconciles; when it is frozen (SIGSTOP: cut off
// from the API server without a chance to release the Lease) the other takes the
// Lease once it expires and carries on, and the old leader, thawed, finds it lost
// the Lease and exits non-zero instead of reconciling next to the new one.
func TestLeaderElectionHandsOverAndTheOldLeaderExits(t *testing.T) {
	c := newClient(t)
	cs := kittest.Clientset(t)
	operatorNS := kittest.Namespace(t, cs, "guestbook-operator")
	installRBAC(t, c, operatorNS)

	// Shorter Lease timings than the defaults (15 s, 10 s, 2 s) keep the
	// hand-over quick, with room for a loaded machine.
	leaseTimings := []string{
		"--leader-elect-lease-duration=10s",
		"--leader-elect-renew-deadline=7s",
		"--leader-elect-retry-period=1s",
	}
	first := startManager(t, "manager-a", operatorNS, leaseTimings...)
	kittest.Eventually(t, deadline, "manager-a to become leader", func(context.Context) (bool, error) {
		return strings.Contains(first.Logs(), acquired), nil
	})
	second := startManager(t, "manager-b", operatorNS, leaseTimings...)
	// manager-b must be trying for the Lease, or its not having it proves nothing.
	kittest.Eventually(t, deadline, "manager-b to try for the Lease", func(context.Context) (bool, error) {
		return len(second.Lines("Attempting to acquire leader lease")) > 0, nil
	})

	ns := kittest.Namespace(t, cs, "guestbook")
	createGuestbook(t, c, ns, "shop", 1)
	waitAvailable(t, c, ns, "shop", 1)
	if err := second.CheckNoLine("Attempting to acquire leader lease", "manager-b acquired the Lease while manager-a held it", acquired); err != nil {
		t.Fatal(err)
	}

	first.Signal(syscall.SIGSTOP)
	kittest.Eventually(t, deadline, "manager-b to take over the Lease", func(context.Context) (bool, error) {
		return strings.Contains(second.Logs(), acquired), nil
	})
	// The new leader reconciles: a scale-up converges.
	kittest.Eventually(t, deadline, "the scale-up to 2", func(ctx context.Context) (bool, error) {
		gb, err := getGuestbook(ctx, c, ns, "shop")
		if err != nil {
			return false, err
		}
		gb.Spec.Frontend.Replicas = ptr.To[int32](2)
		return true, c.Update(ctx, gb)
	})
	waitAvailable(t, c, ns, "shop", 2)

	first.Signal(syscall.SIGCONT)
	code, err := first.Wait(deadline)
	if err != nil {
		t.Fatalf("the old leader kept running after losing the Lease: %v", err)
	}
	if code == 0 {
		t.Errorf("the old leader exited with code 0; want non-zero after losing the Lease")
	}
	if !strings.Contains(first.Logs(), "leader election lost") {
		t.Errorf("the old leader's log does not say it lost the leader election")
	}
}
