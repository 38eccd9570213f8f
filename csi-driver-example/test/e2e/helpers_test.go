//go:build e2e

// Package e2e is csi-driver-example's conformance suite: each test starts the
// driver as a real process, with the Controller service under test
// ($RECONCILER), and beside it the CSI project's own sidecars, csi-provisioner
// and (where a test attaches) csi-attacher, as real processes running as the
// ServiceAccounts config/rbac ships (by impersonation), against the kit cluster
// ($KUBECONFIG). Then it checks one behaviour a user would notice: a claim's
// phase and its PersistentVolume, the claim's events, the driver's volume
// folders, a VolumeAttachment, or the driver's answer on its socket. Run it
// with `make check LESSON=7`; RECONCILER=stub shows which behaviours your own
// Controller service still lacks.
//
// The tests run side by side without seeing each other: each runs a driver of
// its own under a driver name of its own (its namespace's name before the
// shipped one, as in csi-bound-x7k2p.toy.csi.controller-kit.dev), with a
// CSIDriver and a StorageClass of that name made from the shipped manifests, so
// another test's csi-provisioner never takes its claims and another test's
// csi-attacher never its VolumeAttachments.
package e2e

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/test/kittest"
)

const (
	// shippedDriverName is the driver's name when --driver-name is not given,
	// the one config/csidriver.yaml and config/storageclass.yaml name; each test
	// replaces it by one of its own.
	shippedDriverName = "toy.csi.controller-kit.dev"
	// shippedClassLine is the StorageClass's name in config/storageclass.yaml,
	// which each test replaces by its driver's name.
	shippedClassLine = "name: csi-driver-example"
	// shippedReclaimLine is the StorageClass's reclaim policy in
	// config/storageclass.yaml; a test of Retain replaces it.
	shippedReclaimLine = "reclaimPolicy: Delete"
	// sidecarNamespace is where config/rbac makes the sidecars' ServiceAccounts,
	// each named after its sidecar (csi-provisioner, csi-attacher).
	sidecarNamespace = "csi-driver-example"
	// maxVolumeSize is the largest volume the tests' drivers make
	// (--max-volume-size), and maxVolumeBytes the same in bytes.
	maxVolumeSize  = "1Gi"
	maxVolumeBytes = "1073741824"
	// managedAttachAnnotation marks a Node whose volumes kube-controller-manager's
	// attach-detach controller attaches (the kubelet sets it on its Node).
	managedAttachAnnotation = "volumes.kubernetes.io/controller-managed-attach-detach"
	// capacityDriverLabel is the label csi-provisioner's capacity controller
	// puts on each CSIStorageCapacity it writes, naming the driver
	// (pkg/capacity/capacity.go in external-provisioner).
	capacityDriverLabel = "csi.storage.k8s.io/drivername"
	// testNodeLabel marks the Nodes the suite makes, so that a run cut short
	// leaves Nodes a look with kubectl finds (kubectl get nodes -l ...).
	testNodeLabel = "controller-kit.dev/e2e-csi"
)

// lessonFile is this suite's row of the lesson table: which lesson it checks,
// the driver to build and one row per check (kittest.Lesson).
//
//go:embed lesson.yaml
var lessonFile []byte

var (
	// deadline bounds every poll: long enough for a loaded 2-core machine, and
	// only reached when a test is going to fail anyway. `make check` shortens it
	// through $KIT_E2E_TIMEOUT.
	deadline = kittest.Deadline(90 * time.Second)
	// suite builds the driver once for every test (suite.Bin).
	suite = &kittest.Suite{File: lessonFile}
	// provisionerBin and attacherBin are the sidecars hack/build-bins.sh builds
	// into the kit's bin/ folder (set by prepareCluster).
	provisionerBin, attacherBin string
)

func TestMain(m *testing.M) {
	// Set here, not in suite's declaration: prepareCluster reads suite.TierDir.
	suite.Setup = prepareCluster
	os.Exit(suite.Run(m))
}

