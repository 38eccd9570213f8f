//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestExerciseConfigMapChangesReachASecondLoop checks lesson 1's ConfigMap
// exercise, beyond the reference Reconciler; it runs only with
// EXERCISE=configmaps.
func TestExerciseConfigMapChangesReachASecondLoop(t *testing.T) {
	t.Parallel()
	kittest.Exercise(t, "configmaps")
	cs := clientset(t)
	ns := kittest.Namespace(t, cs, "wq-configmaps")
	p := startController(t, "--namespace="+ns)

	ctx := context.Background()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: ns},
		Data:       map[string]string{"greeting": "hello", "name": "world"},
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ConfigMap demo: %v", err)
	}
	waitForLog := func(what string, parts ...string) {
		t.Helper()
		kittest.Eventually(t, deadline, what, func(context.Context) (bool, error) {
			return len(p.Lines(parts...)) > 0, nil
		})
	}
	key := fmt.Sprintf(`configmap="%s/demo"`, ns)
	waitForLog("a log line for the new ConfigMap demo with its 2 keys", `"ConfigMap seen"`, key, "keys=2")

	patch := []byte(`{"data":{"third":"key"}}`)
	if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "demo", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("adding a key to ConfigMap demo: %v", err)
	}
	waitForLog("a log line for ConfigMap demo with 3 keys after the update", `"ConfigMap seen"`, key, "keys=3")

	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "demo", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting ConfigMap demo: %v", err)
	}
	waitForLog("a log line saying ConfigMap demo is gone", `"ConfigMap is gone, nothing to do"`, key)
}
