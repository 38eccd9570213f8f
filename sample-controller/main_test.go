package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/cli"
)

// runCommand runs the command as main does (through component-base's cli)
// with args, and returns what it printed to standard output.
func runCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs(args)
	err := cli.RunNoErrOutput(cmd)
	return out.String(), err
}

func TestFlagNamesAcceptUnderscoresForDashes(t *testing.T) {
	for _, flag := range []string{"--list-reconcilers", "--list_reconcilers"} {
		out, err := runCommand(t, flag)
		if err != nil {
			t.Fatalf("%s: %v", flag, err)
		}
		if out != "reference\nstub\n" {
			t.Errorf("%s printed %q, want the Reconciler names one per line", flag, out)
		}
	}
}

func TestHelpPrintsTheFlagsInSections(t *testing.T) {
	out, err := runCommand(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	// Each section holds one of its flags: --help is printed a section at a
	// time, as kube-controller-manager's is.
	for section, flag := range map[string]string{
		"Generic flags:":         "--kube-api-qps",
		"Foo controller flags:":  "--reconciler",
		"Leader election flags:": "--leader-elect-lease-duration",
		"Logs flags:":            "--vmodule",
		"Global flags:":          "--help",
	} {
		at := strings.Index(out, section)
		if at < 0 {
			t.Errorf("--help has no section %q:\n%s", section, out)
			continue
		}
		rest := out[at+len(section):]
		if next := strings.Index(rest, " flags:\n"); next >= 0 {
			rest = rest[:next]
		}
		if !strings.Contains(rest, flag) {
			t.Errorf("--help's section %q does not list %s", section, flag)
		}
	}
}

func TestArgumentsAreRefused(t *testing.T) {
	_, err := runCommand(t, "foo")
	if err == nil || !strings.Contains(err.Error(), "takes flags only") {
		t.Errorf("an argument gave the error %v, want one saying the command takes flags only", err)
	}
}

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

// A --max-retry-delay outside 1s..10m is refused before anything connects,
// naming the flag and a value that works.
func TestMaxRetryDelayOutOfRangeNamesTheFlag(t *testing.T) {
	for _, delay := range []time.Duration{0, 500 * time.Millisecond, time.Hour} {
		err := run(context.Background(), options{reconciler: "reference", maxRetryDelay: delay, metricsAddr: "0"})
		if err == nil || !strings.Contains(err.Error(), "--max-retry-delay="+delay.String()) || !strings.Contains(err.Error(), "30s") {
			t.Errorf("--max-retry-delay=%s: error %v, want one naming the flag and 30s", delay, err)
		}
	}
}

// TestListReconcilersRefusesAnUnknownReconcilerNamingTheOneMeant: with a
// --reconciler that is no key of reconcilers, --list-reconcilers fails naming
// the flag, the names and, for a typo, the one meant: that is how make run asks
// before any cluster work.
func TestListReconcilersRefusesAnUnknownReconcilerNamingTheOneMeant(t *testing.T) {
	_, err := runCommand(t, "--reconciler=stbu", "--list-reconcilers")
	if err == nil || !strings.Contains(err.Error(), `--reconciler="stbu"`) || !strings.Contains(err.Error(), "reference, stub") || !strings.Contains(err.Error(), "did you mean stub?") {
		t.Errorf("--reconciler=stbu --list-reconcilers: %v, want an error naming the flag, the Reconcilers and \"did you mean stub?\"", err)
	}
	if err := reconcilerKnown("mine"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("reconcilerKnown(mine) = %v, want an error that suggests nothing: mine is near no name", err)
	}
}
