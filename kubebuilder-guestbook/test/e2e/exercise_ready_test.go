//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestExerciseReadyColumnShowsAvailableOverDesiredPods checks lesson 3's Ready
// column exercise, beyond the reference Reconciler; it runs only with
// EXERCISE=ready.
func TestExerciseReadyColumnShowsAvailableOverDesiredPods(t *testing.T) {
	kittest.Exercise(t, "ready")
	c := newClient(t)
	cs := kittest.Clientset(t)
	operatorNS := kittest.Namespace(t, cs, "guestbook-operator")
	installRBAC(t, c, operatorNS)
	startManager(t, "manager", operatorNS)

	ns := kittest.Namespace(t, cs, "guestbook")
	createGuestbook(t, c, ns, "shop", 2)
	waitAvailable(t, c, ns, "shop", 2)

	// 1 Redis leader + 2 followers + 2 frontends, all available.
	var table string
	kittest.Eventually(t, deadline, "kubectl get guestbook to show READY 5/5", func(context.Context) (bool, error) {
		out, err := kittest.KubectlE("-n", ns, "get", "guestbook", "shop")
		table = out
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if err != nil || len(lines) != 2 {
			return false, err
		}
		header, row := strings.Fields(lines[0]), strings.Fields(lines[1])
		for i, column := range header {
			if column == "READY" && i < len(row) {
				return row[i] == "5/5", nil
			}
		}
		return false, nil
	})
	t.Logf("kubectl get guestbook:\n%s", table)
}
