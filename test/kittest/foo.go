package kittest

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// The Foos of a burst, for the harnesses that make them by the hundred (make
// bench, make -C sample-controller burst, make test-reliability). They are
// unstructured, written through a dynamic client, so that kittest requires no
// tier's module: sample-controller's typed Foo and clientset stay in its own.

// FooGVR is sample-controller's Foo resource (samplecontroller.k8s.io/v1alpha1,
// foos); upstream kubernetes/sample-controller serves the same.
var FooGVR = schema.GroupVersionResource{Group: "samplecontroller.k8s.io", Version: "v1alpha1", Resource: "foos"}

// FooName is the name of the i-th Foo of a burst, and of its Deployment:
// foo-0000, foo-0001, ... (four digits at least, so that a listing of up to
// 10,000 sorts in creation order).
func FooName(i int) string { return fmt.Sprintf("foo-%04d", i) }

// NewFoo returns the i-th Foo of a burst in namespace: named FooName(i), asking
// for a Deployment of the same name with replicas replicas (0 keeps the
// scheduler and kwok out of a measurement).
func NewFoo(namespace string, i int, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": FooGVR.GroupVersion().String(),
		"kind":       "Foo",
		"metadata":   map[string]any{"name": FooName(i), "namespace": namespace},
		"spec":       map[string]any{"deploymentName": FooName(i), "replicas": replicas},
	}}
}

// CreateFoos creates the Foos NewFoo(namespace, i, replicas) for i in [0, n)
// from workers goroutines at once (ForEach), and returns them as the API server
// stored them (uid and resourceVersion set), the i-th at index i. The error is
// the first create that failed, naming the Foo; the Foos created before it
// stay.
func CreateFoos(ctx context.Context, client dynamic.Interface, namespace string, n int, replicas int64, workers int) ([]*unstructured.Unstructured, error) {
	foos := make([]*unstructured.Unstructured, n)
	err := ForEach(ctx, n, workers, func(ctx context.Context, i int) error {
		foo, err := client.Resource(FooGVR).Namespace(namespace).Create(ctx, NewFoo(namespace, i, replicas), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating Foo %s/%s: %w", namespace, FooName(i), err)
		}
		foos[i] = foo
		return nil
	})
	if err != nil {
		return nil, err
	}
	return foos, nil
}
