package controller

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	foofake "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/clientset/versioned/fake"
	fooinformers "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/informers/externalversions"
)

// A Foo that keeps failing (an API server down for minutes, a refusal that
// lasts) is retried at least every maxRetryDelay, however many times it has
// failed, and a success starts its backoff again at 5ms. With the default
// controller rate limiter every retry from the 19th on would wait 1000s
// (16 min 40 s), its cap.
func TestRetryDelayGrowsToMaxRetryDelayAndNoFurther(t *testing.T) {
	const maxRetryDelay = 30 * time.Second
	limiter := NewRetryRateLimiter(maxRetryDelay)
	key := cache.ObjectName{Namespace: "team-a", Name: "refused"}

	var delays []time.Duration
	for range 40 {
		delays = append(delays, limiter.When(key))
	}
	if delays[0] != 5*time.Millisecond {
		t.Errorf("first retry after %s, want 5ms: a passing error costs milliseconds", delays[0])
	}
	for i, d := range delays {
		if d > maxRetryDelay {
			t.Fatalf("retry %d waits %s, more than --max-retry-delay=%s", i+1, d, maxRetryDelay)
		}
		if i > 0 && d < delays[i-1] {
			t.Errorf("retry %d waits %s, less than retry %d (%s): the backoff must not shrink while the key fails", i+1, d, i, delays[i-1])
		}
	}
	if last := delays[len(delays)-1]; last != maxRetryDelay {
		t.Errorf("after 40 failures the retry waits %s, want the bound %s", last, maxRetryDelay)
	}
	if n := limiter.NumRequeues(key); n != 40 {
		t.Errorf("NumRequeues = %d after 40 failures, want 40: the key is never dropped", n)
	}

	limiter.Forget(key) // Reconcile succeeded
	if d := limiter.When(key); d != 5*time.Millisecond {
		t.Errorf("first retry after a success waits %s, want 5ms again", d)
	}
}

// conflictOnce is a Reconciler whose first call fails with an optimistic-lock
// conflict, as a write against a cache a moment behind does, and whose later
// calls succeed.
type conflictOnce struct{ calls int }

func (r *conflictOnce) Reconcile(_ context.Context, key cache.ObjectName) error {
	r.calls++
	if r.calls == 1 {
		return apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, key.Name,
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	return nil
}

// A conflict is a requeue, not a failure: the key comes back and is reconciled
// again, and nothing is logged at error level (the field case
// conflict-is-not-failure: an operator that logged each as an ERROR and
// reported it in events and conditions alarmed its users for nothing).
func TestConflictIsRequeuedWithoutAnErrorLine(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx := klog.NewContext(context.Background(), logger)
	kubeFactory := kubeinformers.NewSharedInformerFactory(kubefake.NewClientset(), 0)
	fooFactory := fooinformers.NewSharedInformerFactory(foofake.NewSimpleClientset(), 0)
	r := &conflictOnce{}
	c, err := New(ctx, fooFactory.Samplecontroller().V1alpha1().Foos(), kubeFactory.Apps().V1().Deployments(), r, time.Second)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer c.queue.ShutDown()

	c.queue.Add(cache.ObjectName{Namespace: "default", Name: "busy"})
	c.processNextWorkItem(ctx) // the conflict: back on the queue after its backoff
	deadline := time.Now().Add(10 * time.Second)
	for c.queue.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	c.processNextWorkItem(ctx)

	if r.calls != 2 {
		t.Errorf("reconciled %d times, want 2: a conflict is retried", r.calls)
	}
	for _, line := range strings.Split(logger.GetSink().(ktesting.Underlier).GetBuffer().String(), "\n") {
		if strings.HasPrefix(line, "E") {
			t.Errorf("a conflict was logged at error level: %s", line)
		}
	}
}
