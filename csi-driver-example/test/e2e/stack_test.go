//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/controller-kit/controller-kit/test/kittest"
	"github.com/controller-kit/controller-kit/test/kittest/delve"
)

const (
	// provisionLocation is where the lesson stops csi-provisioner (its debug
	// entry's breakpoint, lesson.yaml).
	provisionLocation = "github.com/kubernetes-csi/external-provisioner/v6/pkg/controller.(*csiProvisioner).Provision"
)

// TestProvisionStopsWithTheStackTheLessonQuotes runs csi-provisioner under
// delve as the lesson does (make debug WHAT=csi-provisioner: make run-csi with
// a debug build of the sidecar in its place), stops it in Provision for a
// claim of the shipped StorageClass, and holds the stopped goroutine's frames
// to the stack the lesson quotes (<!-- stack: provision -->).
func TestProvisionStopsWithTheStackTheLessonQuotes(t *testing.T) {
	kittest.SkipElsewhere(t)
	quoted, err := delve.ReadQuotedStack(suite.Lesson.Doc, "provision")
	if err != nil {
		t.Fatal(err)
	}
	info, err := kittest.CurrentClusterInfo()
	if err != nil {
		t.Fatalf("this check runs make debug, which needs the kit's cluster: %v", err)
	}
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "csi-stack")
	d := delve.Foreground(t, "csi-provisioner", "make test-lesson7", kittest.ClusterEnv+"="+info.Name, "KUBECONFIG="+info.Kubeconfig)
	if err := d.Halt(); err != nil {
		t.Fatal(err)
	}
	const name = "stopped"
	bp, err := d.Break(provisionLocation, fmt.Sprintf("options.PVC.Namespace == %q && options.PVC.Name == %q", ns, name))
	if err != nil {
		t.Fatal(err)
	}
	stopped := d.ContinueUntilStop()
	claim := (&testDriver{t: t, cs: cs, namespace: ns})
	claim.createClaim(name, shippedClass, "1Mi")
	st := d.WaitForBreakpoint(t, stopped, bp, deadline)
	gid := st.CurrentThread.GoroutineID
	stack, err := d.Stack(gid, 50)
	if err != nil {
		t.Fatal(err)
	}
	delve.RequireQuotedStack(t, quoted, stack)
	d.WantString(t, gid, "options.PVC.Name", name, "Provision")
	if err := d.Clear(bp.ID); err != nil {
		t.Fatal(err)
	}
	d.DetachRunning()
	_ = cs.CoreV1().PersistentVolumeClaims(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
}