// prepareCluster is the suite's Setup: once, before any test, it builds the
// sidecars when bin/ lacks them (hack/build-bins.sh, about 5 minutes the first
// time, nothing after that) and applies the sidecars' namespace, ServiceAccounts
// and RBAC (config/rbac). Its error stops the suite with one message (make check
// prints it instead of a failure per check). LoadKubeconfig refuses clusters
// other than the kit's first.
func prepareCluster() error {
	if _, _, err := kittest.LoadKubeconfig(); err != nil {
		return err
	}
	root := kittest.RepoRoot()
	build := filepath.Join(root, "hack", "build-bins.sh")
	// Its progress goes to the suite's output: the first build takes minutes.
	cmd := exec.Command(build, "csi-provisioner", "csi-attacher")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the sidecars (%s csi-provisioner csi-attacher): %w", build, err)
	}
	provisionerBin = filepath.Join(root, "bin", "csi-provisioner")
	attacherBin = filepath.Join(root, "bin", "csi-attacher")
	rbac, err := filepath.Glob(filepath.Join(suite.TierDir, "config/rbac/*.yaml"))
	if err != nil {
		return err
	}
	for _, manifest := range rbac {
		path, err := kittest.File(manifest)
		if err != nil {
			return err
		}
		if _, err := kittest.KubectlE("apply", "--server-side", "-f", path); err != nil {
			return fmt.Errorf("applying %s: %w", path, err)
		}
	}
	return nil
}

// testDriver is one test's driver and what belongs to it: its name (the
// CSIDriver's and the StorageClass's too), its namespace, the folder it keeps
// its volumes in and the socket it serves on.
type testDriver struct {
	t         *testing.T
	cs        kubernetes.Interface
	namespace string
	name      string
	// nodeID is the driver's --node-id, "" for its default (the host's name).
	nodeID string
	// zones is the driver's --zones, "" for none (withZones).
	zones    string
	stateDir string
	socket   string
	// driver is the driver's process, the last one started.
	driver *kittest.Process
	// starts counts the processes started under each name, so a program started
	// again logs to a file of its own (csi-provisioner-2.log).
	starts map[string]int
}

// newTestDriver makes a namespace whose name starts with prefix, names a
// driver after it, applies the shipped CSIDriver and StorageClass renamed to
// that name, and starts the driver (not its sidecars: startSidecars). Options
// change the driver's start (onNodeOfNamespace). At cleanup, after every
// process of the test has stopped, it deletes what is left of the driver in
// the cluster.
func newTestDriver(t *testing.T, prefix string, options ...func(*testDriver)) *testDriver {
	t.Helper()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, prefix)
	dir := kittest.TestDir(t)
	// A unix socket's path is at most 107 bytes long, which a test's own
	// folder under make check's log folder can pass: the socket lies in a
	// short folder of its own.
	socketDir, err := os.MkdirTemp("", "csi-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(socketDir) })
	d := &testDriver{
		t: t, cs: cs, namespace: ns,
		name:     ns + "." + shippedDriverName,
		stateDir: filepath.Join(dir, "state"),
		socket:   filepath.Join(socketDir, "csi.sock"),
		starts:   map[string]int{},
	}
	for _, o := range options {
		o(d)
	}
	// make check keeps the test's folder for a look after a failure: a run
	// starts from a driver with no volumes, whatever the last one left there.
	if err := os.RemoveAll(d.stateDir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.removeLeftovers)
	d.applyShipped("config/csidriver.yaml", nil)
	d.applyShipped("config/storageclass.yaml", map[string]string{shippedClassLine: "name: " + d.name})
	d.startDriver()
	return d
}

// onNodeOfNamespace is an option of newTestDriver: the driver's node, its
// --node-id, is a node named after the test's namespace (which the test makes).
func onNodeOfNamespace(d *testDriver) {
	d.nodeID = d.namespace
}

