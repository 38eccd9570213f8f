//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestAPIClientCreatesUpdatesThroughAConflictListsAndDeletes runs lesson 1's
// plain API client (workqueue-example/apiclient) against the kit's cluster, as
// the lesson does, and checks what it did where it happened: in the API
// server's audit log, its writes to Deployments in order (the create, the
// second writer's patch, the update refused with 409, the update that
// succeeds, the delete) and, once it exits 0, no Deployment, ReplicaSet or Pod
// of it left in the namespace.
func TestAPIClientCreatesUpdatesThroughAConflictListsAndDeletes(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := kittest.Namespace(t, cs, "wq-apiclient")

	start := time.Now()
	t.Logf("apiclient's narration:\n%s", runAPIClient(t, ns))

	ctx := context.Background()
	selector := metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=apiclient-demo"}
	if d, err := cs.AppsV1().Deployments(ns).List(ctx, selector); err != nil || len(d.Items) > 0 {
		t.Errorf("after apiclient exited 0: Deployments left %v (%v)", d, err)
	}
	if rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, selector); err != nil || len(rs.Items) > 0 {
		t.Errorf("after apiclient exited 0: %d ReplicaSets left (%v); the foreground delete waits for them", len(rs.Items), err)
	}
	if pods, err := cs.CoreV1().Pods(ns).List(ctx, selector); err != nil || len(pods.Items) > 0 {
		t.Errorf("after apiclient exited 0: %d Pods left (%v); the foreground delete waits for them", len(pods.Items), err)
	}

	// The API server logs a request a moment after answering it. The second
	// writer's patch makes the first update conflict; the Deployment
	// controller's status writes during the rollout may make the next ones
	// conflict too, so any number of 409s may come before the 200.
	want := []string{
		"apiclient create 201",
		"apiclient-second-writer patch 200",
		"apiclient update 409",
		"apiclient update 200",
		"apiclient delete 200",
	}
	var got []string
	kittest.Eventually(t, deadline, "apiclient's writes in the audit log", func(context.Context) (bool, error) {
		got = nil
		for _, w := range kittest.Writes(t, start, func(e kittest.AuditEntry) bool {
			return e.Namespace == ns && e.Resource == "deployments" && e.Name == "apiclient-demo"
		}) {
			agent := w.UserAgent[strings.LastIndex(w.UserAgent, "/")+1:]
			if agent == "apiclient" || agent == "apiclient-second-writer" {
				got = append(got, fmt.Sprintf("%s %s %d", agent, w.Verb, w.Code))
			}
		}
		return len(got) > 0 && got[len(got)-1] == want[len(want)-1], nil
	})
	if strings.Join(slices.Compact(slices.Clone(got)), "\n") != strings.Join(want, "\n") {
		t.Errorf("apiclient's writes, in the order the API server received them:\n  %s\nwant (a run of 409s counts as one):\n  %s",
			strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestExerciseOrphanLeavesTheReplicaSetsRunning checks lesson 1's propagation
// exercise; it runs only with EXERCISE=propagation. apiclient gets
// --propagation=Orphan: step 5 deletes the Deployment with the Orphan policy,
// so the Deployment goes and its ReplicaSet stays, with no owner any more.
func TestExerciseOrphanLeavesTheReplicaSetsRunning(t *testing.T) {
	t.Parallel()
	kittest.Exercise(t, "propagation")
	cs := clientset(t)
	ns := kittest.Namespace(t, cs, "wq-orphan")

	runAPIClient(t, ns, "--propagation=Orphan")

	ctx := context.Background()
	selector := metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=apiclient-demo"}
	if d, err := cs.AppsV1().Deployments(ns).List(ctx, selector); err != nil || len(d.Items) > 0 {
		t.Errorf("after apiclient --propagation=Orphan exited 0: %d Deployments left (%v), want the Deployment gone", len(d.Items), err)
	}
	// The garbage collector removes the orphans' owner references a moment
	// after the Deployment is gone.
	kittest.Eventually(t, deadline, "the Deployment's ReplicaSets to stay, with no owner reference", func(ctx context.Context) (bool, error) {
		rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, selector)
		if err != nil {
			return false, err
		}
		if len(rs.Items) == 0 {
			return false, fmt.Errorf("no ReplicaSet left: the delete was not Orphan")
		}
		for _, r := range rs.Items {
			if len(r.OwnerReferences) > 0 {
				return false, fmt.Errorf("ReplicaSet %s still has owner references %v", r.Name, r.OwnerReferences)
			}
		}
		return true, nil
	})
}

// runAPIClient builds apiclient (with the solution under check laid over it,
// if any: make check SOLUTION=...), runs it in namespace with args against the
// cluster under test, and returns what it printed; the test fails when it does
// not exit 0.
func runAPIClient(t *testing.T, namespace string, args ...string) []byte {
	t.Helper()
	bin, err := kittest.CachedBinary(filepath.Join(suite.TierDir, "apiclient"), "apiclient", os.Getenv(kittest.OverlayEnv))
	if err != nil {
		t.Fatal(err)
	}
	args = append([]string{"--kubeconfig=" + kittest.Kubeconfig(), "--namespace=" + namespace}, args...)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("apiclient %s: %v\n%s", strings.Join(args[2:], " "), err, out)
	}
	return out
}
