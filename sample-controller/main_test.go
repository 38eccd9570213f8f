package main

import (
	"context"
	"strings"
	"testing"
	"time"

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

func TestLeaseTimingsThatCannotWorkNameTheFlag(t *testing.T) {
	for _, tc := range []struct {
		lease, renew, retry time.Duration
		want                string // the flag the error must name; "" for valid timings
	}{
		{15 * time.Second, 10 * time.Second, 2 * time.Second, ""},
		{10 * time.Second, 7 * time.Second, time.Second, ""},
		{15 * time.Second, 10 * time.Second, 0, "--leader-elect-retry-period=0s"},
		{15 * time.Second, 10 * time.Second, 9 * time.Second, "--leader-elect-renew-deadline=10s"},
		{15 * time.Second, 20 * time.Second, 2 * time.Second, "--leader-elect-lease-duration=15s"},
		{0, 10 * time.Second, 2 * time.Second, "--leader-elect-lease-duration=0s"},
	} {
		err := checkLeaseTimings(tc.lease, tc.renew, tc.retry)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("checkLeaseTimings(%s, %s, %s) = %v, want nil", tc.lease, tc.renew, tc.retry, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("checkLeaseTimings(%s, %s, %s) = %v, want an error naming %s", tc.lease, tc.renew, tc.retry, err, tc.want)
		}
	}
}