// applyShipped applies the tier's manifest at path (relative to the tier) with
// the shipped driver name replaced by the test's and each line of replace
// (which must be in the file) by its value, and deletes the object at cleanup.
func (d *testDriver) applyShipped(path string, replace map[string]string) {
	d.t.Helper()
	shipped, err := kittest.File(filepath.Join(suite.TierDir, path))
	if err != nil {
		d.t.Fatal(err)
	}
	data, err := os.ReadFile(shipped)
	if err != nil {
		d.t.Fatal(err)
	}
	manifest := string(data)
	if !strings.Contains(manifest, shippedDriverName) {
		d.t.Fatalf("%s does not name the driver %s, which the suite renames for each test", shipped, shippedDriverName)
	}
	manifest = strings.ReplaceAll(manifest, shippedDriverName, d.name)
	for old, new := range replace {
		if !strings.Contains(manifest, old) {
			d.t.Fatalf("%s has no line %q, which the suite replaces for each test", shipped, old)
		}
		manifest = strings.Replace(manifest, old, new, 1)
	}
	file := filepath.Join(d.t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		d.t.Fatal(err)
	}
	kittest.Kubectl(d.t, "apply", "-f", file)
	d.t.Cleanup(func() {
		if _, err := kittest.KubectlE("delete", "--ignore-not-found", "--wait=false", "-f", file); err != nil {
			d.t.Logf("cannot delete what %s made: %v", file, err)
		}
	})
}

// retainClass applies a second StorageClass of the driver, named after it with
// -retain, whose reclaim policy is Retain, and returns its name.
func (d *testDriver) retainClass() string {
	d.t.Helper()
	name := d.name + "-retain"
	d.applyShipped("config/storageclass.yaml", map[string]string{
		shippedClassLine:   "name: " + name,
		shippedReclaimLine: "reclaimPolicy: Retain",
	})
	return name
}

// start starts program as a process of the test called name, a second start of
// one name logging to name-2.log.
func (d *testDriver) start(name, program string, args ...string) *kittest.Process {
	d.t.Helper()
	d.starts[name]++
	if n := d.starts[name]; n > 1 {
		name = fmt.Sprintf("%s-%d", name, n)
	}
	return kittest.StartProcess(d.t, name, program, args...)
}

// startDriver starts the driver with the Controller service under test, and
// waits until it answers GetPluginInfo on its socket with its name.
func (d *testDriver) startDriver() *kittest.Process {
	d.t.Helper()
	args := []string{
		"--endpoint=unix://" + d.socket,
		"--state-dir=" + d.stateDir,
		"--driver-name=" + d.name,
		"--max-volume-size=" + maxVolumeSize,
		"--reconciler=" + kittest.Reconciler(),
		"-v=4",
	}
	if d.nodeID != "" {
		args = append(args, "--node-id="+d.nodeID)
	}
	if d.zones != "" {
		args = append(args, "--zones="+d.zones)
	}
	p := d.start("driver", suite.Bin, args...)
	d.driver = p
	identity := csi.NewIdentityClient(d.conn())
	var name string
	kittest.Eventually(d.t, deadline, "the driver to answer GetPluginInfo on "+d.socket, func(ctx context.Context) (bool, error) {
		if p.Exited() {
			code, _ := p.Wait(0)
			return false, fmt.Errorf("the driver exited (code %d) before it served", code)
		}
		info, err := identity.GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
		if err != nil {
			return false, err
		}
		name = info.GetName()
		return true, nil
	})
	if name != d.name {
		d.t.Fatalf("GetPluginInfo answers the name %q, want %q (--driver-name): the sidecars serve the StorageClasses of the name it answers", name, d.name)
	}
	return p
}

