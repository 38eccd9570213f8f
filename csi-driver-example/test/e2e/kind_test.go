//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// The kind checks (lesson.yaml's kindOnly) run the driver as make deploy-csi
// deploys it, built into images from the tier as it stands and run with the
// Reconciler under test: the Deployment csi-controller (the driver and the
// sidecars) and the DaemonSet csi-node (the driver on each node, registering
// itself with the kubelet), with the shipped CSIDriver and StorageClass. The
// kubelet of the kind node plays its real part: it registers the driver,
// stages and publishes a Pod's volume, unpublishes and unstages it. They
// share that one deployment, so they do not run in parallel (go test runs them
// one after another, before the suite's parallel checks start); each deploys
// it first if this run has not (deployed), so any one runs alone.

const (
	// driverNamespace is where config/deploy runs the driver's Pods.
	driverNamespace = "csi-driver-example"
	// nodePluginSelector selects the Pods of the DaemonSet csi-node.
	nodePluginSelector = "app.kubernetes.io/name=csi-node"
	// shippedClass is the StorageClass config/storageclass.yaml ships.
	shippedClass = "csi-driver-example"
	// nodeStateDir is the node's folder the deployed driver keeps its volumes
	// in (config/deploy's --state-dir): what a Pod writes into a volume is in
	// its folder volumes/<ID>/data, the folder NodeStageVolume mounts.
	nodeStateDir = "/var/lib/csi-driver-example"
	// volumesOfTheDriver is in the mounted folder of every mount of a volume's
	// folder (mountinfo's fourth field: kind keeps the node's /var in a Docker
	// volume, so the folder is named as the host sees it, ending so).
	volumesOfTheDriver = "/csi-driver-example/volumes/"
	// writtenFile is the file the checks' Pods write into their volume.
	writtenFile = "written-by-pod"
	// podImage is what the checks' Pods run: a shell that writes the file.
	// The kit's kind node image holds it (hack/cluster/kind-node/stand-ins.txt).
	podImage = "busybox:1.36"
)

// registrationDeadline is how long a check waits for the kubelet to register
// the driver: the longer of deadline and 2 minutes 30 seconds, since it does
// not only depend on the driver. After a registration that failed (the stub's,
// or a learner's driver before it was fixed), the kubelet tries the same
// socket again only after a backoff that doubles up to 2 minutes 2 seconds
// (its goroutinemap's exponentialbackoff), even for a new driver's Pod.
var registrationDeadline = max(deadline, 150*time.Second)

var (
	// deployOnce deploys the driver once per run of the suite; deployErr is
	// what it said.
	deployOnce sync.Once
	deployErr  error
	// unregistered is set once a check waited for the registration in vain:
	// the checks after it that need it fail at once, naming it, instead of
	// each waiting out its deadline again.
	unregistered string
)

// deployed deploys the driver in the kind cluster (make docker-build,
// kind-load and deploy of the tier, with the Reconciler under test and
// DEPLOY_WAIT=ready: the registration is a check's to see), once per run,
// and fails the test when that failed. The images are built from the tier as
// it stands, so a learner's change is what runs.
func deployed(t *testing.T) {
	t.Helper()
	deployOnce.Do(func() { deployErr = deploy() })
	if deployErr != nil {
		t.Fatal(deployErr)
	}
}

// deploy runs the tier's make docker-build kind-load deploy for the kind
// cluster the kubeconfig names, its output kept in the suite's log folder.
func deploy() error {
	raw, _, err := kittest.LoadKubeconfig()
	if err != nil {
		return err
	}
	cluster := strings.TrimPrefix(raw.CurrentContext, "kind-")
	logFile := filepath.Join(os.TempDir(), "csi-kind-deploy.log")
	if dir := os.Getenv(kittest.LogDirEnv); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		logFile = filepath.Join(dir, "deploy-csi.log")
	}
	out, err := os.Create(logFile)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command("make", "--no-print-directory", "-C", suite.TierDir, "docker-build", "kind-load", "deploy",
		"RECONCILER="+kittest.Reconciler(), "DEPLOY_WAIT=ready", "KIND_CLUSTER="+cluster, "KUBECONFIG="+kittest.Kubeconfig())
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("deploying the driver (make -C %s docker-build kind-load deploy RECONCILER=%s): %v; its output: %s", suite.TierDir, kittest.Reconciler(), err, logFile)
	}
	return nil
}

