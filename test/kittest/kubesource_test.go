package kittest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeKubeSrc stands for hack/kube-src.sh on a cluster that runs component
// from running, with args: it answers running and args, and records every
// use with its FLAGS.
type fakeKubeSrc struct {
	running, args string
	uses          []string
	failUse       bool
}

func (f *fakeKubeSrc) run(dir string, env []string, args ...string) (string, error) {
	switch args[0] {
	case "running":
		return f.running + "\n", nil
	case "args":
		return f.args, nil
	case "use":
		f.uses = append(f.uses, strings.Join(append(env, args[2]), " "))
		if f.failUse {
			return "", errors.New("kit-component: not healthy")
		}
		f.running = args[2]
		return "", nil
	}
	return "", errors.New("unexpected " + strings.Join(args, " "))
}

// TestSwapInRunsTheBuildWithItsFlagAndClosePutsBackWhatRan: the build runs in
// the cluster with the flag changed from what ran, Close puts back the binary
// and the flag that ran before and removes the scratch folder.
func TestSwapInRunsTheBuildWithItsFlagAndClosePutsBackWhatRan(t *testing.T) {
	scratch := t.TempDir()
	c := KubeCopy{Dir: filepath.Join(scratch, "kubernetes"), Binary: "/copy/kube-apiserver", Scratch: scratch, component: "kube-apiserver"}
	f := &fakeKubeSrc{running: "/bin/kube-apiserver", args: "--v=2\n--enable-admission-plugins=A,B\n"}
	var given string
	err := c.swapIn(f.run, "--enable-admission-plugins", func(running string) string {
		given = running
		return running + ",Mine"
	})
	if err != nil {
		t.Fatal(err)
	}
	if given != "A,B" {
		t.Errorf("value was given %q, want the running A,B", given)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"FLAGS=--enable-admission-plugins=A,B,Mine /copy/kube-apiserver",
		"FLAGS=--enable-admission-plugins=A,B /bin/kube-apiserver",
	}
	if !slices.Equal(f.uses, want) {
		t.Errorf("hack/kube-src.sh use was run as %q, want %q", f.uses, want)
	}
	if _, err := os.Stat(scratch); !os.IsNotExist(err) {
		t.Errorf("after Close, the scratch folder: %v; want it removed", err)
	}
}

// TestSwapInChangesNothingTheClusterRunsAlready: no use, and nothing for Close
// to put back, when the cluster runs the build already (no flag), or when there
// is no build (the learner's copy, checked as the cluster runs it).
func TestSwapInChangesNothingTheClusterRunsAlready(t *testing.T) {
	for _, c := range []KubeCopy{
		{Binary: "/copy/kube-controller-manager", component: "kube-controller-manager"},
		{component: "kube-controller-manager"},
	} {
		f := &fakeKubeSrc{running: "/copy/kube-controller-manager"}
		if err := c.swapIn(f.run, "", nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if len(f.uses) != 0 {
			t.Errorf("Binary %q: hack/kube-src.sh use was run as %q, want not at all", c.Binary, f.uses)
		}
	}
}

// TestCloseSaysWhatItCouldNotPutBack: a put-back that fails is Close's error,
// naming the component.
func TestCloseSaysWhatItCouldNotPutBack(t *testing.T) {
	c := KubeCopy{Binary: "/copy/kube-controller-manager", component: "kube-controller-manager"}
	f := &fakeKubeSrc{running: "/bin/kube-controller-manager"}
	if err := c.swapIn(f.run, "", nil); err != nil {
		t.Fatal(err)
	}
	f.failUse = true
	if err := c.Close(); err == nil || !strings.Contains(err.Error(), "putting back the cluster's kube-controller-manager") {
		t.Errorf("Close with a failing put-back = %v; want an error naming kube-controller-manager", err)
	}
	if want := []string{"/copy/kube-controller-manager", "/bin/kube-controller-manager"}; !slices.Equal(f.uses, want) {
		t.Errorf("hack/kube-src.sh use was run as %q, want %q (no FLAGS without a flag)", f.uses, want)
	}
}
