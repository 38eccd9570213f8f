//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestRunAggregatedDelegatesAsItsServiceAccount runs make run-aggregated as a
// learner does, from a shell whose KUBECONFIG is the cluster's admin, and
// checks that sample-apiserver asks kube-apiserver whether a user may do what
// it asks (a SubjectAccessReview) as the ServiceAccount wardle/apiserver: once
// its APIService is Available, "create" on subjectaccessreviews is taken out of
// the ClusterRole system:auth-delegator that config/sample-apiserver.yaml binds
// it to, and a user allowed to list Flunders is refused the list while the API
// server refuses the server its SubjectAccessReview (403, in the cluster's
// audit log); with the rule back, the user lists them. A second make
// run-aggregated beside the first is refused, the APIService untouched. Not parallel:
// TestAggregatedServerServesFlunders runs make run-aggregated too, and a second
// copy is refused.
func TestRunAggregatedDelegatesAsItsServiceAccount(t *testing.T) {
	if _, err := kittest.CurrentClusterInfo(); err != nil {
		t.Skipf("make run-aggregated runs beside the local cluster: %v", err)
	}
	cs := kittest.Clientset(t)
	review := kittest.ServiceAccountAccess("wardle", "apiserver", "create", "authorization.k8s.io", "subjectaccessreviews")
	client, err := dynamic.NewForConfig(kittest.Config(t))
	if err != nil {
		t.Fatal(err)
	}

	// The first build takes minutes: not a wait bounded by the deadline.
	build := filepath.Join(kittest.RepoRoot(), "hack", "build-bins.sh")
	if out, err := exec.Command(build, "sample-apiserver", "kubectl").CombinedOutput(); err != nil {
		t.Fatalf("%s sample-apiserver kubectl: %v\n%s", build, err, out)
	}
	run := kittest.StartRunTarget(t, "run-aggregated")
	kittest.Eventually(t, deadline, "the APIService "+apiService+" to be Available",
		func(ctx context.Context) (bool, error) {
			if run.Exited() {
				code, _ := run.Wait(0)
				t.Fatalf("make run-aggregated exited (status %d) before its APIService was Available", code)
			}
			obj, err := client.Resource(apiServices).Get(ctx, apiService, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return available(obj)
		})

	// One copy per cluster: a second make run-aggregated, as from a forgotten
	// terminal, is refused at once and leaves the first's APIService as it was.
	before, err := client.Resource(apiServices).Get(context.Background(), apiService, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := kittest.SecondRunRefused(t, run, deadline, "run-aggregated"); err != nil {
		t.Fatal(err)
	}
	after, err := client.Resource(apiServices).Get(context.Background(), apiService, metav1.GetOptions{})
	if err != nil || after.GetResourceVersion() != before.GetResourceVersion() {
		t.Fatalf("the APIService %s after a second make run-aggregated was refused: %v (resourceVersion %s, was %s); want it untouched", apiService, err, after.GetResourceVersion(), before.GetResourceVersion())
	}

	// A user of the test's own, allowed to list Flunders in its namespace: the
	// aggregated server asks kube-apiserver about it (no answer cached yet).
	ns := kittest.Namespace(t, cs, "lesson6-identity")
	const reader = "lesson6-identity-reader"
	readerClient := flunderReader(t, cs, ns, reader)
	list := func(ctx context.Context) error {
		_, err := readerClient.Resource(flunders).Namespace(ns).List(ctx, metav1.ListOptions{})
		return err
	}

	restore := kittest.WithoutRule(t, cs, deadline, "system:auth-delegator", review)
	since := time.Now()
	var listErr error
	refusal := kittest.WaitRefused(t, deadline, since, review, func(ctx context.Context) error {
		if listErr = list(ctx); listErr == nil {
			return fmt.Errorf("user %s listed the Flunders of %s, which the aggregated server may not ask kube-apiserver about any more: it asks as %s, not as its ServiceAccount",
				reader, ns, reviewerOf(t, since))
		}
		return nil
	})
	t.Logf("the API server refused: %s; the user's list: %v", refusal, listErr)
	if err := list(context.Background()); err == nil {
		t.Errorf("user %s listed the Flunders of %s while the aggregated server could not ask kube-apiserver about it; want the list refused", reader, ns)
	}

	restore()
	kittest.Eventually(t, deadline, "user "+reader+" to list the Flunders of "+ns+" once the rule is back", func(ctx context.Context) (bool, error) {
		err := list(ctx)
		return err == nil, err
	})
	if run.Exited() {
		t.Error(errors.New("make run-aggregated exited while the check ran"))
	}
}

// reviewerOf names the user that created a SubjectAccessReview at or after
// since and was allowed to, other than the cluster's admin, as the cluster's
// audit log says.
func reviewerOf(t *testing.T, since time.Time) string {
	t.Helper()
	return kittest.WrittenBy(t, since, func(e kittest.AuditEntry) bool {
		return e.Resource == "subjectaccessreviews" && e.Code == 201 && e.User != "kwok-admin"
	}, "the cluster's admin (the audit log names no other user for its SubjectAccessReviews)")
}