// kindNode returns the cluster's one Node: the kit's kind clusters have one,
// whose Docker container has the Node's name.
func kindNode(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 1 {
		t.Fatalf("the cluster has %d Nodes; the kind checks run the driver's volumes on one (the kit's kind clusters have one node)", len(nodes.Items))
	}
	return nodes.Items[0].Name
}

// onNode runs the shell command inside the kind node's container and returns
// its output; the error carries what it printed on standard error.
func onNode(node, command string) (string, error) {
	cmd := exec.Command("docker", "exec", node, "sh", "-c", command)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("docker exec %s sh -c %q: %w: %s", node, command, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// driverRegistered reports whether the node's CSINode lists the shipped
// driver with the node's name as its node ID (what NodeGetInfo answers).
func driverRegistered(ctx context.Context, cs kubernetes.Interface, node string) (bool, error) {
	csiNode, err := cs.StorageV1().CSINodes().Get(ctx, node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, d := range csiNode.Spec.Drivers {
		if d.Name == shippedDriverName {
			if d.NodeID != node {
				return false, fmt.Errorf("CSINode %s lists %s with node ID %q, want %q (NodeGetInfo's node_id, --node-id)", node, d.Name, d.NodeID, node)
			}
			return true, nil
		}
	}
	return false, nil
}

// waitRegistered waits until the kubelet of node lists the driver in its
// CSINode. It fails the test, quoting the kubelet's own lines about the
// driver since since, when the deadline passes first, and the checks after
// it fail at once (see unregistered).
func waitRegistered(t *testing.T, cs kubernetes.Interface, node string, since time.Time) {
	t.Helper()
	if unregistered != "" {
		t.Fatalf("the kubelet of %s never registered the driver in %s: skipped waiting again; fix that first (exercise 4)", node, unregistered)
	}
	stop := time.Now().Add(registrationDeadline)
	var last error
	for time.Now().Before(stop) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ok, err := driverRegistered(ctx, cs, node)
		cancel()
		if ok {
			return
		}
		last = err
		time.Sleep(time.Second)
	}
	unregistered = t.Name()
	msg := fmt.Sprintf("the kubelet of %s did not register the driver %s within %s: CSINode %s does not list it", node, shippedDriverName, registrationDeadline, node)
	if last != nil {
		msg += fmt.Sprintf(" (%v)", last)
	}
	t.Fatalf("%s.\nThe kubelet's own lines about the driver (docker exec %s journalctl -u kubelet | grep %s):\n%s\nThe node plugin's side:\n%s",
		msg, node, shippedDriverName, kubeletLines(node, since, shippedDriverName), nodePluginRestarts(cs))
}

// nodePluginRestarts says, for each Pod of the DaemonSet csi-node, how often
// its driver restarted (the driver exits when the kubelet refuses it, as
// NotifyRegistrationStatus says) and the command that shows its log (its last
// run's, when it restarted).
func nodePluginRestarts(cs kubernetes.Interface) string {
	pods, err := listNodePlugin(context.Background(), cs)
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	if len(pods) == 0 {
		return "  (no Pod of the DaemonSet csi-node: kubectl -n " + driverNamespace + " describe daemonset csi-node)"
	}
	var lines []string
	for _, p := range pods {
		restarts := int32(0)
		for _, c := range p.Status.ContainerStatuses {
			restarts += c.RestartCount
		}
		logs := fmt.Sprintf("its log: kubectl -n %s logs %s", driverNamespace, p.Name)
		if restarts > 0 {
			logs = fmt.Sprintf("its last run's log: kubectl -n %s logs %s --previous", driverNamespace, p.Name)
		}
		lines = append(lines, fmt.Sprintf("  Pod %s: its driver restarted %d times (%s)", p.Name, restarts, logs))
	}
	return strings.Join(lines, "\n")
}

// kubeletLines returns the last lines of the kubelet's log on node since since
// that name what, indented, or why it cannot read them.
func kubeletLines(node string, since time.Time, what string) string {
	out, err := onNode(node, fmt.Sprintf("journalctl -u kubelet --no-pager --since '@%d' | grep -F '%s' | tail -n 3", since.Unix(), what))
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	if strings.TrimSpace(out) == "" {
		return "  (none: the kubelet's plugin watcher found no registration socket of it, or the driver's Pod is not running: kubectl -n " + driverNamespace + " get pods)"
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		lines = append(lines, "  "+line)
	}
	return strings.Join(lines, "\n")
}

// volumeMounts returns the mount points on node of the volume's folder
// volumeID (all volumes' when volumeID is ""), read from the node's
// /proc/1/mountinfo: the bind mounts NodeStageVolume and NodePublishVolume made.
func volumeMounts(node, volumeID string) ([]string, error) {
	out, err := onNode(node, "cat /proc/1/mountinfo")
	if err != nil {
		return nil, err
	}
	var mounts []string
	scanner := bufio.NewScanner(strings.NewReader(out))
	for scanner.Scan() {
		// ID parent major:minor root mount-point options ...
		fields := strings.Fields(scanner.Text())
		if len(fields) < 5 {
			continue
		}
		_, folder, found := strings.Cut(fields[3], volumesOfTheDriver)
		if found && (volumeID == "" || folder == volumeID || strings.HasPrefix(folder, volumeID+"/")) {
			mounts = append(mounts, fields[4])
		}
	}
	return mounts, scanner.Err()
}

// kindVolumeUser is a Pod of a check and its claim, of the shipped
// StorageClass, in a namespace of the check's own.
type kindVolumeUser struct {
	t         *testing.T
	cs        kubernetes.Interface
	namespace string
	node      string
}

// newKindVolumeUser makes the check's namespace. At cleanup, while the driver
// still runs, it deletes the namespace's Pods and claims and waits until their
// volumes are gone, so that no volume outlives the check.
func newKindVolumeUser(t *testing.T, cs kubernetes.Interface, prefix, node string) *kindVolumeUser {
	t.Helper()
	u := &kindVolumeUser{t: t, cs: cs, namespace: kittest.Namespace(t, cs, prefix), node: node}
	t.Cleanup(u.release)
	return u
}

// podWithClaim creates a claim called name and a Pod of the same name on the
// node that writes content into the file writtenFile of the claim's volume,
// then stays up.
func (u *kindVolumeUser) podWithClaim(name, content string) {
	u.t.Helper()
	ctx := context.Background()
	class := shippedClass
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: u.namespace},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Mi")},
			},
		},
	}
	if _, err := u.cs.CoreV1().PersistentVolumeClaims(u.namespace).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		u.t.Fatalf("creating claim %s: %v", name, err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: u.namespace},
		Spec: corev1.PodSpec{
			NodeName: u.node,
			Containers: []corev1.Container{{
				Name:         "writer",
				Image:        podImage,
				Command:      []string{"sh", "-c", "echo " + content + " > /data/" + writtenFile + " && exec sleep 3600"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name},
			}}},
		},
	}
	if _, err := u.cs.CoreV1().Pods(u.namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		u.t.Fatalf("creating Pod %s: %v", name, err)
	}
}

