//go:build e2e

// Package e2e checks lesson 6 (docs/lessons/06-kube-apiserver.md) on the
// kit's local cluster, whose etcd the tests read: that etcdctl, built from the
// pinned module hack/etcd, reads an object's key as the lesson says (its mod
// revision is the object's resourceVersion, a built-in type is protobuf), and
// the exercise etcd-read, a program of the learner's own
// (apiserver-example/etcdread) that prints the object a key holds, decoded. The
// exercise admission-plugin, a plugin in the learner's copy of Kubernetes,
// has its checks and their setup in admission_test.go.
//
// What the exercise etcd-read's checks build, by the environment make check sets
// (kittest's env.go):
//   - nothing set: the learner's etcdread as it is in the tree;
//   - KIT_E2E_OVERLAY=<overlay>: etcdread with the reference solution
//     (docs/solutions/06-kube-apiserver/etcd-read.patch) laid over it;
//   - KIT_KUBE_PRISTINE=1: etcdread as committed, the stub, which must fail
//     every check of the exercise.
package e2e

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// lessonFile is this suite's row of the lesson table (kittest.Lesson).
//
//go:embed lesson.yaml
var lessonFile []byte

var (
	// deadline bounds every wait; make check shortens it through $KIT_E2E_TIMEOUT.
	deadline = kittest.Deadline(90 * time.Second)
	// etcd is the endpoint of the cluster's etcd and etcdctl the client built
	// for the suite, both set by setup.
	etcd, etcdctl string
	suite         = &kittest.Suite{File: lessonFile, Setup: setup}
)

func TestMain(m *testing.M) {
	code := suite.Run(m)
	if restore != nil {
		if err := restore(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: putting back the cluster's", apiserver+":", err)
			code = 1
		}
	}
	if scratch != "" {
		if err := os.RemoveAll(scratch); err != nil {
			fmt.Fprintln(os.Stderr, "removing the suite's copy of the source:", err)
		}
	}
	os.Exit(code)
}

// exercise is the name of the lesson's exercise etcd-read, as EXERCISE= and
// SOLUTION= take it (admission is the other's).
const exercise = "etcd-read"

// setup finds the cluster's etcd, which only the kit's local cluster exposes
// (local-up.sh writes its endpoint into the cluster's file), and builds
// etcdctl from the pinned build module as hack/build-bins.sh does: outside the
// workspace (GOWORK=off), through kittest.BuildIfChanged, so a run with no file
// of the kit changed starts no go build.
func setup() error {
	info, err := kittest.CurrentClusterInfo()
	if err != nil {
		return fmt.Errorf("lesson 6 reads the local cluster's etcd: %w", err)
	}
	if etcd = info.EtcdEndpoint; etcd == "" {
		return fmt.Errorf("the file of cluster %s names no etcdEndpoint: an older make local-up wrote it; run make local-up once more (it leaves the running cluster as it is)", info.Name)
	}
	root := kittest.RepoRoot()
	etcdctl = filepath.Join(root, kittest.BinDir, "etcdctl")
	// Before any test runs, so no other build of the suite sees GOWORK=off.
	if work, set := os.LookupEnv("GOWORK"); set {
		defer os.Setenv("GOWORK", work)
	} else {
		defer os.Unsetenv("GOWORK")
	}
	if err := os.Setenv("GOWORK", "off"); err != nil {
		return err
	}
	if err := kittest.BuildIfChanged(filepath.Join(root, "hack", "etcd"), "go.etcd.io/etcd/etcdctl/v3", etcdctl); err != nil {
		return fmt.Errorf("building etcdctl from hack/etcd: %w", err)
	}
	if selected(admission) {
		return setupAdmission()
	}
	return nil
}

// etcdKey returns the key the API server stores an object of resource
// (group/resource, or resource alone for the core group) under.
func etcdKey(resource, namespace, name string) string {
	return "/registry/" + resource + "/" + namespace + "/" + name
}

