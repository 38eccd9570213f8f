//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// notCached is hack/debug.sh's exit code when KIT_DEBUG_CACHED=1 and the debug
// build is not cached (its header's exit codes).
const notCached = 4

// TestDebugReplicaServesARequest runs make debug WHAT=kube-apiserver's replica
// from the pinned module's debug build, sends it one create and reads the
// object back through the cluster's own kube-apiserver, then has make undebug
// remove it and finds nothing of it running. It never builds: with no cached
// debug build (make debug WHAT=kube-apiserver makes one while there is no copy
// of the source, minutes the first time) it skips, saying so. It leaves the
// learner's copy of the source out: a build from the copy changes with it, so
// none is ever cached.
func TestDebugReplicaServesARequest(t *testing.T) {
	t.Parallel()
	skipUnderASolution(t)
	info, err := kittest.CurrentClusterInfo()
	if err != nil {
		t.Fatalf("lesson 6's replica runs beside the local cluster's kube-apiserver: %v", err)
	}
	root := kittest.RepoRoot()
	state := filepath.Join(root, "_output", "debug", info.Name, apiserver+".env")
	if _, err := os.Stat(state); err == nil {
		t.Skipf("a replica of %s runs in the cluster %s already (%s; make undebug WHAT=%s ends it): the check leaves it be", apiserver, info.Name, state, apiserver)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	// KUBE_SRC names no copy: the pinned module's debug build, the one make
	// test may find cached, whatever copy the learner has.
	env := append(os.Environ(), kittest.ClusterEnv+"="+info.Name, "KUBECONFIG="+info.Kubeconfig,
		"KUBE_SRC="+filepath.Join(t.TempDir(), "no-copy"), "KIT_DEBUG_CACHED=1")
	// hack/debug.sh is make debug's body, run here for its exit code (make's
	// own is 2 whatever the script's).
	out, err := debugSh(root, append(env, "PORT="+port), "debug", apiserver)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == notCached {
		t.Skipf("no cached debug build of %s from the pinned module: the replica is not tried (make debug WHAT=%s builds one while there is no copy of the source, _output/kubernetes; minutes the first time)", apiserver, apiserver)
	}
	// Whatever make debug did, make undebug runs, and nothing of the replica
	// may be left: no process of its debug build (hack/debug.sh's path for
	// this cluster), nothing on delve's port or the replica's.
	binary := filepath.Join(root, "_output", "debug", info.Name, apiserver+"-replica")
	serve, _ := stateValue(state, "SERVE")
	t.Cleanup(func() {
		if out, err := debugSh(root, env, "undebug", apiserver); err != nil {
			t.Errorf("make undebug WHAT=%s: %v\n%s", apiserver, err, out)
		}
		for _, p := range []string{port, serve} {
			if p == "" {
				continue
			}
			if conn, err := net.DialTimeout("tcp", "127.0.0.1:"+p, time.Second); err == nil {
				conn.Close()
				t.Errorf("after make undebug, something still listens on 127.0.0.1:%s (delve's port %s, the replica's %s)", p, port, serve)
			}
		}
		if pids := processesOf(binary); len(pids) > 0 {
			t.Errorf("after make undebug, processes %v still run the replica's debug build %s", pids, binary)
		}
	})
	if err != nil {
		t.Fatalf("make debug WHAT=%s PORT=%s (hack/debug.sh debug %s): %v\n%s", apiserver, port, apiserver, err, out)
	}
	if !strings.Contains(out, "delve listening at 127.0.0.1:"+port) {
		t.Errorf("make debug printed no line \"delve listening at 127.0.0.1:%s\":\n%s", port, out)
	}
	kubeconfig := readState(t, state, "KUBECONFIG")
	if !strings.Contains(out, "kubeconfig: "+kubeconfig) {
		t.Errorf("make debug printed no line \"kubeconfig: %s\":\n%s", kubeconfig, out)
	}

	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("the replica's kubeconfig %s: %v", kubeconfig, err)
	}
	if want := "https://127.0.0.1:" + serve; config.Host != want {
		t.Fatalf("the replica's kubeconfig points at %s; want the replica, %s", config.Host, want)
	}
	replica, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "lesson6-replica")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	made, err := replica.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "through-the-replica"},
		Data:       map[string]string{"lesson": "6"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a ConfigMap through the replica (%s): %v; its log: %s", config.Host, err, readState(t, state, "LOG"))
	}
	got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, made.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the ConfigMap the replica made through the cluster's own kube-apiserver: %v; want it there, on the etcd both share", err)
	}
	if got.UID != made.UID {
		t.Errorf("the cluster's kube-apiserver holds ConfigMap %s/%s with uid %s; want the replica's, %s", ns, made.Name, got.UID, made.UID)
	}
}

// debugSh runs hack/debug.sh ARGS... at root with env and returns what it
// printed, standard output and error together. It runs from a cached debug
// build (KIT_DEBUG_CACHED=1 in env) or none: 5 minutes is plenty.
func debugSh(root string, env []string, args ...string) (string, error) {
	return debugShWith(root, env, 5*time.Minute, nil, args...)
}

// debugShWith is debugSh bounded by timeout, also copying what the script
// prints to progress when that is not nil (a first debug build's progress
// lines, for minutes).
func debugShWith(root string, env []string, timeout time.Duration, progress io.Writer, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "debug.sh"), args...)
	cmd.Dir, cmd.Env = root, env
	var out bytes.Buffer
	var w io.Writer = &out
	if progress != nil {
		w = io.MultiWriter(&out, progress)
	}
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	return out.String(), err
}

// readState returns KEY's value from make debug's state file (stateValue),
// and fails the test when it has none.
func readState(t *testing.T, path, key string) string {
	t.Helper()
	value, err := stateValue(path, key)
	if err != nil {
		t.Fatal(err)
	}
	return value
}

// stateValue returns KEY's value from a state file of hack/debug.sh
// (KEY=VALUE lines).
func stateValue(path, key string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("make debug's state file: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if value, ok := strings.CutPrefix(line, key+"="); ok {
			return value, nil
		}
	}
	return "", fmt.Errorf("make debug's state file %s has no %s=", path, key)
}

// processesOf returns the pids of the processes running binary (its path as
// /proc/PID/exe names it, " (deleted)" after it when rebuilt meanwhile).
func processesOf(binary string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && (exe == binary || exe == binary+" (deleted)") {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// freePort returns a port on 127.0.0.1 that nothing listens on, for delve.
func freePort() (string, error) {
	addr, err := kittest.FreeAddressE()
	if err != nil {
		return "", fmt.Errorf("finding a free port for delve: %w", err)
	}
	_, port, _ := strings.Cut(addr, ":")
	return port, nil
}