// waitRunning waits until the Pod called name is Running and returns the ID of
// its claim's volume (the PersistentVolume's volumeHandle). On a timeout it
// fails with the kubelet's last FailedMount or FailedAttachVolume event of the
// Pod, which quotes the driver's answer.
func (u *kindVolumeUser) waitRunning(name string) string {
	u.t.Helper()
	stop := time.Now().Add(deadline)
	for time.Now().Before(stop) {
		pod, err := u.cs.CoreV1().Pods(u.namespace).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && pod.Status.Phase == corev1.PodRunning {
			return u.volumeID(name)
		}
		if err == nil && (pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded) {
			u.t.Fatalf("Pod %s is %s, want Running: its container could not write into its volume (kubectl -n %s logs %s)", name, pod.Status.Phase, u.namespace, name)
		}
		time.Sleep(time.Second)
	}
	claim, _ := u.cs.CoreV1().PersistentVolumeClaims(u.namespace).Get(context.Background(), name, metav1.GetOptions{})
	if claim != nil && claim.Status.Phase != corev1.ClaimBound {
		u.t.Fatalf("Pod %s is not Running after %s: its claim is %s, not Bound (CreateVolume, exercise 1; kubectl -n %s describe pvc %s)", name, deadline, claim.Status.Phase, u.namespace, name)
	}
	u.t.Fatalf("Pod %s is not Running after %s; the kubelet's last word on its volume: %s", name, deadline, u.lastVolumeEvent(name))
	return ""
}

