package controller

import (
	"context"

	"k8s.io/client-go/tools/cache"
)

// Reconciler makes the world match one Foo's spec. The Controller calls it with
// the Foo's namespace/name whenever the Foo or a Deployment it owns changes.
//
// Reconcile must be level-triggered and idempotent: it reads the current state
// (from the informers' caches), changes only what differs, and returns nil when
// there is nothing left to do. A non-nil error puts the key back on the queue
// with backoff. A Foo that no longer exists is a normal deletion, not an error.
//
// The kit ships two: FooReconciler, the reference (the behaviour the e2e suite
// checks), and StubReconciler (logs what it sees; the learner's starting point).
// Pick one with --reconciler; a learner's copy is MyReconciler.
type Reconciler interface {
	Reconcile(ctx context.Context, key cache.ObjectName) error
}
