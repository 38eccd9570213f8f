//go:build e2e

package kittest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// These tests check the cluster the lessons run on, before any controller of the
// kit is involved: if one fails, the tiers' suites cannot be trusted either.

func TestNodesAreReady(t *testing.T) {
	cs := Clientset(t)
	Eventually(t, 2*time.Minute, "at least 3 Ready nodes", func(ctx context.Context) (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready >= 3, nil
	})
}

// TestDeploymentBecomesAvailableAndIsGarbageCollected walks the path every tier
// relies on: the Deployment controller makes a ReplicaSet, the ReplicaSet controller
// makes Pods, the scheduler binds them to (fake) nodes, the nodes report them
// running; and deleting the Deployment lets the garbage collector remove what it owned.
func TestDeploymentBecomesAvailableAndIsGarbageCollected(t *testing.T) {
	cs := Clientset(t)
	ns := Namespace(t, cs, "kit-cluster")
	labels := map[string]string{"app": "web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.29"}}},
			},
		},
	}
	ctx := context.Background()
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Deployment: %v", err)
	}
	Eventually(t, 2*time.Minute, "Deployment web to have 3 available replicas", func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Status.AvailableReplicas == 3, nil
	})
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s: node %q phase %s; want bound to a node and Running", p.Name, p.Spec.NodeName, p.Status.Phase)
		}
	}

	// Background propagation: the Deployment goes at once, the garbage collector
	// then deletes its ReplicaSet and that ReplicaSet's Pods through owner references.
	if err := cs.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{
		PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
	}); err != nil {
		t.Fatalf("delete Deployment: %v", err)
	}
	Eventually(t, 2*time.Minute, "the garbage collector to delete the ReplicaSet and Pods", func(ctx context.Context) (bool, error) {
		rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(rs.Items) == 0 && len(pods.Items) == 0, nil
	})
}

// kwokCluster returns the name of the kit's local cluster under test, or skips the
// test when the current context is not one (kind, or a learner's own cluster).
func kwokCluster(t *testing.T) string {
	raw, _ := loadRaw(t)
	name, ok := strings.CutPrefix(raw.CurrentContext, "kwok-")
	if !ok {
		t.Skipf("context %q is not the kit's local cluster; this check is about that cluster", raw.CurrentContext)
	}
	return name
}

// pinnedKubeVersion asks hack/controlplane/kube-version.sh, the one source of the pinned
// control-plane version, for it.
func pinnedKubeVersion(t *testing.T) string {
	out, err := exec.Command(filepath.Join(RepoRoot(), "hack", "controlplane", "kube-version.sh")).Output()
	if err != nil {
		t.Fatalf("hack/controlplane/kube-version.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestServersReportPinnedVersion(t *testing.T) {
	kwokCluster(t)
	want := pinnedKubeVersion(t)
	v, err := Clientset(t).Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("GET /version: %v", err)
	}
	if v.GitVersion != want {
		t.Errorf("kube-apiserver reports %s; want %s (the version ldflags of hack/build-bins.sh)", v.GitVersion, want)
	}
	// kube-controller-manager and kube-scheduler serve /version only on their own
	// secure ports; the running processes are these files, so ask the files.
	for _, name := range []string{"kube-controller-manager", "kube-scheduler", "kubectl"} {
		args := []string{"--version"}
		if name == "kubectl" {
			args = []string{"version", "--client"}
		}
		out, err := runBin(name, args...)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.Contains(out, want) {
			t.Errorf("%s reports %q; want %s", name, strings.TrimSpace(out), want)
		}
	}
}

// TestLocalClusterListensOnLoopbackOnly checks every listening TCP socket of the
// cluster's processes (found through kwokctl's pid files) is bound to 127.0.0.1:
// the local cluster must not be reachable from the network the machine is on.
func TestLocalClusterListensOnLoopbackOnly(t *testing.T) {
	name := kwokCluster(t)
	pidFiles, _ := filepath.Glob(filepath.Join(RepoRoot(), "_output", "kwok", "clusters", name, "pids", "*.pid"))
	if len(pidFiles) == 0 {
		t.Fatalf("no pid files for cluster %s under _output/kwok; is it running?", name)
	}
	listeners := listeningSockets(t) // inode -> local address
	checked := 0
	for _, pf := range pidFiles {
		b, err := os.ReadFile(pf)
		if err != nil {
			t.Fatalf("read %s: %v", pf, err)
		}
		pid := strings.TrimSpace(string(b))
		fds, err := os.ReadDir(filepath.Join("/proc", pid, "fd"))
		if err != nil {
			t.Errorf("%s: process %s: %v", filepath.Base(pf), pid, err)
			continue
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join("/proc", pid, "fd", fd.Name()))
			if err != nil || !strings.HasPrefix(target, "socket:[") {
				continue
			}
			addr, ok := listeners[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")]
			if !ok {
				continue
			}
			checked++
			if !strings.HasPrefix(addr, "127.0.0.1:") {
				t.Errorf("%s (pid %s) listens on %s; want 127.0.0.1 only", strings.TrimSuffix(filepath.Base(pf), ".pid"), pid, addr)
			}
		}
	}
	if checked == 0 {
		t.Fatalf("found no listening sockets of the cluster's processes; the check cannot have worked")
	}
	t.Logf("checked %d listening sockets of %d processes", checked, len(pidFiles))
}

// listeningSockets reads /proc/net/tcp and tcp6 and returns the local address of
// every listening socket, keyed by socket inode.
func listeningSockets(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Skipf("cannot read %s (not Linux?): %v", file, err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // 0A is TCP_LISTEN
				continue
			}
			out[f[9]] = decodeAddr(f[1])
		}
	}
	return out
}

// decodeAddr turns /proc/net/tcp's "0100007F:1F90" into "127.0.0.1:8080". IPv6
// addresses are returned as "[hex]:port", which never looks like loopback IPv4.
func decodeAddr(s string) string {
	host, port, _ := strings.Cut(s, ":")
	p, _ := strconv.ParseUint(port, 16, 16)
	if len(host) != 8 {
		return fmt.Sprintf("[%s]:%d", host, p)
	}
	ip, _ := strconv.ParseUint(host, 16, 32)
	// The kernel prints the address in host byte order (little-endian here).
	return fmt.Sprintf("%d.%d.%d.%d:%d", ip&0xff, ip>>8&0xff, ip>>16&0xff, ip>>24, p)
}

func TestKitKubectlReachesTheCluster(t *testing.T) {
	if _, err := os.Stat(filepath.Join(RepoRoot(), "bin", "kubectl")); err != nil {
		t.Fatalf("bin/kubectl: %v (make bins builds it)", err)
	}
	out := Kubectl(t, "get", "nodes", "-o", "name")
	if !strings.Contains(out, "node/") {
		t.Errorf("kubectl get nodes printed %q; want node names", out)
	}
}

// runBin runs a binary from the kit's bin/ folder and returns its combined output.
func runBin(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(RepoRoot(), "bin", name), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%w: %s", err, out)
	}
	return string(out), nil
}
