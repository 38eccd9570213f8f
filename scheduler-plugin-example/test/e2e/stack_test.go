//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/controller-kit/controller-kit/test/kittest"
	"github.com/controller-kit/controller-kit/test/kittest/delve"
)

const (
	// filterLocation is the reference plugin's Filter, where the lesson stops
	// the scheduler.
	filterLocation = "github.com/controller-kit/controller-kit/scheduler-plugin-example/pkg/zonespread.(*ZoneSpread).Filter"
	// shippedScheduler is the profile make run-scheduler runs
	// (config/scheduler-config.yaml).
	shippedScheduler = "scheduler-plugin-example"
	// ancestorDepth is how many frames of the goroutine that started Filter's
	// goroutine are read: more than the lesson quotes.
	ancestorDepth = 30
)

// TestFilterStopsWithTheStackTheLessonQuotes runs the scheduler under delve as
// the lesson does (GODEBUG=tracebackancestors=1 make debug
// WHAT=scheduler-plugin-example), stops it in ZoneSpread's Filter for a Pod of
// its profile, and holds the stopped goroutine's frames, followed by those of
// the goroutine that started it (the scheduling cycle's, which the
// parallelizer left waiting), to the stack the lesson quotes (<!-- stack:
// filter -->).
func TestFilterStopsWithTheStackTheLessonQuotes(t *testing.T) {
	if r := kittest.Reconciler(); r != kittest.DefaultReconciler {
		t.Skipf("the quoted stack is the reference plugin's Filter; RECONCILER=%s has another", r)
	}
	quoted, err := delve.ReadQuotedStack(suite.Lesson.Doc, "filter")
	if err != nil {
		t.Fatal(err)
	}
	info, err := kittest.CurrentClusterInfo()
	if err != nil {
		t.Fatalf("this check runs make debug, which needs the kit's cluster: %v", err)
	}
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "filter-stack")
	// What make run-scheduler applies stays out of the other checks' way.
	examples := filepath.Join(suite.TierDir, "config", "examples")
	t.Cleanup(func() {
		_, _ = kittest.KubectlE("delete", "--ignore-not-found", "--wait=false",
			"-f", filepath.Join(examples, "deployment.yaml"), "-f", filepath.Join(examples, "nodes.yaml"))
	})
	d := delve.Foreground(t, "scheduler-plugin-example", "make test-lesson8",
		kittest.ClusterEnv+"="+info.Name, "KUBECONFIG="+info.Kubeconfig, "GODEBUG=tracebackancestors=1")
	if err := d.Halt(); err != nil {
		t.Fatal(err)
	}
	const name = "stopped"
	bp, err := d.Break(filterLocation, fmt.Sprintf("pod.Namespace == %q && pod.Name == %q", ns, name))
	if err != nil {
		t.Fatal(err)
	}
	stopped := d.ContinueUntilStop()
	makePod(t, cs, ns, name, shippedScheduler, "zone-b")
	st := d.WaitForBreakpoint(t, stopped, bp, deadline)
	gid := st.CurrentThread.GoroutineID
	stack, err := d.Stack(gid, 50)
	if err != nil {
		t.Fatal(err)
	}
	ancestors, err := d.Ancestors(gid, 1, ancestorDepth)
	if err != nil {
		t.Fatal(err)
	}
	if len(ancestors) == 0 {
		t.Fatalf("delve shows no goroutine that started Filter's (goroutine %d): the scheduler runs without GODEBUG=tracebackancestors=1", gid)
	}
	delve.RequireQuotedStack(t, quoted, append(stack, ancestors[0]...))
	d.WantString(t, gid, "pod.Name", name, "Filter")
	if err := d.Clear(bp.ID); err != nil {
		t.Fatal(err)
	}
	d.DetachRunning()
	waitBound(t, cs, ns, name, deadline)
}