// volumeEventCalls names, for the reasons of the kubelet's events about a
// Pod's volume, the driver's calls behind them and the exercise that writes
// them: a check of registration that ends with a Pod (the restarts) can fail
// there while its own exercise is done.
var volumeEventCalls = map[string]string{
	"FailedMount":        "NodeStageVolume or NodePublishVolume, the Node service: exercise 5",
	"FailedAttachVolume": "ControllerPublishVolume, the Controller service: exercise 2",
}

// lastVolumeEvent returns the reason and message of the newest FailedMount or
// FailedAttachVolume event of the Pod called name, with the calls and exercise
// behind it, or says there is none.
func (u *kindVolumeUser) lastVolumeEvent(name string) string {
	selector := fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": name}.String()
	events, err := u.cs.CoreV1().Events(u.namespace).List(context.Background(), metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		return err.Error()
	}
	var last *corev1.Event
	for i, e := range events.Items {
		if volumeEventCalls[e.Reason] != "" && (last == nil || e.LastTimestamp.After(last.LastTimestamp.Time)) {
			last = &events.Items[i]
		}
	}
	if last == nil {
		return "no FailedMount or FailedAttachVolume event (kubectl -n " + u.namespace + " describe pod " + name + ")"
	}
	return fmt.Sprintf("%s: %s (%s)", last.Reason, last.Message, volumeEventCalls[last.Reason])
}

// volumeID returns the volume ID of the claim called name.
func (u *kindVolumeUser) volumeID(name string) string {
	u.t.Helper()
	ctx := context.Background()
	claim, err := u.cs.CoreV1().PersistentVolumeClaims(u.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		u.t.Fatal(err)
	}
	pv, err := u.cs.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		u.t.Fatalf("claim %s's volume %s: %v", name, claim.Spec.VolumeName, err)
	}
	if pv.Spec.CSI == nil {
		u.t.Fatalf("claim %s is Bound to %s, which is no CSI volume", name, pv.Name)
	}
	return pv.Spec.CSI.VolumeHandle
}

// requireWritten fails the test unless the Pod's file is in the volume's
// folder on the node with content.
func (u *kindVolumeUser) requireWritten(volumeID, content string) {
	u.t.Helper()
	path := filepath.Join(nodeStateDir, "volumes", volumeID, "data", writtenFile)
	var got string
	var err error
	kittest.Eventually(u.t, deadline, "the Pod's file "+path+" on node "+u.node, func(context.Context) (bool, error) {
		got, err = onNode(u.node, "cat "+path)
		return err == nil, err
	})
	if strings.TrimSpace(got) != content {
		u.t.Errorf("%s on node %s holds %q, want %q, which the Pod wrote into its volume", path, u.node, strings.TrimSpace(got), content)
	}
}

