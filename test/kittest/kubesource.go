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
	// Scratch is the folder of a fresh copy and its build (about 240 MB),
	// which Close removes; "" when there is none.
	Scratch string

	// component is the one Binary is a build of, and restore puts back what
	// SwapIn changed in the cluster (nil when nothing).
	component string
	restore   func() error
}

// PrepareKubeCopy picks the copy make check asks a suite to check, by the
// environment it sets (env.go): with neither KIT_KUBE_SOLUTION nor
// KIT_KUBE_PRISTINE, the learner's copy and nothing to run; with a solution
// patch, a fresh copy in a folder named after prefix, the patch applied and
// component built from it; with the pristine source, a fresh unchanged copy and
// the pinned component. The error says which step failed (a patch that does
// not apply, a build that fails); Close removes what it made either way.
func PrepareKubeCopy(component, prefix string) (KubeCopy, error) {
	solution, pristine := os.Getenv(KubeSolutionEnv), os.Getenv(KubePristineEnv) == "1"
	if solution == "" && !pristine {
		return KubeCopy{Dir: filepath.Join(RepoRoot(), "_output", "kubernetes"), component: component}, nil
	}
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return KubeCopy{}, err
	}
	c := KubeCopy{Dir: filepath.Join(tmp, "kubernetes"), Scratch: tmp, component: component}
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

// SwapIn runs Binary as the cluster's component for the suite's tests (make
// kube-restart's way, hack/kube-src.sh use), with flag (such as
// --enable-admission-plugins; "" for none) set to what value returns for the
// value the cluster runs it with now ("" when it has none), and keeps the binary
// and the flag that ran before for Close to put back. It changes nothing when
// there is no Binary (the learner's copy, checked as the cluster runs it) or
// when the cluster runs it so already.
func (c *KubeCopy) SwapIn(flag string, value func(running string) string) error {
	return c.swapIn(KubeSrc, flag, value)
}

// swapIn is SwapIn through kubeSrc, which stands for KubeSrc.
func (c *KubeCopy) swapIn(kubeSrc func(dir string, env []string, args ...string) (string, error), flag string, value func(string) string) error {
	if c.Binary == "" {
		return nil
	}
	out, err := kubeSrc(c.Dir, nil, "running", c.component)
	if err != nil {
		return err
	}
	before := strings.TrimSpace(out)
	var beforeFlag, wantFlag string
	if flag != "" {
		if out, err = kubeSrc(c.Dir, nil, "args", c.component); err != nil {
			return err
		}
		running := ""
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, flag+"="); ok {
				running = strings.TrimSpace(v)
			}
		}
		beforeFlag, wantFlag = flag+"="+running, flag+"="+value(running)
	}
	if before == c.Binary && beforeFlag == wantFlag {
		return nil
	}
	if _, err := kubeSrc(c.Dir, flagsEnv(wantFlag), "use", c.component, c.Binary); err != nil {
		return err
	}
	c.restore = func() error {
		_, err := kubeSrc(c.Dir, flagsEnv(beforeFlag), "use", c.component, before)
		return err
	}
	return nil
}

// flagsEnv is the environment that has hack/kube-src.sh set flag on the
// component's command line (FLAGS=), none for "".
func flagsEnv(flag string) []string {
	if flag == "" {
		return nil
	}
	return []string{"FLAGS=" + flag}
}

// Close puts back the binary and the flag SwapIn replaced, then removes
// Scratch. Its error is the putting back's: a cluster left running the suite's
// build fails the suite; a Scratch that cannot be removed is only said on
// standard error. A suite passes it as its Suite's Teardown.
func (c *KubeCopy) Close() error {
	var err error
	if c.restore != nil {
		if err = c.restore(); err != nil {
			err = fmt.Errorf("putting back the cluster's %s: %w", c.component, err)
		}
		c.restore = nil
	}
	if c.Scratch != "" {
		if rm := os.RemoveAll(c.Scratch); rm != nil {
			fmt.Fprintln(os.Stderr, "removing the suite's copy of the source:", rm)
		}
		c.Scratch = ""
	}
	return err
}
