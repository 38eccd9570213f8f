//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// refusalRetryDelay is the --max-retry-delay this check runs the controller
// with (the default is 30 s): the end of the refusal must be noticed by a slow
// retry, and a short one keeps the check short.
const refusalRetryDelay = 5 * time.Second

// TestRefusalThatOutlastsTheFastRetriesIsNotLost is the field case of a policy
// engine that is down or a change freeze: every Pod write in the namespace is
// refused for longer than the fast retries last (5 ms doubling, 155 ms for the
// five of --max-retries=5). The Pods are Running before the controller starts,
// so once the refusal ends no event of theirs would bring them back: only the
// retries can. Every Pod must carry its phase label once the refusal is lifted.
func TestRefusalThatOutlastsTheFastRetriesIsNotLost(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := kittest.Namespace(t, cs, "wq-refusal")
	names := []string{"web-1", "web-2", "web-3", "web-4", "web-5", "web-6", "web-7", "web-8"}
	for _, name := range names {
		createPod(t, cs, ns, name)
	}
	kittest.Eventually(t, deadline, "every Pod to run", func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == len(names), nil
	})

	lift := refusePodUpdates(t, cs, ns)
	startController(t, "--namespace="+ns, "--max-retry-delay="+refusalRetryDelay.String())
	// Long enough for the fast retries and a slow one to fail.
	time.Sleep(refusalRetryDelay + 3*time.Second)
	if labelled(context.Background(), cs, ns, names) {
		t.Fatal("the Pods were labelled while every Pod update was refused: the check's policy did not hold")
	}

	lift()
	lifted := time.Now()
	kittest.Eventually(t, deadline, "every Pod to be labelled with its phase after the refusal ended", func(ctx context.Context) (bool, error) {
		return labelled(ctx, cs, ns, names), nil
	})
	// A figure for docs/reliability.md, not a pass condition.
	t.Logf("all %d Pods labelled %.1fs after the refusal was lifted (--max-retry-delay=%s)", len(names), time.Since(lifted).Seconds(), refusalRetryDelay)
}

// refusePodUpdates makes the API server refuse every update (and patch) of a Pod
// in namespace, with a ValidatingAdmissionPolicy and its binding, and returns
// once the refusal is in force: a dry-run patch of a Pod there is refused as
// Invalid. The returned function lifts the refusal (also done at cleanup).
func refusePodUpdates(t *testing.T, cs kubernetes.Interface, namespace string) (lift func()) {
	t.Helper()
	ctx := context.Background()
	name := namespace + "-refuse-pod-updates"
	policies := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	bindings := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "the e2e check refuses every Pod update here for a while"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": namespace},
			}},
		},
	}
	if _, err := policies.Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ValidatingAdmissionPolicy %s: %v", name, err)
	}
	if _, err := bindings.Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ValidatingAdmissionPolicyBinding %s: %v", name, err)
	}
	lift = func() {
		for _, err := range []error{
			bindings.Delete(context.Background(), name, metav1.DeleteOptions{}),
			policies.Delete(context.Background(), name, metav1.DeleteOptions{}),
		} {
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("lifting the refusal of Pod updates in %s: %v", namespace, err)
			}
		}
	}
	t.Cleanup(lift)

	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("refusePodUpdates needs a Pod in %s to probe with: %v", namespace, err)
	}
	probe := pods.Items[0].Name
	kittest.Eventually(t, deadline, "the refusal of Pod updates to be in force", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods(namespace).Patch(ctx, probe, types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"controller-kit.dev/e2e-probe":"yes"}}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsInvalid(err), nil
	})
	return lift
}
