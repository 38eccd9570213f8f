//go:build e2e

package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// withAPIServerFlags restarts the cluster's kube-apiserver with flags set, as
// make kube-restart WHAT=kube-apiserver FLAGS=... does (hack/kube-src.sh use),
// on the binary it runs now (the pinned one, or a solution's build that the
// suite's setup swapped in), and at the test's end restarts it once more with
// each flag back at the value it had (name= when it had none: for a string
// flag such as --encryption-provider-config, the server's default, unset). A
// restart the server refuses is undone by the script itself, so the test then
// fails with the server's own error and leaves nothing to put back.
//
// The server is away for seconds at each restart, and kube-controller-manager
// and kube-scheduler are restarted after it: a test that calls this is never
// parallel, so the suite's parallel tests wait until it has ended.
func withAPIServerFlags(t *testing.T, flags ...string) {
	t.Helper()
	// The copy of the source is not read by use, running and args; the
	// script only wants to know where it would be.
	dir := filepath.Join(kittest.RepoRoot(), "_output", "kubernetes")
	out, err := kittest.KubeSrc(dir, nil, "running", apiserver)
	if err != nil {
		t.Fatalf("which binary the cluster's kube-apiserver runs: %v", err)
	}
	binary := strings.TrimSpace(out)
	args, err := kittest.KubeSrc(dir, nil, "args", apiserver)
	if err != nil {
		t.Fatalf("the flags of the cluster's kube-apiserver: %v", err)
	}
	before := make([]string, len(flags))
	for i, flag := range flags {
		name, _, _ := strings.Cut(flag, "=")
		before[i] = name + "="
		for _, line := range strings.Split(args, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+"="); ok {
				before[i] = name + "=" + v
			}
		}
	}
	if _, err := kittest.KubeSrc(dir, []string{"FLAGS=" + strings.Join(flags, " ")}, "use", apiserver, binary); err != nil {
		t.Fatalf("make kube-restart WHAT=%s FLAGS=%q (on %s): %v", apiserver, strings.Join(flags, " "), binary, err)
	}
	t.Cleanup(func() {
		if _, err := kittest.KubeSrc(dir, []string{"FLAGS=" + strings.Join(before, " ")}, "use", apiserver, binary); err != nil {
			t.Errorf("putting kube-apiserver's flags back (%s): %v", strings.Join(before, " "), err)
		}
	})
}