// conn returns a gRPC connection to the driver's socket, closed at cleanup; it
// connects on its first call, and again after the driver restarted.
func (d *testDriver) conn() *grpc.ClientConn {
	d.t.Helper()
	conn, err := grpc.NewClient("unix://"+d.socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		d.t.Fatalf("cannot make a gRPC client for %s: %v", d.socket, err)
	}
	d.t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// sidecars are the processes startSidecars started.
type sidecars struct {
	provisioner, attacher *kittest.Process
}

// stop stops the sidecars.
func (s sidecars) stop() {
	for _, p := range []*kittest.Process{s.provisioner, s.attacher} {
		if p != nil {
			_, _ = p.Stop(15 * time.Second)
		}
	}
}

// startSidecars starts csi-provisioner and, with attacher, csi-attacher, each
// with the flags make run-csi gives it and as its ServiceAccount of
// config/rbac. At cleanup, while they still run, it deletes the test's Pods and
// claims and waits until the volumes of Delete classes are gone (the
// provisioner calls DeleteVolume and removes its finalizer from each; the
// attacher detaches each first), then deletes those of Retain classes, so that
// no volume outlives the test; and the test fails if the API server refused
// either of them a request (a verb config/rbac lacks).
func (d *testDriver) startSidecars(attacher bool) sidecars {
	d.t.Helper()
	var s sidecars
	if attacher {
		s.attacher = d.startSidecar("csi-attacher", attacherBin)
	}
	s.provisioner = d.startSidecar("csi-provisioner", provisionerBin)
	d.t.Cleanup(func() {
		if !s.provisioner.Exited() {
			d.releaseVolumes()
		}
	})
	return s
}

// startSidecar starts the sidecar called name (its ServiceAccount's name too)
// from program against the driver's socket, once the API server lets its
// ServiceAccount work.
func (d *testDriver) startSidecar(name, program string) *kittest.Process {
	d.t.Helper()
	kittest.WaitAuthorized(d.t, d.cs, deadline, sidecarNamespace, name, "watch", "persistentvolumes", "")
	args := []string{
		"--csi-address=" + d.socket,
		"--kubeconfig=" + kittest.ImpersonatingKubeconfig(d.t, sidecarNamespace, name),
		"--leader-election=false",
		"--v=5",
	}
	if name == "csi-provisioner" {
		// Capacity tracking, its objects in the sidecars' namespace, and
		// strict topology, as make run-csi runs it (hack/run-csi.sh).
		args = append([]string{"NAMESPACE=" + sidecarNamespace, program}, append(args,
			"--enable-capacity", "--capacity-ownerref-level=-1", "--strict-topology")...)
		program = "env"
	}
	p := d.start(name, program, args...)
	d.t.Cleanup(func() {
		if lines := p.Lines("forbidden"); len(lines) > 0 {
			d.t.Errorf("the API server refused %s a request (forbidden): config/rbac does not grant it:\n%s", name, strings.Join(lines, "\n"))
		}
	})
	return p
}

// releaseVolumes deletes the test's Pods and claims and waits until the
// driver's volumes of Delete classes are gone, then deletes the rest (Retain),
// without failing the test: a volume left behind is removeLeftovers' to remove.
func (d *testDriver) releaseVolumes() {
	ctx := context.Background()
	zero := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	if err := d.cs.CoreV1().Pods(d.namespace).DeleteCollection(ctx, zero, metav1.ListOptions{}); err != nil {
		d.t.Logf("cannot delete the Pods of %s: %v", d.namespace, err)
	}
	if err := d.cs.CoreV1().PersistentVolumeClaims(d.namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		d.t.Logf("cannot delete the claims of %s: %v", d.namespace, err)
	}
	stop := time.Now().Add(deadline)
	for time.Now().Before(stop) {
		volumes, err := d.volumes(ctx)
		if err == nil && !slices.ContainsFunc(volumes, func(pv corev1.PersistentVolume) bool {
			return pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete
		}) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	volumes, _ := d.volumes(ctx)
	for _, pv := range volumes {
		if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
			_ = d.cs.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
		}
	}
}

// removeLeftovers deletes what the test left of its driver in the cluster once
// its processes have stopped (a test that failed half-way): its
// VolumeAttachments and PersistentVolumes, taking off the finalizers that no
// sidecar will take off now, so no object of a driver that is gone stays
// behind to trouble the cluster's later users.
func (d *testDriver) removeLeftovers() {
	ctx := context.Background()
	unfinalize := []byte(`{"metadata":{"finalizers":null}}`)
	attachments, err := d.cs.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, va := range attachments.Items {
			if va.Spec.Attacher != d.name {
				continue
			}
			d.t.Logf("removing VolumeAttachment %s, left behind", va.Name)
			_, _ = d.cs.StorageV1().VolumeAttachments().Patch(ctx, va.Name, "application/merge-patch+json", unfinalize, metav1.PatchOptions{})
			_ = d.cs.StorageV1().VolumeAttachments().Delete(ctx, va.Name, metav1.DeleteOptions{})
		}
	}
	volumes, err := d.volumes(ctx)
	if err != nil {
		d.t.Logf("cannot list the volumes the test left: %v", err)
		return
	}
	for _, pv := range volumes {
		d.t.Logf("removing PersistentVolume %s, left behind", pv.Name)
		_, _ = d.cs.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, "application/merge-patch+json", unfinalize, metav1.PatchOptions{})
		_ = d.cs.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
	}
	// csi-provisioner's capacity objects of the driver's classes, which a
	// stopped provisioner leaves.
	_ = d.cs.StorageV1().CSIStorageCapacities(sidecarNamespace).DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: capacityDriverLabel + "=" + d.name})
}

