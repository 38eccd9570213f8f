package main

import (
	"context"
	"fmt"
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

func TestLeaseTimingsThatCannotWorkNameTheFlags(t *testing.T) {
	for _, tc := range []struct{ lease, renew, retry time.Duration }{
		{15 * time.Second, 10 * time.Second, 0},
		{15 * time.Second, 10 * time.Second, 9 * time.Second},
		{15 * time.Second, 20 * time.Second, 2 * time.Second},
		{0, 10 * time.Second, 2 * time.Second},
	} {
		o := options{leaderElect: true, leaseNS: "default", leaseName: "test", leaseDuration: tc.lease, renewDeadline: tc.renew, retryPeriod: tc.retry}
		reconciled := false
		err := runWithLeaderElection(context.Background(), o, kubefake.NewClientset(), func(context.Context) error {
			reconciled = true
			return nil
		})
		want := fmt.Sprintf("--leader-elect-lease-duration=%s --leader-elect-renew-deadline=%s --leader-elect-retry-period=%s do not work together",
			tc.lease, tc.renew, tc.retry)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("lease %s, renew %s, retry %s: error %v, want one starting %q", tc.lease, tc.renew, tc.retry, err, want)
		}
		if reconciled {
			t.Errorf("lease %s, renew %s, retry %s: reconciled although the timings cannot work", tc.lease, tc.renew, tc.retry)
		}
	}
}
