/*
Copyright 2026 The controller-kit Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A Guestbook whose Reconcile keeps failing (an API server down for minutes, a
// refusal that lasts) is retried at least every --max-retry-delay, however many
// times it has failed, and a success starts its backoff again at 5ms.
// controller-runtime's default would wait its cap, 1000s (16 min 40 s), before
// every retry from the 19th on.
func TestRetryDelayGrowsToMaxRetryDelayAndNoFurther(t *testing.T) {
	for _, maxRetryDelay := range []time.Duration{0, 10 * time.Second} {
		bound := maxRetryDelay
		if bound == 0 {
			bound = DefaultMaxRetryDelay
		}
		limiter := NewRetryRateLimiter(maxRetryDelay)
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "shop"}}

		var delays []time.Duration
		for range 40 {
			delays = append(delays, limiter.When(req))
		}
		if delays[0] != 5*time.Millisecond {
			t.Errorf("max %s: first retry after %s, want 5ms", maxRetryDelay, delays[0])
		}
		for i, d := range delays {
			if d > bound {
				t.Fatalf("max %s: retry %d waits %s, more than %s", maxRetryDelay, i+1, d, bound)
			}
		}
		if last := delays[len(delays)-1]; last != bound {
			t.Errorf("max %s: after 40 failures the retry waits %s, want the bound %s", maxRetryDelay, last, bound)
		}
		limiter.Forget(req) // Reconcile succeeded
		if d := limiter.When(req); d != 5*time.Millisecond {
			t.Errorf("max %s: first retry after a success waits %s, want 5ms again", maxRetryDelay, d)
		}
	}
}
