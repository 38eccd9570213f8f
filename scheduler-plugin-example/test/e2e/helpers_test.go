//go:build e2e

// Package e2e is scheduler-plugin-example's conformance suite: each test starts
// the scheduler as a real process against the kit cluster ($KUBECONFIG), as a
// second scheduler beside the cluster's, with the plugin version under test
// ($RECONCILER), and checks one behaviour a user would notice on Pods: the node
// each is bound to, its PodScheduled condition, its events. Run it with
// `make check LESSON=8`; RECONCILER=stub shows which behaviours your own plugin
// still lacks.
//
// The tests run side by side without seeing each other: each starts a
// scheduler of its own under a scheduler name of its own (its Pods name it in
// spec.schedulerName), and makes kwok Nodes of its own in a zone of its own
// (the test namespace's name), so another test's scheduler never takes its
// Pods and the reference never puts them on another test's Nodes.
package e2e

import (
	"context"
	_ "embed"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/test/kittest"
)

const (
	// zoneAnnotation is how a Pod asks ZoneSpread for a zone, and zoneLabel the
	// Node label it compares (zonespread.ZoneAnnotation and ZoneLabel in the
	// scheduler's module, which this suite does not import; see go.mod).
	zoneAnnotation = "zonespread.controller-kit.dev/zone"
	zoneLabel      = "topology.kubernetes.io/zone"
	// shippedSchedulerName is the profile's name in config/scheduler-config.yaml,
	// which each test replaces by one of its own.
	shippedSchedulerName = "schedulerName: scheduler-plugin-example"
	// schedulerUser is the user the scheduler runs as (by impersonation): the
	// cluster's own kube-scheduler's, so it has exactly that one's RBAC.
	schedulerUser = "system:kube-scheduler"
	// testNodeLabel marks the Nodes the suite makes, so that a run cut short
	// leaves Nodes a look with kubectl finds (kubectl get nodes -l ...).
	testNodeLabel = "controller-kit.dev/e2e-scheduler"
)

// lessonFile is this suite's row of the lesson table: which lesson it checks,
// the scheduler to build and one row per check (kittest.Lesson).
//
//go:embed lesson.yaml
var lessonFile []byte

var (
	// deadline bounds every poll: long enough for a loaded 2-core machine, and
	// only reached when a test is going to fail anyway. `make check` shortens it
	// through $KIT_E2E_TIMEOUT.
	deadline = kittest.Deadline(90 * time.Second)
	// suite builds the scheduler once for every test (suite.Bin).
	suite = &kittest.Suite{File: lessonFile}
)

func TestMain(m *testing.M) {
	os.Exit(suite.Run(m))
}

// startScheduler runs the scheduler with the plugin version under test and the
// shipped configuration, its profile renamed to name, as the cluster's own
// scheduler's user. It returns once the process has started; the Pods of name
// wait in the API server until its informers have synced.
func startScheduler(t *testing.T, name string) *kittest.Process {
	t.Helper()
	return runScheduler(t, name, "--secure-port=0")
}

