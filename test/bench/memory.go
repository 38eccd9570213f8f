package main

import (
	"context"
	"fmt"
	"runtime"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// cacheCost is what one cached Deployment costs in an informer's cache, in
// bytes of Go heap, three ways: as client-go caches it by default, with
// managedFields dropped by a transform (what sample-controller does), and as a
// metadata-only informer caches it (name, labels, owner references...: no spec
// or status).
type cacheCost struct {
	Objects           int     `json:"objects"`
	Full              float64 `json:"fullBytesPerObject"`
	NoManagedFields   float64 `json:"noManagedFieldsBytesPerObject"`
	MetadataOnly      float64 `json:"metadataOnlyBytesPerObject"`
	MetadataNoManaged float64 `json:"metadataOnlyNoManagedFieldsBytesPerObject"`
}

// measureCacheCost fills an informer cache with the bench namespace's
// Deployments in this process, one way at a time, and measures the live heap
// it holds (after a garbage collection, with the informer stopped and its
// store kept) divided by the number of Deployments.
func measureCacheCost(ctx context.Context, c *cluster) (cacheCost, error) {
	var cost cacheCost
	drop := func(obj any) (any, error) {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetManagedFields(nil)
		}
		return obj, nil
	}
	typed := func(transform cache.TransformFunc) func(ctx context.Context) (cache.Store, error) {
		return func(ctx context.Context) (cache.Store, error) {
			opts := []informers.SharedInformerOption{informers.WithNamespace(benchNamespace)}
			if transform != nil {
				opts = append(opts, informers.WithTransform(transform))
			}
			f := informers.NewSharedInformerFactoryWithOptions(c.kube, 0, opts...)
			inf := f.Apps().V1().Deployments().Informer()
			return runInformer(ctx, f, inf)
		}
	}
	metadataOnly := func(transform cache.TransformFunc) func(ctx context.Context) (cache.Store, error) {
		return func(ctx context.Context) (cache.Store, error) {
			mc, err := metadata.NewForConfig(c.cfg)
			if err != nil {
				return nil, err
			}
			f := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, benchNamespace, nil)
			inf := f.ForResource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Informer()
			if transform != nil {
				if err := inf.SetTransform(transform); err != nil {
					return nil, err
				}
			}
			return runInformer(ctx, f, inf)
		}
	}
	for _, m := range []struct {
		into *float64
		fill func(ctx context.Context) (cache.Store, error)
	}{
		{&cost.Full, typed(nil)}, {&cost.NoManagedFields, typed(drop)},
		{&cost.MetadataOnly, metadataOnly(nil)}, {&cost.MetadataNoManaged, metadataOnly(drop)},
	} {
		before := liveHeap()
		store, err := m.fill(ctx)
		if err != nil {
			return cost, err
		}
		after := liveHeap()
		n := len(store.ListKeys())
		if n == 0 {
			return cost, fmt.Errorf("no Deployments in namespace %s to measure", benchNamespace)
		}
		cost.Objects = n
		*m.into = float64(after-before) / float64(n)
		runtime.KeepAlive(store)
	}
	return cost, nil
}

// informerStarter is what both informer factories offer.
type informerStarter interface {
	Start(stopCh <-chan struct{})
	Shutdown()
}

// runInformer starts the factory, waits for the cache, then stops the
// informer and returns its store with the objects still in it.
func runInformer(ctx context.Context, f informerStarter, inf cache.SharedIndexInformer) (cache.Store, error) {
	ctx, cancel := context.WithCancel(ctx)
	f.Start(ctx.Done())
	ok := cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	cancel()
	f.Shutdown()
	if !ok {
		return nil, fmt.Errorf("the Deployments informer did not sync")
	}
	return inf.GetStore(), nil
}

// liveHeap is the heap in use after two garbage collections.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
