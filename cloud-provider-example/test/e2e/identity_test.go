//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestRunCloudActsAsItsServiceAccount runs make run-cloud as a learner does,
// from a shell whose KUBECONFIG is the cluster's admin, and checks that its
// cloud-controller-manager acts as the ServiceAccount
// cloud-provider-example-system/cloud-provider-example and nothing more: once
// the example Service has an address, "patch" on services/status is taken out
// of the role config/rbac ships, and a new Service of type LoadBalancer gets no
// address while the API server refuses the manager the status patch (403, in
// the cluster's audit log); with the rule back, it gets one. It runs the
// reference load balancer whatever RECONCILER says: it checks the run target's
// identity, not a load balancer. At cleanup it deletes the example Service
// while the manager runs (the manager removes its finalizer), and the Lease the
// manager leaves, so that the suite's next run finds no manager running.
func TestRunCloudActsAsItsServiceAccount(t *testing.T) {
	if _, err := kittest.CurrentClusterInfo(); err != nil {
		t.Skipf("the check reads the local cluster's audit log: %v", err)
	}
	cs := clients(t)
	patch := kittest.ServiceAccountAccess(controllerNamespace, serviceAccount, "patch", "", "services/status")
	t.Cleanup(func() {
		// After make run-cloud has stopped (cleanups run last in, first out).
		err := cs.CoordinationV1().Leases(controllerNamespace).Delete(context.Background(), "cloud-provider-example", metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the Lease make run-cloud's manager held: %v", err)
		}
	})

	run := kittest.StartRunTarget(t, "run-cloud", "RECONCILER=reference")
	t.Cleanup(func() { deleteServiceAndWait(t, "default", "example-lb") })
	hasAddress := func(ctx context.Context, namespace, name string) (bool, error) {
		s, err := cs.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return len(s.Status.LoadBalancer.Ingress) > 0, nil
	}
	kittest.Eventually(t, 3*time.Minute, "make run-cloud's example Service default/example-lb to get an address",
		func(ctx context.Context) (bool, error) {
			if run.Exited() {
				code, _ := run.Wait(0)
				t.Fatalf("make run-cloud exited (status %d) before its example Service had an address", code)
			}
			return hasAddress(ctx, "default", "example-lb")
		})

	restore := kittest.WithoutRule(t, cs, deadline, "cloud-provider-example", patch)
	since := time.Now()
	ns := kittest.Namespace(t, cs, "cloud-identity")
	t.Cleanup(func() { deleteServiceAndWait(t, ns, "refused") })
	service := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "refused", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if _, err := cs.CoreV1().Services(ns).Create(context.Background(), service, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Service %s/refused: %v", ns, err)
	}
	refusal := kittest.WaitRefused(t, deadline, since, patch, func(ctx context.Context) error {
		if ok, _ := hasAddress(ctx, ns, "refused"); ok {
			return fmt.Errorf("service %s/refused has an address, which the role cloud-provider-example no longer lets the manager write: make run-cloud's manager does not act as its ServiceAccount", ns)
		}
		return nil
	})
	t.Logf("the API server refused: %s", refusal)
	if ok, err := hasAddress(context.Background(), ns, "refused"); ok || err != nil {
		t.Errorf("service %s/refused after the API server refused its status: address %v, %v; want none", ns, ok, err)
	}

	restore()
	kittest.Eventually(t, deadline, "service "+ns+"/refused to get an address once the rule is back (the service controller retries it)",
		func(ctx context.Context) (bool, error) { return hasAddress(ctx, ns, "refused") })
}

// deleteServiceAndWait deletes the Service namespace/name, if it is there, and
// waits until it is gone: make run-cloud's manager, still running, removes its
// finalizer once the load balancer is gone.
func deleteServiceAndWait(t *testing.T, namespace, name string) {
	t.Helper()
	cs := clients(t)
	err := cs.CoreV1().Services(namespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Errorf("deleting Service %s/%s: %v", namespace, name, err)
		return
	}
	kittest.Eventually(t, deadline, "service "+namespace+"/"+name+" to be gone", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
