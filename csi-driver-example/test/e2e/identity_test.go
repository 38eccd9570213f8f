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

	"github.com/controller-kit/controller-kit/test/kittest"
)

const (
	// provisionerRole is the ClusterRole config/rbac ships for csi-provisioner.
	provisionerRole = "csi-driver-example-provisioner"
)

// TestRunCSIsProvisionerActsAsItsServiceAccount runs make run-csi as a learner
// does, from a shell whose KUBECONFIG is the cluster's admin, and checks that
// its csi-provisioner acts as the ServiceAccount csi-driver-example/csi-provisioner
// and nothing more: once the example claim is Bound, "create" on
// persistentvolumes is taken out of the role config/rbac ships, and a new claim
// of the class stays Pending while the API server refuses csi-provisioner that
// create (403, in the cluster's audit log); with the rule back, the claim is
// Bound. A second make run-csi beside the first is refused at once. It runs
// the reference driver whatever RECONCILER says: it checks the
// run target's identity, not a Controller service.
func TestRunCSIsProvisionerActsAsItsServiceAccount(t *testing.T) {
	if _, err := kittest.CurrentClusterInfo(); err != nil {
		t.Skipf("the check reads the local cluster's audit log: %v", err)
	}
	cs := kittest.Clientset(t)
	create := kittest.ServiceAccountAccess(sidecarNamespace, "csi-provisioner", "create", "", "persistentvolumes")

	// An example claim an earlier make run-csi left Bound (make debug
	// WHAT=csi-provisioner's, say) would pass the wait below before this run
	// serves: it goes first, and this run applies it afresh.
	example := &testDriver{t: t, cs: cs, namespace: "default"}
	forgetClaim(t, example, "example-claim")
	run := kittest.StartRunTarget(t, "run-csi", "RECONCILER=reference")
	t.Cleanup(func() { releaseClaim(t, example, "example-claim") })
	kittest.Eventually(t, 5*time.Minute, "make run-csi's example claim default/example-claim to be Bound (the first make run-csi builds the sidecars, minutes)",
		func(ctx context.Context) (bool, error) {
			if run.Exited() {
				code, _ := run.Wait(0)
				t.Fatalf("make run-csi exited (status %d) before its example claim was Bound", code)
			}
			claim, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "example-claim", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return claim.Status.Phase == corev1.ClaimBound, nil
		})
	// One copy per cluster: a second make run-csi, as from a forgotten
	// terminal, is refused at once while the first runs on.
	if err := kittest.SecondRunRefused(t, run, deadline, "run-csi", "RECONCILER=reference"); err != nil {
		t.Fatal(err)
	}

	restore := kittest.WithoutRule(t, cs, deadline, provisionerRole, create)
	since := time.Now()
	d := &testDriver{t: t, cs: cs, namespace: kittest.Namespace(t, cs, "csi-identity")}
	t.Cleanup(func() { releaseClaim(t, d, "refused") })
	d.createClaim("refused", shippedClass, "10Mi")
	refusal := kittest.WaitRefused(t, deadline, since, create, func(ctx context.Context) error {
		claim, err := cs.CoreV1().PersistentVolumeClaims(d.namespace).Get(ctx, "refused", metav1.GetOptions{})
		if err != nil || claim.Spec.VolumeName == "" {
			return nil
		}
		return fmt.Errorf("claim %s/refused is bound to the volume %s, which the role %s no longer lets csi-provisioner create: csi-provisioner acts as %s, not as its ServiceAccount",
			d.namespace, claim.Spec.VolumeName, provisionerRole, creatorOf(t, since, claim.Spec.VolumeName))
	})
	t.Logf("the API server refused: %s", refusal)
	d.requirePending("refused", "the API server refused csi-provisioner the volume")

	restore()
	d.waitBound("refused")
}

// creatorOf names the user that created the PersistentVolume called name at or
// after since, as the cluster's audit log says.
func creatorOf(t *testing.T, since time.Time, name string) string {
	t.Helper()
	return kittest.WrittenBy(t, since, func(e kittest.AuditEntry) bool {
		return e.Verb == "create" && e.Resource == "persistentvolumes" && e.Name == name && e.Code == 201
	}, "a user the audit log does not name")
}

// releaseClaim deletes the claim called name in d's namespace, if it is there,
// and waits until its volume is gone (the provisioner of make run-csi, still
// running, deletes it), so that no volume outlives the test.
func releaseClaim(t *testing.T, d *testDriver, name string) {
	t.Helper()
	ctx := context.Background()
	claim, err := d.cs.CoreV1().PersistentVolumeClaims(d.namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Errorf("reading claim %s/%s: %v", d.namespace, name, err)
		return
	}
	if err := d.cs.CoreV1().PersistentVolumeClaims(d.namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting claim %s/%s: %v", d.namespace, name, err)
		return
	}
	if claim.Spec.VolumeName != "" {
		d.waitGone(claim.Spec.VolumeName, "its claim was deleted while make run-csi runs")
	}
}

// forgetClaim deletes the claim called name in d's namespace, if it is there,
// and waits until it is gone, leaving its volume, if any, to its reclaim
// policy (a provisioner that runs later deletes a released volume of a Delete
// class).
func forgetClaim(t *testing.T, d *testDriver, name string) {
	t.Helper()
	err := d.cs.CoreV1().PersistentVolumeClaims(d.namespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Fatalf("deleting claim %s/%s, left by an earlier run: %v", d.namespace, name, err)
	}
	kittest.Eventually(t, deadline, "claim "+d.namespace+"/"+name+", left by an earlier run, to be gone", func(ctx context.Context) (bool, error) {
		_, err := d.cs.CoreV1().PersistentVolumeClaims(d.namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
