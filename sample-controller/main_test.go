package main

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

func TestCheckFooCRDNamesTheFixWhenCRDIsMissing(t *testing.T) {
	client := kubefake.NewClientset()

	err := checkFooCRD(context.Background(), client)

	if err == nil {
		t.Fatal("checkFooCRD returned nil for a cluster without the Foo CRD")
	}
	for _, want := range []string{"foos.samplecontroller.k8s.io", "make run-sample", "kubectl apply --server-side"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestCheckFooCRDPassesWhenFoosAreServed(t *testing.T) {
	client := kubefake.NewClientset()
	client.Resources = []*metav1.APIResourceList{{
		GroupVersion: "samplecontroller.k8s.io/v1alpha1",
		APIResources: []metav1.APIResource{{Name: "foos", Kind: "Foo", Namespaced: true}},
	}}

	if err := checkFooCRD(context.Background(), client); err != nil {
		t.Errorf("checkFooCRD: %v", err)
	}
}