// deletePod deletes the Pod called name and waits until it is gone: the
// kubelet has then unpublished its volume (NodeUnpublishVolume).
func (u *kindVolumeUser) deletePod(name string) {
	u.t.Helper()
	if err := u.cs.CoreV1().Pods(u.namespace).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		u.t.Fatalf("deleting Pod %s: %v", name, err)
	}
	kittest.Eventually(u.t, deadline, "Pod "+u.namespace+"/"+name+" gone (its volume unpublished)", func(ctx context.Context) (bool, error) {
		_, err := u.cs.CoreV1().Pods(u.namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// release deletes the check's Pods and claims and waits until the volumes of
// its claims are gone, without failing the check: make undeploy-csi removes
// what is left.
func (u *kindVolumeUser) release() {
	ctx := context.Background()
	claims, err := u.cs.CoreV1().PersistentVolumeClaims(u.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		u.t.Logf("cannot list the claims of %s: %v", u.namespace, err)
		return
	}
	if err := u.cs.CoreV1().Pods(u.namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		u.t.Logf("cannot delete the Pods of %s: %v", u.namespace, err)
	}
	if err := u.cs.CoreV1().PersistentVolumeClaims(u.namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		u.t.Logf("cannot delete the claims of %s: %v", u.namespace, err)
	}
	stop := time.Now().Add(deadline)
	for _, claim := range claims.Items {
		for claim.Spec.VolumeName != "" && time.Now().Before(stop) {
			if _, err := u.cs.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				break
			}
			time.Sleep(time.Second)
		}
	}
}

// listNodePlugin returns the Pods of the DaemonSet csi-node, the node plugin.
func listNodePlugin(ctx context.Context, cs kubernetes.Interface) ([]corev1.Pod, error) {
	pods, err := cs.CoreV1().Pods(driverNamespace).List(ctx, metav1.ListOptions{LabelSelector: nodePluginSelector})
	if err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// nodePluginPods returns the names of the node plugin's Pods that are Ready
// (the driver's container started).
func nodePluginPods(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	pods, err := listNodePlugin(ctx, cs)
	if err != nil {
		return nil, err
	}
	var ready []string
	for _, p := range pods {
		if p.DeletionTimestamp == nil && slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
		}) {
			ready = append(ready, p.Name)
		}
	}
	return ready, nil
}

// onRegisteredNode is how every kind check starts: off kind it skips the
// check (kittest.SkipElsewhere); on kind it deploys the driver if this run has
// not (deployed), waits until the kubelet of the cluster's one node lists it
// in the node's CSINode (waitRegistered), and returns the clientset, the
// node's name and when the check started (a failure quotes the kubelet's
// lines since then).
func onRegisteredNode(t *testing.T) (kubernetes.Interface, string, time.Time) {
	t.Helper()
	kittest.SkipElsewhere(t)
	since := time.Now()
	deployed(t)
	cs := kittest.Clientset(t)
	node := kindNode(t, cs)
	waitRegistered(t, cs, node, since)
	return cs, node, since
}

// TestDriverRegistersWithTheKubelet: the node plugin's registration service
// (GetInfo, NotifyRegistrationStatus) on its socket in the kubelet's plugins
// registry folder makes the kubelet register the driver: the node's CSINode
// lists it, with NodeGetInfo's node ID.
func TestDriverRegistersWithTheKubelet(t *testing.T) {
	onRegisteredNode(t)
}

// TestPodWritesIntoItsVolume: a Pod using a claim of the shipped StorageClass
// goes Running on the kind node, once the kubelet staged (NodeStageVolume) and
// published (NodePublishVolume) its volume, and the file it writes there is in
// the volume's folder of the driver on the node.
func TestPodWritesIntoItsVolume(t *testing.T) {
	cs, node, _ := onRegisteredNode(t)
	u := newKindVolumeUser(t, cs, "csi-write", node)
	u.podWithClaim("writer", u.namespace)
	u.requireWritten(u.waitRunning("writer"), u.namespace)
}

// TestDeletedPodLeavesNoMount: once a Pod using a volume is deleted, the
// kubelet unpublishes (NodeUnpublishVolume) and unstages (NodeUnstageVolume)
// the volume: no mount of the volume's folder is left on the node. A mount
// left is named, with the command that removes it.
func TestDeletedPodLeavesNoMount(t *testing.T) {
	cs, node, since := onRegisteredNode(t)
	u := newKindVolumeUser(t, cs, "csi-unmount", node)
	u.podWithClaim("user", u.namespace)
	id := u.waitRunning("user")
	if mounts, err := volumeMounts(node, id); err != nil || len(mounts) < 2 {
		t.Fatalf("volume %s with its Pod Running: mounts on node %s %q (%v), want two, the staging path's and the Pod's target path's", id, node, mounts, err)
	}
	u.deletePod("user")
	var left []string
	stop := time.Now().Add(deadline)
	for time.Now().Before(stop) {
		var err error
		if left, err = volumeMounts(node, id); err == nil && len(left) == 0 {
			return
		}
		time.Sleep(time.Second)
	}
	var remove []string
	for _, m := range left {
		remove = append(remove, fmt.Sprintf("  %s (remove it: docker exec %s umount %s)", m, node, m))
	}
	t.Errorf("Pod user deleted %s ago, and its volume %s is still mounted on node %s:\n%s\n"+
		"the kubelet's last lines about the volume:\n%s\n(make undeploy-csi removes them too)",
		deadline, id, node, strings.Join(remove, "\n"), kubeletLines(node, since, id))
}

// TestRestartedNodePluginRegistersAgain: the node plugin's Pod deleted, the
// DaemonSet's next Pod registers the driver again, and a new Pod's volume is
// staged and published through it.
func TestRestartedNodePluginRegistersAgain(t *testing.T) {
	cs, node, since := onRegisteredNode(t)
	before, err := nodePluginPods(context.Background(), cs)
	if err != nil || len(before) == 0 {
		t.Fatalf("no Ready Pod of the DaemonSet csi-node (%v): kubectl -n %s get pods", err, driverNamespace)
	}
	for _, name := range before {
		if err := cs.CoreV1().Pods(driverNamespace).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("deleting the node plugin's Pod %s: %v", name, err)
		}
	}
	kittest.Eventually(t, 3*time.Minute, "a new Pod of the DaemonSet csi-node Ready", func(ctx context.Context) (bool, error) {
		now, err := nodePluginPods(ctx, cs)
		return len(now) > 0 && !slices.ContainsFunc(now, func(p string) bool { return slices.Contains(before, p) }), err
	})
	waitRegistered(t, cs, node, since)
	u := newKindVolumeUser(t, cs, "csi-replugged", node)
	u.podWithClaim("next", u.namespace)
	u.requireWritten(u.waitRunning("next"), u.namespace)
}

// TestRestartedKubeletFindsThePluginAgain: the kubelet restarted (systemctl
// restart kubelet on the node), its plugin watcher finds the driver's
// registration socket again and registers it, and a new Pod's volume is staged
// and published.
func TestRestartedKubeletFindsThePluginAgain(t *testing.T) {
	cs, node, since := onRegisteredNode(t)
	started := func() (string, error) {
		out, err := onNode(node, "systemctl show kubelet --property=ExecMainStartTimestampMonotonic --value")
		return strings.TrimSpace(out), err
	}
	before, err := started()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := onNode(node, "systemctl restart kubelet"); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 2*time.Minute, "the kubelet of "+node+" started again, and its Node Ready", func(ctx context.Context) (bool, error) {
		now, err := started()
		if err != nil || now == before {
			return false, err
		}
		n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		i := slices.IndexFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady })
		return i >= 0 && n.Status.Conditions[i].Status == corev1.ConditionTrue, nil
	})
	waitRegistered(t, cs, node, since)
	u := newKindVolumeUser(t, cs, "csi-kubelet", node)
	u.podWithClaim("after", u.namespace)
	u.requireWritten(u.waitRunning("after"), u.namespace)
}
