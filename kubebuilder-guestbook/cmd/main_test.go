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

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/controller-kit/controller-kit/kubebuilder-guestbook/internal/testenv"
)

// ENABLE_WEBHOOKS=false must really turn the webhooks off (it is the default of
// --enable-webhooks); anything that is not a boolean keeps them on.
func TestEnableWebhooksEnvSetsTheFlagDefault(t *testing.T) {
	tests := []struct {
		value string
		want  bool
	}{
		{"false", false},
		{"0", false},
		{"true", true},
		{"", true},
		{"no", true},
	}
	for _, tt := range tests {
		t.Run("ENABLE_WEBHOOKS="+tt.value, func(t *testing.T) {
			t.Setenv("ENABLE_WEBHOOKS", tt.value)
			if got := envBool("ENABLE_WEBHOOKS", true); got != tt.want {
				t.Errorf("envBool = %v; want %v", got, tt.want)
			}
		})
	}
}

// The missing-CRD case: started against an API server without the Guestbook CRD,
// the manager must not hang; it returns at once with an error that names the CRD
// and the command that installs it (main turns that into exit code 1).
func TestManagerWithoutTheCRDFailsNamingTheFix(t *testing.T) {
	assets, err := testenv.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets} // no CRDs
	if _, err := env.Start(); err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Args = []string{"manager", "--kubeconfig", path, "--enable-webhooks=false",
		"--health-probe-bind-address=0", "--metrics-bind-address=0"}

	err = run()

	if err == nil {
		t.Fatal("run() without the CRD returned nil")
	}
	for _, want := range []string{"Kind=Guestbook", "CRD is not installed", "make install"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
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

func TestMaxRetryDelayOutOfRangeNamesTheFlag(t *testing.T) {
	for _, d := range []time.Duration{0, 500 * time.Millisecond, time.Hour} {
		if err := checkMaxRetryDelay(d); err == nil || !strings.Contains(err.Error(), "--max-retry-delay="+d.String()) {
			t.Errorf("checkMaxRetryDelay(%s) = %v, want an error naming --max-retry-delay=%s", d, err, d)
		}
	}
	for _, d := range []time.Duration{time.Second, 30 * time.Second, 10 * time.Minute} {
		if err := checkMaxRetryDelay(d); err != nil {
			t.Errorf("checkMaxRetryDelay(%s) = %v, want nil", d, err)
		}
	}
}

// TestUnknownReconcilerNamesTheFlagAndTheOneMeant: a --reconciler that is no key
// of reconcilers is refused naming the flag and the keys, and a typo gets the
// name meant (make run-guestbook asks the manager with --list-reconcilers before
// any cluster work).
func TestUnknownReconcilerNamesTheFlagAndTheOneMeant(t *testing.T) {
	for name := range reconcilers {
		if err := reconcilerKnown(name); err != nil {
			t.Errorf("reconcilerKnown(%s) = %v, want nil", name, err)
		}
	}
	err := reconcilerKnown("stbu")
	if err == nil || !strings.Contains(err.Error(), `--reconciler="stbu"`) || !strings.Contains(err.Error(), "reference, stub") || !strings.Contains(err.Error(), "did you mean stub?") {
		t.Errorf("reconcilerKnown(stbu) = %v, want an error naming the flag, the Reconcilers and \"did you mean stub?\"", err)
	}
	if err := reconcilerKnown("mine"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("reconcilerKnown(mine) = %v, want an error that suggests nothing: mine is near no name", err)
	}
}
