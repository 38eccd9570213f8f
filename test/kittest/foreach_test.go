package kittest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestForEachCallsFnOnceForEveryIndex(t *testing.T) {
	for _, workers := range []int{-1, 0, 1, 7, 500} {
		calls := make([]atomic.Int32, 100)
		if err := ForEach(context.Background(), len(calls), workers, func(_ context.Context, i int) error {
			calls[i].Add(1)
			return nil
		}); err != nil {
			t.Fatalf("workers=%d: %v", workers, err)
		}
		for i := range calls {
			if got := calls[i].Load(); got != 1 {
				t.Errorf("workers=%d: fn(%d) ran %d times, want once", workers, i, got)
			}
		}
	}
}

func TestForEachRunsWorkersCallsAtOnceAndNoMore(t *testing.T) {
	const workers = 4
	var running, peak atomic.Int32
	// The first workers calls wait for each other: if ForEach ran fewer at
	// once, they would time out.
	var arrived sync.WaitGroup
	arrived.Add(workers)
	together := make(chan struct{})
	go func() { arrived.Wait(); close(together) }()
	err := ForEach(context.Background(), 40, workers, func(_ context.Context, i int) error {
		now := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
		}
		if i < workers {
			arrived.Done()
			select {
			case <-together:
			case <-time.After(10 * time.Second):
				return errors.New("the first calls never ran at the same time")
			}
		}
		time.Sleep(time.Millisecond)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := peak.Load(); got != workers {
		t.Errorf("at most %d calls ran at once, want %d", got, workers)
	}
}

func TestForEachReturnsTheFirstErrorAndCancelsTheOtherCalls(t *testing.T) {
	const workers = 4
	boom := errors.New("boom")
	var calls atomic.Int32
	err := ForEach(context.Background(), 1000, workers, func(ctx context.Context, i int) error {
		calls.Add(1)
		if i == workers-1 {
			return boom
		}
		// The others wait for the cancel that the failing call causes.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Second):
			return errors.New("not canceled")
		}
	})
	if !errors.Is(err, boom) {
		t.Fatalf("ForEach returned %v, want the failing call's %v", err, boom)
	}
	if got := calls.Load(); got != workers {
		t.Errorf("fn ran %d times, want %d: no index is handed out after the first error", got, workers)
	}
}

func TestForEachReturnsTheCauseOfAnEndedContext(t *testing.T) {
	stop := errors.New("stopped by the caller")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(stop)
	var calls atomic.Int32
	err := ForEach(ctx, 10, 2, func(context.Context, int) error {
		calls.Add(1)
		return nil
	})
	if !errors.Is(err, stop) {
		t.Errorf("ForEach returned %v, want the context's cause %v", err, stop)
	}
	if got := calls.Load(); got != 0 {
		t.Errorf("fn ran %d times under a context ended before the start, want 0", got)
	}
}

func TestForEachOfNoIndexesReturnsNil(t *testing.T) {
	if err := ForEach(context.Background(), 0, 4, func(context.Context, int) error {
		return errors.New("called")
	}); err != nil {
		t.Error(err)
	}
}
