//go:build e2e

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The bad input of lesson 6's admission-plugin exercise, on a kit local cluster
// (KIT_CLUSTER, KUBECONFIG): a kube-apiserver whose compiled-in plugin panics
// on every create, or refuses every create, swapped in with make kube-restart
// (hack/kube-src.sh use), is found unhealthy and the binary and flags it had are
// put back. The plugins are testdata/broken-admission-plugins.patch, applied to
// a fresh copy of the source in a temporary folder and built once (minutes the
// first time, the link alone later). Run it with
//
//	cd hack/cluster && KUBECONFIG=... KIT_CLUSTER=... GOWORK=off go test -tags e2e -run TestKubeRestartPutsBack -timeout 30m ./cmd/kit-component/
func TestKubeRestartPutsBackAnAPIServerThatAdmitsNothing(t *testing.T) {
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	patch, err := filepath.Abs("testdata/broken-admission-plugins.patch")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	env := append(os.Environ(), "KUBE_SRC="+filepath.Join(tmp, "kubernetes"), "KUBE_BUILD="+filepath.Join(tmp, "kube-build"))
	kubeSrc := func(extra []string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "kube-src.sh"), args...)
		cmd.Dir, cmd.Env = root, append(env, extra...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	must := func(args ...string) string {
		t.Helper()
		out, err := kubeSrc(nil, args...)
		if err != nil {
			t.Fatalf("hack/kube-src.sh %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(out)
	}
	before := must("running", "kube-apiserver")
	var beforeFlag string
	for _, line := range strings.Split(must("args", "kube-apiserver"), "\n") {
		if strings.HasPrefix(line, "--enable-admission-plugins=") {
			beforeFlag = line
		}
	}
	if beforeFlag == "" {
		t.Fatal("the cluster's kube-apiserver has no --enable-admission-plugins flag to add the broken plugins to")
	}

	// Should a swap pass (the code under test broken), the cluster gets its
	// binary and flags back all the same.
	t.Cleanup(func() {
		now, _ := kubeSrc(nil, "running", "kube-apiserver")
		args, _ := kubeSrc(nil, "args", "kube-apiserver")
		if strings.TrimSpace(now) == before && slices.Contains(strings.Split(args, "\n"), beforeFlag) {
			return
		}
		if out, err := kubeSrc([]string{"FLAGS=" + beforeFlag}, "use", "kube-apiserver", before); err != nil {
			t.Errorf("putting back %s with %s: %v\n%s", before, beforeFlag, err, out)
		}
	})

	must("src")
	if out, err := exec.Command("git", "-C", filepath.Join(tmp, "kubernetes"), "apply", "--unidiff-zero", patch).CombinedOutput(); err != nil {
		t.Fatalf("git apply %s: %v\n%s", patch, err, out)
	}
	must("build", "kube-apiserver")
	binary := filepath.Join(tmp, "kube-build", "bin", "kube-apiserver")

	for _, c := range []struct {
		plugin string
		want   []string
	}{
		{"KitRefusesEveryCreate", []string{"admits no create", "403", "KitRefusesEveryCreate refuses every create"}},
		{"KitPanicsOnCreate", []string{"admits no create", "the server panicked: runtime error: invalid memory address or nil pointer dereference",
			"in k8s.io/kubernetes/plugin/pkg/admission/kitbroken.(*panics).Validate at k8s.io/kubernetes@", "/plugin/pkg/admission/kitbroken/admission.go:"}},
	} {
		t.Run(c.plugin, func(t *testing.T) {
			out, err := kubeSrc([]string{"FLAGS=" + beforeFlag + "," + c.plugin}, "use", "kube-apiserver", binary)
			if err == nil {
				t.Fatalf("make kube-restart with %s passed; want it refused and the old binary put back:\n%s", c.plugin, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("make kube-restart's output does not say %q:\n%s", w, out)
				}
			}
			if now := must("running", "kube-apiserver"); now != before {
				t.Errorf("kube-apiserver runs %s after the failed swap; want %s put back", now, before)
			}
			if !slices.Contains(strings.Split(must("args", "kube-apiserver"), "\n"), beforeFlag) {
				t.Errorf("kube-apiserver's flags after the failed swap lack %s, the flag it had", beforeFlag)
			}
		})
	}
}
