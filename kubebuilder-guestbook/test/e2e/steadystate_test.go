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

// The subtests of TestGuestbookOperator about what a Reconciler costs when
// there is nothing to do: no write and no event for a change that touches
// nothing it owns, and no error for a write that lost a race.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/controller-kit/controller-kit/test/kittest"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// restingGuestbookCostsNoWrite counts the operator's writes where writes
// happen, in the API server's audit log: a status write that changes nothing
// does not even move the Guestbook's resourceVersion. Scaling the frontend
// afterwards must cost writes: that shows the log holds the operator's writes,
// so the count of the quiet part can fail.
func restingGuestbookCostsNoWrite(t *testing.T, c client.Client, cs kubernetes.Interface, operatorNS string) {
	if _, err := kittest.CurrentClusterInfo(); errors.Is(err, kittest.ErrNotLocalCluster) {
		t.Skipf("this check reads the API server's audit log: %v", err)
	}
	ns := kittest.Namespace(t, cs, "guestbook")
	createGuestbook(t, c, ns, "shop", 1)
	waitAvailable(t, c, ns, "shop", 1)
	waitEvent(t, c, ns, "shop", "Normal", "Available")

	user := "system:serviceaccount:" + operatorNS + ":" + serviceAccount
	ofOperator := func(e kittest.AuditEntry) bool { return e.User == user && e.Namespace == ns }
	// At rest: a Deployment's status may still settle after Available, and a
	// Reconciler may write once more for it; two quiet seconds say it is done.
	var recent []kittest.AuditEntry
	defer func() {
		if t.Failed() && len(recent) > 0 {
			t.Logf("the operator's last writes:\n  %s", strings.Join(entriesText(recent), "\n  "))
		}
	}()
	kittest.Eventually(t, deadline, "two seconds in which the operator writes nothing in "+ns, func(context.Context) (bool, error) {
		recent = kittest.Writes(t, time.Now().Add(-2*time.Second), ofOperator)
		return len(recent) == 0, nil
	})

	// An annotation changes nothing the operator owns, yet reaches it (For).
	quietFrom := time.Now()
	patchAnnotation(t, c, ns, "shop", "controller-kit.dev/e2e-touched", "true")
	// The reconcile it queues runs within milliseconds; the API server logs a
	// request a moment after answering it: a generous pause.
	time.Sleep(3 * time.Second)

	scaledFrom := time.Now()
	kittest.Eventually(t, deadline, "the scale-up to 2", func(ctx context.Context) (bool, error) {
		gb, err := getGuestbook(ctx, c, ns, "shop")
		if err != nil {
			return false, err
		}
		gb.Spec.Frontend.Replicas = ptr.To[int32](2)
		return true, c.Update(ctx, gb)
	})
	waitAvailable(t, c, ns, "shop", 2)

	var quiet, scaled []kittest.AuditEntry
	for _, w := range kittest.Writes(t, quietFrom, ofOperator) {
		switch {
		case w.Received.Before(scaledFrom):
			quiet = append(quiet, w)
		case w.Resource == "deployments" && w.Name == "shop"+webappv1.FrontendSuffix:
			scaled = append(scaled, w)
		}
	}
	if len(scaled) == 0 {
		t.Fatalf("the audit log shows no write of the operator (%s) to Deployment %s/shop-frontend after spec.frontend.replicas changed, so it cannot show the writes it did not make either",
			user, ns)
	}
	if len(quiet) > 0 {
		t.Errorf("the operator made %d write(s) (status, children or events) after an annotation that changes nothing it owns; at rest a reconcile writes nothing:\n  %s",
			len(quiet), strings.Join(entriesText(quiet), "\n  "))
	}
}