// volumes returns the PersistentVolumes of the driver (spec.csi.driver).
func (d *testDriver) volumes(ctx context.Context) ([]corev1.PersistentVolume, error) {
	list, err := d.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var mine []corev1.PersistentVolume
	for _, pv := range list.Items {
		if pv.Spec.CSI != nil && pv.Spec.CSI.Driver == d.name {
			mine = append(mine, pv)
		}
	}
	return mine, nil
}

// volumeFolder is the folder of the driver's volume id.
func (d *testDriver) volumeFolder(id string) string {
	return filepath.Join(d.stateDir, "volumes", id)
}

// volumeFolders returns the names of the folders under the driver's volumes
// folder but hidden ones (a volume being made or deleted): the IDs of the
// volumes it has.
func (d *testDriver) volumeFolders() []string {
	d.t.Helper()
	entries, err := os.ReadDir(filepath.Join(d.stateDir, "volumes"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		d.t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			ids = append(ids, e.Name())
		}
	}
	return ids
}

// requireFolder fails the test unless the volume's folder is there (want) or
// gone (!want).
func (d *testDriver) requireFolder(pv *corev1.PersistentVolume, want bool, why string) {
	d.t.Helper()
	folder := d.volumeFolder(pv.Spec.CSI.VolumeHandle)
	_, err := os.Stat(folder)
	switch {
	case want && err != nil:
		d.t.Errorf("volume %s (ID %s): its folder %s: %v; want it there: %s", pv.Name, pv.Spec.CSI.VolumeHandle, folder, err, why)
	case !want && err == nil:
		d.t.Errorf("volume %s (ID %s): its folder %s is still there; want it gone: %s", pv.Name, pv.Spec.CSI.VolumeHandle, folder, why)
	}
}

// createClaim creates a claim called name in the driver's namespace, asking the
// StorageClass class for size, read-write by one node.
func (d *testDriver) createClaim(name, class, size string) {
	d.t.Helper()
	d.createClaimOf(name, class, size, corev1.ReadWriteOnce)
}

// createClaimOf is createClaim with the claim's access mode.
func (d *testDriver) createClaimOf(name, class, size string, mode corev1.PersistentVolumeAccessMode) {
	d.t.Helper()
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.namespace},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{mode},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			},
		},
	}
	if _, err := d.cs.CoreV1().PersistentVolumeClaims(d.namespace).Create(context.Background(), claim, metav1.CreateOptions{}); err != nil {
		d.t.Fatalf("creating claim %s: %v", name, err)
	}
}

// deleteClaim deletes the claim called name, without waiting for it to be gone.
func (d *testDriver) deleteClaim(name string) {
	d.t.Helper()
	if err := d.cs.CoreV1().PersistentVolumeClaims(d.namespace).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		d.t.Fatalf("deleting claim %s: %v", name, err)
	}
}

