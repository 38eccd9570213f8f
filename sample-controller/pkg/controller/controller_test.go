package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	foolisters "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/listers/samplecontroller/v1alpha1"
)

// TestDeploymentEventsEnqueueFoosOfTheDeployment checks the Deployment handler:
// a change to an owned Deployment (even one seen only as a deletion tombstone)
// queues its Foo (also when that Foo replaced the Deployment's deleted owner of
// the same name); so does a change to a Deployment that a Foo names but does not
// control (its owner reference was removed, or it was never ours). A Deployment
// no Foo controls or names, or whose Foo is gone, queues nothing.
func TestDeploymentEventsEnqueueFoosOfTheDeployment(t *testing.T) {
	foo := newFoo("test", ptr.To[int32](1))
	owned := newDeployment(foo)
	lostOwner := owned.DeepCopy()
	lostOwner.OwnerReferences = nil
	unnamed := lostOwner.DeepCopy()
	unnamed.Name = "nobody-names-me"
	orphan := newDeployment(newFoo("gone", ptr.To[int32](1)))
	ofReplacedFoo := owned.DeepCopy()
	ofReplacedFoo.OwnerReferences[0].UID = "uid-of-an-earlier-foo-test"
	want := cache.ObjectName{Namespace: foo.Namespace, Name: foo.Name}
	fooIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		DeploymentNameIndex:  deploymentNameIndexFunc,
	})
	if err := fooIndexer.Add(foo); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		obj  interface{}
		// statusOnly: the event is an update of the Deployment's status alone.
		statusOnly bool
		want       []cache.ObjectName
	}{
		{"owned Deployment", owned, false, []cache.ObjectName{want}},
		{"status of an owned Deployment", owned, true, []cache.ObjectName{want}},
		{"tombstone of an owned Deployment", cache.DeletedFinalStateUnknown{Key: "default/test-deployment", Obj: owned}, false, []cache.ObjectName{want}},
		{"Deployment that lost its owner reference", lostOwner, false, []cache.ObjectName{want}},
		{"status of a Deployment that lost its owner reference", lostOwner, true, nil},
		{"tombstone of a Deployment that lost its owner reference", cache.DeletedFinalStateUnknown{Key: "default/test-deployment", Obj: lostOwner}, false, []cache.ObjectName{want}},
		{"Deployment no Foo controls or names", unnamed, false, nil},
		{"Deployment whose Foo is deleted", orphan, false, nil},
		{"Deployment of an earlier Foo of the same name", ofReplacedFoo, false, []cache.ObjectName{want}},
		{"tombstone of something else", cache.DeletedFinalStateUnknown{Key: "default/x", Obj: "not an object"}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			c := &Controller{
				queue:      workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]()),
				foos:       foolisters.NewFooLister(fooIndexer),
				fooIndexer: fooIndexer,
			}
			defer c.queue.ShutDown()

			c.enqueueFoosOf(logger, tc.obj, !tc.statusOnly)

			var got []cache.ObjectName
			for c.queue.Len() > 0 {
				key, _ := c.queue.Get()
				got = append(got, key)
				c.queue.Done(key)
			}
			if len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
				t.Errorf("queued %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFooDeletionTombstoneIsQueued checks that a Foo deletion the informer only
// saw as a tombstone still reaches the Reconciler (which logs the deletion).
func TestFooDeletionTombstoneIsQueued(t *testing.T) {
	foo := newFoo("test", nil)
	c := &Controller{queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]())}
	defer c.queue.ShutDown()

	c.enqueueFoo(cache.DeletedFinalStateUnknown{Key: "default/test", Obj: foo})

	if c.queue.Len() != 1 {
		t.Fatalf("queue length %d, want 1", c.queue.Len())
	}
	if key, _ := c.queue.Get(); key != (cache.ObjectName{Namespace: "default", Name: "test"}) {
		t.Errorf("queued %v, want default/test", key)
	}
}

// TestShutdownBeforeCachesSyncIsClean checks that a SIGTERM during startup (ctx
// cancelled while the informers still list) ends Run at once, starts no worker
// and shuts the queue down: a clean stop, so the process can exit 0.
func TestShutdownBeforeCachesSyncIsClean(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	c := &Controller{
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]()),
		synced: []cache.InformerSynced{func() bool { return false }}, // an informer that never lists
	}
	cancel()

	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx, 2)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after a shutdown before the caches synced")
	}
	if !c.queue.ShuttingDown() {
		t.Error("the queue was not shut down")
	}
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	if !strings.Contains(logs, "Shut down before the informer caches synced") || strings.Contains(logs, "Starting workers") {
		t.Errorf("log:\n%s\nwant \"Shut down before the informer caches synced\" and no \"Starting workers\"", logs)
	}
}
