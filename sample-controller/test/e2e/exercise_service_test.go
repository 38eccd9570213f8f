//go:build e2e

package e2e

import (
	"context"
	"maps"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestExerciseEachFooGetsAServiceForItsPods checks lesson 2's Service exercise,
// beyond the reference Reconciler; it runs only with EXERCISE=service.
func TestExerciseEachFooGetsAServiceForItsPods(t *testing.T) {
	t.Parallel()
	kittest.Exercise(t, "service")
	cs, fooClient := clients(t)
	ns := kittest.Namespace(t, cs, "sample-service")
	startController(t, "controller", ns)
	foo := createFoo(t, fooClient, newFoo(ns, "web", 1))

	d := waitForDeployment(t, cs, ns, "web", "Deployment web to be created", func(*appsv1.Deployment) bool { return true })
	var svc *corev1.Service
	kittest.Eventually(t, deadline, "Service web to be created", func(ctx context.Context) (bool, error) {
		var err error
		svc, err = cs.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil, err
	})
	if ref := metav1.GetControllerOf(svc); ref == nil || ref.UID != foo.UID {
		t.Errorf("Service web's controller reference = %+v, want Foo web (uid %s)", ref, foo.UID)
	}
	if len(svc.Spec.Selector) == 0 || !maps.Equal(svc.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("Service web selects %v, want the labels of Deployment web's Pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}
	if len(svc.Spec.Ports) == 0 {
		t.Errorf("Service web has no port")
	}
}