// waitBound waits until the claim called name is Bound and returns its
// PersistentVolume.
func (d *testDriver) waitBound(name string) *corev1.PersistentVolume {
	d.t.Helper()
	var volume string
	kittest.Eventually(d.t, deadline, "claim "+d.namespace+"/"+name+" Bound to a volume", func(ctx context.Context) (bool, error) {
		claim, err := d.cs.CoreV1().PersistentVolumeClaims(d.namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		volume = claim.Spec.VolumeName
		return claim.Status.Phase == corev1.ClaimBound, nil
	})
	pv, err := d.cs.CoreV1().PersistentVolumes().Get(context.Background(), volume, metav1.GetOptions{})
	if err != nil {
		d.t.Fatalf("claim %s is Bound to volume %s: %v", name, volume, err)
	}
	if pv.Spec.CSI == nil {
		d.t.Fatalf("claim %s is Bound to volume %s, which is no CSI volume (spec.csi is empty)", name, volume)
	}
	return pv
}

// requirePending fails the test unless the claim called name is Pending with no
// volume.
func (d *testDriver) requirePending(name, why string) {
	d.t.Helper()
	claim, err := d.cs.CoreV1().PersistentVolumeClaims(d.namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		d.t.Fatal(err)
	}
	if claim.Status.Phase != corev1.ClaimPending || claim.Spec.VolumeName != "" {
		d.t.Errorf("claim %s is %s (volume %q), want Pending with no volume: %s", name, claim.Status.Phase, claim.Spec.VolumeName, why)
	}
}

// waitGone waits until the PersistentVolume called name is gone.
func (d *testDriver) waitGone(name, why string) {
	d.t.Helper()
	kittest.Eventually(d.t, deadline, "volume "+name+" to be gone ("+why+")", func(ctx context.Context) (bool, error) {
		_, err := d.cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// claimEvents returns the events of the claim called name with reason.
func (d *testDriver) claimEvents(ctx context.Context, name, reason string) ([]corev1.Event, error) {
	selector := fields.Set{"involvedObject.kind": "PersistentVolumeClaim", "involvedObject.name": name, "reason": reason}.String()
	list, err := d.cs.CoreV1().Events(d.namespace).List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// waitClaimEvent waits for an event with reason about the claim called name and
// returns it.
func (d *testDriver) waitClaimEvent(name, reason string) corev1.Event {
	d.t.Helper()
	var event corev1.Event
	kittest.Eventually(d.t, deadline, "a "+reason+" event on claim "+d.namespace+"/"+name, func(ctx context.Context) (bool, error) {
		events, err := d.claimEvents(ctx, name, reason)
		if err != nil || len(events) == 0 {
			return false, err
		}
		event = events[0]
		return true, nil
	})
	return event
}

// waitProvisioningFailed waits for the ProvisioningFailed event of the claim
// called name, a claim the driver must refuse, and returns it. The test fails at
// once when the claim is Bound instead.
func (d *testDriver) waitProvisioningFailed(name string) corev1.Event {
	d.t.Helper()
	var event corev1.Event
	kittest.Eventually(d.t, deadline, "a ProvisioningFailed event on claim "+d.namespace+"/"+name, func(ctx context.Context) (bool, error) {
		events, err := d.claimEvents(ctx, name, "ProvisioningFailed")
		if err != nil {
			return false, err
		}
		if len(events) > 0 {
			event = events[0]
			return true, nil
		}
		claim, err := d.cs.CoreV1().PersistentVolumeClaims(d.namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil && claim.Status.Phase == corev1.ClaimBound {
			d.t.Fatalf("claim %s is Bound to volume %s, want it refused (a ProvisioningFailed event and no volume): CreateVolume made a volume it must not", name, claim.Spec.VolumeName)
		}
		return false, err
	})
	return event
}

// createStorageClass creates a StorageClass called name of provisioner, for
// claims no test's driver serves, and deletes it at cleanup.
func createStorageClass(t *testing.T, cs kubernetes.Interface, name, provisioner string) {
	t.Helper()
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: name},
		Provisioner:       provisioner,
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
	if _, err := cs.StorageV1().StorageClasses().Create(context.Background(), class, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating StorageClass %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := cs.StorageV1().StorageClasses().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cannot delete StorageClass %s: %v", name, err)
		}
	})
}

// mountCapability is the volume capability the tests ask for: a file system,
// read-write by one node (what a claim of access mode ReadWriteOnce asks).
func mountCapability() []*csi.VolumeCapability {
	return []*csi.VolumeCapability{{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}}
}
