package kittest

import (
	"context"
	"sync"
	"sync/atomic"
)

// ForEach calls fn(ctx, i) for each i in [0, n), from at most workers
// goroutines at once (fewer than 1 counts as 1), in no particular order, and
// returns once every call it started has returned. The first error fn returns
// cancels the ctx the calls get (calls in flight may give up), ends the handing
// out of indexes, and is what ForEach returns; if ctx ends before every index
// is handed out, ForEach returns ctx's cause (context.Cause) instead. It
// returns nil when fn ran for every i and returned nil each time. fn must be
// safe to call from several goroutines.
func ForEach(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, i); err != nil {
					failed.Store(true)
					cancel(err) // only the first cancel sets the cause
					return
				}
			}
		})
	}
	fed := 0
feed:
	for ; fed < n && ctx.Err() == nil; fed++ {
		select {
		case next <- fed:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if failed.Load() || fed < n {
		return context.Cause(ctx)
	}
	return nil
}
