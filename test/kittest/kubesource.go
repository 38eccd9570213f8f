package kittest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// KubeSrc runs hack/kube-src.sh (lesson 4's make kube-src, kube-build,
// kube-restart, ...) with args, for the cluster $KUBECONFIG reaches and the
// copy of Kubernetes' source in dir, whose builds go beside it (dir/../kube-build);
// env adds variables (FLAGS=..., say). It returns the script's output; the error
// holds that output too. The suites of lessons 4 and 6 check a copy of their own
// through it when make check gives them a solution or the pristine source.
func KubeSrc(dir string, env []string, args ...string) (string, error) {
	info, err := CurrentClusterInfo()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(filepath.Join(RepoRoot(), "hack", "kube-src.sh"), args...)
	cmd.Env = append(os.Environ(), append(env,
		ClusterEnv+"="+info.Name,
		"KUBE_SRC="+dir,
		"KUBE_BUILD="+filepath.Join(filepath.Dir(dir), "kube-build"),
	)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("hack/kube-src.sh %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// RequireKubeCopy fails the test when dir holds no copy of Kubernetes' source
// (no git repository), naming make kube-src as the fix.
func RequireKubeCopy(t testing.TB, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		t.Fatalf("there is no copy of Kubernetes' source at %s: make kube-src makes one", dir)
	}
}

// KubeCopyVersion returns the tag of the first commit of the copy in dir, the
// pinned version it was made from (v1.37.2): what git diff compares the
// learner's changes with. The test fails when the copy has no such tag.
func KubeCopyVersion(t testing.TB, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "tag", "--list", "v*").Output()
	if err != nil || len(strings.Fields(string(out))) == 0 {
		t.Fatalf("the copy at %s has no version tag; make kube-src-reset makes a new one", dir)
	}
	return strings.Fields(string(out))[0]
}