// startSchedulerWithMetrics is startScheduler with the scheduler's secure port
// open on a free 127.0.0.1 port, its /metrics readable with no credentials
// (--authorization-always-allow-paths), and returns that page's URL, for
// kittest.ScrapeSelfSigned.
func startSchedulerWithMetrics(t *testing.T, name string) string {
	t.Helper()
	host, port, err := net.SplitHostPort(kittest.FreeAddress(t))
	if err != nil {
		t.Fatal(err)
	}
	runScheduler(t, name, "--bind-address="+host, "--secure-port="+port,
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics")
	return "https://" + net.JoinHostPort(host, port) + "/metrics"
}

// runScheduler is startScheduler with serving, the scheduler's flags for its
// secure port.
func runScheduler(t *testing.T, name string, serving ...string) *kittest.Process {
	t.Helper()
	shipped, err := kittest.File(filepath.Join(suite.TierDir, "config/scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(shipped)
	if err != nil {
		t.Fatal(err)
	}
	config := string(data)
	if !strings.Contains(config, shippedSchedulerName) {
		t.Fatalf("%s has no line %q, which the suite renames for each test", shipped, shippedSchedulerName)
	}
	config = strings.Replace(config, shippedSchedulerName, "schedulerName: "+name, 1)
	config += "clientConnection:\n  kubeconfig: " + kittest.ImpersonatingUserKubeconfig(t, schedulerUser, "system:authenticated") + "\n"
	path := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--config=" + path, "--reconciler=" + kittest.Reconciler(), "-v=2"}, serving...)
	return kittest.StartProcess(t, "scheduler", suite.Bin, args...)
}

// makeNode creates a kwok Node called name in zone ("" for no zone label),
// which kwok reports Ready, and deletes it at cleanup.
func makeNode(t *testing.T, cs kubernetes.Interface, name, zone string) {
	t.Helper()
	labels := map[string]string{testNodeLabel: "true"}
	if zone != "" {
		labels[zoneLabel] = zone
	}
	kittest.KwokNode(t, cs, metav1.ObjectMeta{Name: name, Labels: labels})
}

// podSpec returns the spec of a Pod for scheduler (its spec.schedulerName).
func podSpec(scheduler string) corev1.PodSpec {
	return corev1.PodSpec{
		SchedulerName: scheduler,
		Containers:    []corev1.Container{{Name: "web", Image: "nginx:1.27"}},
	}
}

// makePod creates a Pod called name for scheduler, asking for zone ("" for
// none), with tolerations if any.
func makePod(t *testing.T, cs kubernetes.Interface, namespace, name, scheduler, zone string, tolerations ...corev1.Toleration) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: podSpec(scheduler)}
	if zone != "" {
		pod.Annotations = map[string]string{zoneAnnotation: zone}
	}
	pod.Spec.Tolerations = tolerations
	if _, err := cs.CoreV1().Pods(namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Pod %s: %v", name, err)
	}
}

// waitBound waits until the Pod namespace/name is bound to a node and returns
// the node's name.
func waitBound(t *testing.T, cs kubernetes.Interface, namespace, name string, timeout time.Duration) string {
	t.Helper()
	var node string
	kittest.Eventually(t, timeout, "Pod "+namespace+"/"+name+" bound to a node (spec.nodeName)", func(ctx context.Context) (bool, error) {
		pod, err := cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = pod.Spec.NodeName
		return node != "", nil
	})
	return node
}

// schedulingEvent waits for an Event of reason about the Pod namespace/name
// and returns it.
func schedulingEvent(t *testing.T, cs kubernetes.Interface, namespace, name, reason string) *eventsv1.Event {
	t.Helper()
	var found *eventsv1.Event
	kittest.Eventually(t, deadline, "a "+reason+" Event about Pod "+namespace+"/"+name, func(ctx context.Context) (bool, error) {
		events, err := cs.EventsV1().Events(namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"regarding.name": name, "reason": reason}.String(),
		})
		if err != nil {
			return false, err
		}
		for i := range events.Items {
			if events.Items[i].Regarding.Kind == "Pod" {
				found = &events.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	return found
}

// podsOnNodes returns how many Pods of namespace each node holds.
func podsOnNodes(t *testing.T, cs kubernetes.Interface, namespace string) map[string]int {
	t.Helper()
	pods, err := cs.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, p := range pods.Items {
		count[p.Spec.NodeName]++
	}
	return count
}

// makeReplicaSet creates a ReplicaSet called name of replicas Pods for the
// scheduler named namespace, asking for the zone of the same name.
func makeReplicaSet(t *testing.T, cs kubernetes.Interface, namespace, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{zoneAnnotation: namespace}},
		Spec:       podSpec(namespace),
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}
	if _, err := cs.AppsV1().ReplicaSets(namespace).Create(context.Background(), rs, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ReplicaSet %s: %v", name, err)
	}
}

// waitLivePodsBound waits until want live Pods of namespace (those without a
// deletionTimestamp) are bound, and returns how many live Pods each node holds.
func waitLivePodsBound(t *testing.T, cs kubernetes.Interface, namespace string, want int) map[string]int {
	t.Helper()
	var live map[string]int
	kittest.Eventually(t, deadline, fmt.Sprintf("%d live Pods of namespace %s bound", want, namespace), func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		live = map[string]int{}
		bound := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
				live[p.Spec.NodeName]++
				bound++
			}
		}
		return bound == want, nil
	})
	return live
}

// nodeNames returns n names of Nodes of the test's zone: zone-1, zone-2, ...
func nodeNames(zone string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", zone, i+1)
	}
	return names
}

// unschedulableAttempts returns how many times the scheduler whose /metrics is
// at url has tried to place a Pod of its profile name and found no node
// (scheduler_schedule_attempts_total{result="unschedulable"}), waiting for its
// secure port to answer.
func unschedulableAttempts(t *testing.T, url, name string) float64 {
	t.Helper()
	var attempts float64
	kittest.Eventually(t, deadline, "the scheduler's "+url, func(ctx context.Context) (bool, error) {
		m, err := kittest.ScrapeSelfSigned(ctx, url)
		if err != nil {
			return false, err
		}
		attempts, _ = m.Value("scheduler_schedule_attempts_total", map[string]string{"profile": name, "result": "unschedulable"})
		return true, nil
	})
	return attempts
}
