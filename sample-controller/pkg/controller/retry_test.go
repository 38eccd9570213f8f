package controller

import (
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
)

// A Foo that keeps failing (an API server down for minutes, a refusal that
// lasts) is retried at least every maxRetryDelay, however many times it has
// failed, and a success starts its backoff again at 5ms. With the default
// controller rate limiter the 20th retry would wait 5ms * 2^19, 43 minutes.
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