// TestEtcdctlReadsAConfigMapsKey reads a ConfigMap's key with etcdctl, as
// lesson 6 section 6 does with a Pod's.
func TestEtcdctlReadsAConfigMapsKey(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "lesson6-etcdctl")
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "read-me"},
		Data:       map[string]string{"lesson": "6"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a ConfigMap: %v", err)
	}
	key := etcdKey("configmaps", ns, cm.Name)

	cmd := exec.Command(etcdctl, "--endpoints", etcd, "get", key, "-w", "json")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("etcdctl get %s -w json: %v (%s)", key, err, stderrOf(err))
	}
	var got struct {
		KVs []struct {
			Key         []byte `json:"key"`
			Value       []byte `json:"value"`
			ModRevision int64  `json:"mod_revision"`
		} `json:"kvs"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("etcdctl's JSON: %v\n%s", err, out)
	}
	if len(got.KVs) != 1 || string(got.KVs[0].Key) != key {
		t.Fatalf("etcdctl get %s returned %d keys; want that one key: %s", key, len(got.KVs), out)
	}
	kv := got.KVs[0]
	if rv := fmt.Sprint(kv.ModRevision); rv != cm.ResourceVersion {
		t.Errorf("the key's mod revision is %s; want the ConfigMap's resourceVersion, %s", rv, cm.ResourceVersion)
	}
	if !bytes.HasPrefix(kv.Value, []byte("k8s\x00")) || !bytes.Contains(kv.Value, []byte(cm.UID)) {
		t.Errorf("the value does not start with k8s\\x00 (the protobuf a built-in type is stored as) or lacks the ConfigMap's uid %s: %q", cm.UID, kv.Value)
	}
}

// TestExerciseEtcdReadPrintsAPod runs the learner's etcdread on a Pod's key.
func TestExerciseEtcdReadPrintsAPod(t *testing.T) {
	kittest.Exercise(t, exercise)
	t.Parallel()
	bin := buildEtcdRead(t)
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "lesson6-pod")
	pod, err := cs.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "read-me"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a Pod: %v", err)
	}
	got, obj := readUnchanged(t, bin, etcdKey("pods", ns, pod.Name), func(ctx context.Context) (metav1.Object, error) {
		return cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	})
	pod = obj.(*corev1.Pod)

	want := map[string]string{
		"apiVersion": "v1", "kind": "Pod",
		"metadata.name": pod.Name, "metadata.uid": string(pod.UID), "metadata.resourceVersion": pod.ResourceVersion,
		"spec.nodeName": pod.Spec.NodeName,
	}
	compare(t, got, want)
	if containers, _, _ := unstructured.NestedSlice(got.Object, "spec", "containers"); len(containers) != 1 ||
		containers[0].(map[string]any)["image"] != "nginx:1.27" {
		t.Errorf("spec.containers = %v; want the one container web, image nginx:1.27", containers)
	}
}

// TestExerciseEtcdReadPrintsAFoo runs the learner's etcdread on a Foo's key.
func TestExerciseEtcdReadPrintsAFoo(t *testing.T) {
	kittest.Exercise(t, exercise)
	t.Parallel()
	bin := buildEtcdRead(t)
	cs := kittest.Clientset(t)
	installFooCRD(t)
	client, err := dynamic.NewForConfig(kittest.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	ns := kittest.Namespace(t, cs, "lesson6-foo")
	// Zero replicas: no controller of lesson 2 needs to run, and none that runs
	// makes Pods for it.
	foo, err := client.Resource(kittest.FooGVR).Namespace(ns).Create(context.Background(), kittest.NewFoo(ns, 0, 0), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a Foo: %v", err)
	}
	got, obj := readUnchanged(t, bin, etcdKey(kittest.FooGVR.Group+"/"+kittest.FooGVR.Resource, ns, foo.GetName()), func(ctx context.Context) (metav1.Object, error) {
		return client.Resource(kittest.FooGVR).Namespace(ns).Get(ctx, foo.GetName(), metav1.GetOptions{})
	})
	foo = obj.(*unstructured.Unstructured)

	compare(t, got, map[string]string{
		"apiVersion": kittest.FooGVR.GroupVersion().String(), "kind": "Foo",
		"metadata.name": foo.GetName(), "metadata.uid": string(foo.GetUID()), "metadata.resourceVersion": foo.GetResourceVersion(),
		"spec.deploymentName": foo.GetName(), "spec.replicas": "0",
	})
}

// readUnchanged runs bin on key, between two reads of the object through the
// API server (get), until both reads return one resourceVersion: then what bin
// printed and what the API server returned are the same version of the object
// (the scheduler and kwok write a new Pod, lesson 2's controller a Foo, soon
// after they are made). It returns both.
func readUnchanged(t *testing.T, bin, key string, get func(ctx context.Context) (metav1.Object, error)) (*unstructured.Unstructured, metav1.Object) {
	t.Helper()
	var printed *unstructured.Unstructured
	var obj metav1.Object
	kittest.Eventually(t, deadline, "the object to stay unchanged through one read of its key", func(ctx context.Context) (bool, error) {
		before, err := get(ctx)
		if err != nil {
			return false, err
		}
		printed = runEtcdRead(t, bin, key)
		if obj, err = get(ctx); err != nil {
			return false, err
		}
		return before.GetResourceVersion() == obj.GetResourceVersion(), nil
	})
	return printed, obj
}

// runEtcdRead runs bin on key against the cluster's etcd and returns what it
// printed, parsed as one JSON object.
func runEtcdRead(t *testing.T, bin, key string) *unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--endpoint", etcd, key)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("etcdread --endpoint %s %s: %v\n%s", etcd, key, err, stderrOf(err))
	}
	var obj map[string]any
	if err := json.Unmarshal(out, &obj); err != nil {
		t.Fatalf("etcdread %s printed no JSON object: %v\n%s", key, err, out)
	}
	return &unstructured.Unstructured{Object: obj}
}

// compare checks each dotted field path of want in got.
func compare(t *testing.T, got *unstructured.Unstructured, want map[string]string) {
	t.Helper()
	for path, value := range want {
		field, _, _ := unstructured.NestedFieldNoCopy(got.Object, strings.Split(path, ".")...)
		if fmt.Sprint(field) != value {
			t.Errorf("%s = %v; want %q, as the API server returns it", path, field, value)
		}
	}
}

// stderrOf returns what a command that failed wrote to its standard error.
func stderrOf(err error) string {
	if exit, ok := err.(*exec.ExitError); ok {
		return strings.TrimSpace(string(exit.Stderr))
	}
	return ""
}

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// buildEtcdRead builds the exercise's program once per run, with what the
// environment asks for (see the package's doc), and returns the binary.
func buildEtcdRead(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir := filepath.Join(kittest.RepoRoot(), "apiserver-example", "etcdread")
		overlay := os.Getenv(kittest.OverlayEnv)
		if os.Getenv(kittest.KubePristineEnv) == "1" {
			if overlay, buildErr = committedOverlay(dir, t.TempDir()); buildErr != nil {
				return
			}
		}
		built, buildErr = kittest.CachedBinary(dir, "etcdread", overlay)
	})
	if buildErr != nil {
		t.Fatalf("apiserver-example/etcdread does not compile; fix it (go build ./apiserver-example/etcdread says the same): %v", buildErr)
	}
	return built
}

// committedOverlay writes, under tmp, a go build -overlay file that lays the
// committed etcdread/main.go (git's HEAD) over the one in dir, whatever the
// learner changed in it: the stub the lesson starts from.
func committedOverlay(dir, tmp string) (string, error) {
	root := kittest.RepoRoot()
	main := filepath.Join(dir, "main.go")
	rel, err := filepath.Rel(root, main)
	if err != nil {
		return "", err
	}
	committed, err := exec.Command("git", "-C", root, "show", "HEAD:"+filepath.ToSlash(rel)).Output()
	if err != nil {
		return "", fmt.Errorf("git show HEAD:%s: %w (%s)", rel, err, stderrOf(err))
	}
	copyPath := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(copyPath, committed, 0o644); err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {main: copyPath}})
	if err != nil {
		return "", err
	}
	overlayPath := filepath.Join(tmp, "overlay.json")
	return overlayPath, os.WriteFile(overlayPath, overlay, 0o644)
}

var (
	crdOnce sync.Once
	crdErr  error
)

// installFooCRD applies lesson 2's Foo CRD server-side, once per run, and
// waits until it can be used.
func installFooCRD(t *testing.T) {
	t.Helper()
	crdOnce.Do(func() {
		crd := filepath.Join(kittest.RepoRoot(), "sample-controller", "config", "crd", "samplecontroller.k8s.io_foos.yaml")
		if _, crdErr = kittest.KubectlE("apply", "--server-side", "-f", crd); crdErr != nil {
			return
		}
		crdErr = kittest.WaitForCRD("foos.samplecontroller.k8s.io", kittest.FooGVR.GroupVersion().String(), "Foo", 90*time.Second)
	})
	if crdErr != nil {
		t.Fatalf("installing lesson 2's Foo CRD: %v", crdErr)
	}
}
