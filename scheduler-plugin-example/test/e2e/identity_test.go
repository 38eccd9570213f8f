//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestRunSchedulerActsAsTheClusterSchedulersUser runs make run-scheduler as a
// learner does, from a shell whose KUBECONFIG is the cluster's admin, and
// checks that its scheduler acts as system:kube-scheduler and nothing more: once
// the example Deployment's Pods are bound, "create" on pods/binding is taken out
// of the ClusterRole system:kube-scheduler (the local cluster's own scheduler
// runs as its admin, so only this one is refused), and a new Pod of the
// scheduler stays unbound while the API server refuses it the binding (403, in
// the cluster's audit log); with the rule back, the Pod is bound. It runs the
// reference plugin whatever RECONCILER says: it checks the run target's
// identity, not a plugin. Not parallel: the suite's other schedulers run as
// the same user.
func TestRunSchedulerActsAsTheClusterSchedulersUser(t *testing.T) {
	if _, err := kittest.CurrentClusterInfo(); err != nil {
		t.Skipf("the check reads the local cluster's audit log: %v", err)
	}
	cs := kittest.Clientset(t)
	bind := kittest.UserAccess(schedulerUser, "create", "", "pods/binding")
	startRunScheduler(t, "RECONCILER=reference")
	example, err := cs.AppsV1().Deployments("default").Get(context.Background(), "zonespread-example", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	restore := kittest.WithoutRule(t, cs, deadline, "system:kube-scheduler", bind)
	since := time.Now()
	ns := kittest.Namespace(t, cs, "scheduler-identity")
	template := example.Spec.Template
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "refused", Namespace: ns, Annotations: template.Annotations},
		Spec:       template.Spec,
	}
	if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Pod %s/refused of the scheduler %s: %v", ns, pod.Spec.SchedulerName, err)
	}
	refusal := kittest.WaitRefused(t, deadline, since, bind, func(ctx context.Context) error {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "refused", metav1.GetOptions{})
		if err != nil || p.Spec.NodeName == "" {
			return nil
		}
		return fmt.Errorf("pod %s/refused is bound to %s, which the ClusterRole system:kube-scheduler no longer lets %s do: make run-scheduler's scheduler acts as %s, not as %s",
			ns, p.Spec.NodeName, schedulerUser, binderOf(t, since, ns), schedulerUser)
	})
	t.Logf("the API server refused: %s", refusal)
	if p, err := cs.CoreV1().Pods(ns).Get(context.Background(), "refused", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Errorf("pod %s/refused after the API server refused its binding: node %q, %v; want no node", ns, p.Spec.NodeName, err)
	}

	restore()
	kittest.Eventually(t, deadline, "pod "+ns+"/refused to be bound once the rule is back (the scheduler retries it after a backoff of at most 10 s)",
		func(ctx context.Context) (bool, error) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, "refused", metav1.GetOptions{})
			return err == nil && p.Spec.NodeName != "", err
		})
}

// binderOf names the user that bound a Pod of namespace at or after since, as
// the cluster's audit log says.
func binderOf(t *testing.T, since time.Time, namespace string) string {
	t.Helper()
	return kittest.WrittenBy(t, since, func(e kittest.AuditEntry) bool {
		return e.Resource == "pods" && e.Subresource == "binding" && e.Namespace == namespace && e.Code == 201
	}, "a user the audit log does not name")
}
