package kittest

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

func newFakeDynamic() *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{FooGVR: "FooList"})
}

func TestCreateFoosCreatesNumberedFoosEachWithItsDeploymentAndReplicas(t *testing.T) {
	client := newFakeDynamic()
	foos, err := CreateFoos(context.Background(), client, "burst", 12, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(foos) != 12 {
		t.Fatalf("CreateFoos returned %d Foos, want 12", len(foos))
	}
	for i, foo := range foos {
		name := FooName(i)
		deployment, _, _ := unstructured.NestedString(foo.Object, "spec", "deploymentName")
		replicas, found, _ := unstructured.NestedInt64(foo.Object, "spec", "replicas")
		if foo.GetName() != name || foo.GetNamespace() != "burst" || deployment != name || !found || replicas != 0 || foo.GetKind() != "Foo" {
			t.Errorf("Foo %d: %s/%s kind %s, deploymentName %q, replicas %d (set: %t); want burst/%[8]s, Foo, %[8]q, 0",
				i, foo.GetNamespace(), foo.GetName(), foo.GetKind(), deployment, replicas, found, name)
		}
	}
	list, err := client.Resource(FooGVR).Namespace("burst").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 12 {
		t.Errorf("the API holds %d Foos, want 12", len(list.Items))
	}
}

func TestCreateFoosReturnsTheRefusedCreateNamingTheFoo(t *testing.T) {
	client := newFakeDynamic()
	refused := errors.New("admission webhook said no")
	client.PrependReactor("create", "foos", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured).GetName() == FooName(5) {
			return true, nil, refused
		}
		return false, nil, nil
	})
	foos, err := CreateFoos(context.Background(), client, "burst", 20, 1, 3)
	if !errors.Is(err, refused) || !strings.Contains(err.Error(), "burst/"+FooName(5)) {
		t.Fatalf("CreateFoos returned %v, want the refusal of burst/%s", err, FooName(5))
	}
	if foos != nil {
		t.Errorf("CreateFoos returned %d Foos with its error, want none", len(foos))
	}
}

func TestNewFooNamesItselfAndItsDeploymentAlike(t *testing.T) {
	foo := NewFoo("ns", 42, 3)
	if foo.GetAPIVersion() != "samplecontroller.k8s.io/v1alpha1" || foo.GetName() != "foo-0042" {
		t.Errorf("NewFoo(ns, 42, 3) is %s %s, want samplecontroller.k8s.io/v1alpha1 foo-0042", foo.GetAPIVersion(), foo.GetName())
	}
	if d, _, _ := unstructured.NestedString(foo.Object, "spec", "deploymentName"); d != "foo-0042" {
		t.Errorf("spec.deploymentName = %q, want foo-0042", d)
	}
	if r, _, _ := unstructured.NestedInt64(foo.Object, "spec", "replicas"); r != 3 {
		t.Errorf("spec.replicas = %d, want 3", r)
	}
}
