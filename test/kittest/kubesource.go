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

// KubeCopy is the copy of Kubernetes' source a suite of lesson 4 or 6 checks
// (PrepareKubeCopy), and the build of its component to run in the cluster.
type KubeCopy struct {
	// Dir is the copy: the learner's, _output/kubernetes, or a fresh one.
	Dir string
	// Binary is the component's build to run in the cluster for the checks:
	// the solution's build, or the pinned one of bin/ for the pristine
	// source; "" when the cluster is checked as it runs (the learner's copy).
	Binary string
	// Scratch is the folder of a fresh copy and its build (about 240 MB), for
	// the suite to remove when it is done; "" when there is none.
	Scratch string
}

// PrepareKubeCopy picks the copy make check asks a suite to check, by the
// environment it sets (env.go): with neither KIT_KUBE_SOLUTION nor
// KIT_KUBE_PRISTINE, the learner's copy and nothing to run; with a solution
// patch, a fresh copy in a folder named after prefix, the patch applied and
// component built from it; with the pristine source, a fresh unchanged copy and
// the pinned component. The error says which step failed (a patch that does
// not apply, a build that fails).
func PrepareKubeCopy(component, prefix string) (KubeCopy, error) {
	solution, pristine := os.Getenv(KubeSolutionEnv), os.Getenv(KubePristineEnv) == "1"
	if solution == "" && !pristine {
		return KubeCopy{Dir: filepath.Join(RepoRoot(), "_output", "kubernetes")}, nil
	}
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return KubeCopy{}, err
	}
	c := KubeCopy{Dir: filepath.Join(tmp, "kubernetes"), Scratch: tmp}
	if _, err := KubeSrc(c.Dir, nil, "src"); err != nil {
		return c, err
	}
	// The pinned build, which bin/ always holds (hack/kube-src.sh builds elsewhere).
	c.Binary = filepath.Join(RepoRoot(), "bin", component)
	if solution != "" {
		apply := exec.Command("git", "-C", c.Dir, "apply", "--unidiff-zero", solution)
		if out, err := apply.CombinedOutput(); err != nil {
			return c, fmt.Errorf("%s does not apply to a fresh copy of the source (%v): %s", solution, err, out)
		}
		if _, err := KubeSrc(c.Dir, nil, "build", component); err != nil {
			return c, err
		}
		c.Binary = filepath.Join(tmp, "kube-build", "bin", component)
	}
	return c, nil
}