// conflictsAreRequeuesNotErrors annotates the Guestbook every 50 ms during
// its first 5 s of converging: a Reconciler that read it a moment earlier then
// writes an old resourceVersion, and the API server answers 409 Conflict. It
// also changes the frontend's replicas every 200 ms, so the operator updates the
// frontend Deployment while the deployment controller writes its status, and
// those updates conflict too. None of
// that is an error: the newer version is already queued. The changing stops after
// 5 s because on a loaded machine one reconcile can take longer than 50 ms,
// and then every status write would conflict for as long as it went on.
func conflictsAreRequeuesNotErrors(t *testing.T, c client.Client, cs kubernetes.Interface, manager *kittest.Process) {
	ns := kittest.Namespace(t, cs, "guestbook")
	createGuestbook(t, c, ns, "shop", 2)
	// Changes to the Guestbook make its own writes conflict; changes to the
	// frontend's replicas make the operator update the child Deployment while
	// the deployment controller writes its status, so those updates conflict too.
	annotate := keepChanging(t, 50*time.Millisecond, func(ctx context.Context, n int) error {
		return mergeAnnotation(ctx, c, ns, "shop", "controller-kit.dev/e2e-poke", fmt.Sprint(n+1))
	})
	scale := keepChanging(t, 200*time.Millisecond, func(ctx context.Context, n int) error {
		return mergeFrontendReplicas(ctx, c, ns, "shop", int32(n%6+1))
	})
	time.Sleep(5 * time.Second)
	writes := annotate() + scale()
	if err := mergeFrontendReplicas(context.Background(), c, ns, "shop", 2); err != nil {
		t.Fatalf("setting Guestbook %s/shop back to 2 frontend replicas: %v", ns, err)
	}
	waitAvailable(t, c, ns, "shop", 2)
	// A reconcile that read the Guestbook just before the last change may
	// still be writing.
	time.Sleep(time.Second)

	// controller-runtime logs "Reconciler error" with the request's namespace
	// for every error Reconcile returns. "Starting workers" proves the log is
	// the running controller's.
	manager.RequireNoLine(t, "Starting workers",
		fmt.Sprintf("while the test changed Guestbook %s/shop %d times as it converged, Reconcile returned errors (a conflict is a requeue, not an error: the newer version is already queued)", ns, writes),
		"Reconciler error", ns)
}

// patchAnnotation sets an annotation on the Guestbook with a merge patch, which
// carries no resourceVersion and so never conflicts.
func patchAnnotation(t *testing.T, c client.Client, ns, name, key, value string) {
	t.Helper()
	if err := mergeAnnotation(context.Background(), c, ns, name, key, value); err != nil {
		t.Fatalf("annotating Guestbook %s/%s: %v", ns, name, err)
	}
}

func mergeAnnotation(ctx context.Context, c client.Client, ns, name, key, value string) error {
	gb := &webappv1.Guestbook{}
	gb.Namespace, gb.Name = ns, name
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value)
	return c.Patch(ctx, gb, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// mergeFrontendReplicas sets the Guestbook's frontend replicas with a merge
// patch, which carries no resourceVersion and so never conflicts.
func mergeFrontendReplicas(ctx context.Context, c client.Client, ns, name string, replicas int32) error {
	gb := &webappv1.Guestbook{}
	gb.Namespace, gb.Name = ns, name
	patch := fmt.Sprintf(`{"spec":{"frontend":{"replicas":%d}}}`, replicas)
	return c.Patch(ctx, gb, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// keepChanging calls change(ctx, n) every interval, n counting the changes made
// so far, until the returned function is called (or the test ends); that
// function returns how many changes were made.
func keepChanging(t *testing.T, interval time.Duration, change func(ctx context.Context, n int) error) func() int {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		n := 0
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				done <- n
				return
			case <-tick.C:
				if change(ctx, n) == nil {
					n++
				}
			}
		}
	}()
	stop := sync.OnceValue(func() int {
		cancel()
		return <-done
	})
	t.Cleanup(func() { stop() })
	return stop
}

func entriesText(entries []kittest.AuditEntry) []string {
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = e.String()
	}
	return lines
}
