package controller

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	samplev1alpha1 "github.com/controller-kit/controller-kit/sample-controller/pkg/apis/samplecontroller/v1alpha1"
	"github.com/controller-kit/controller-kit/sample-controller/pkg/generated/clientset/versioned"
	fooinformers "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/informers/externalversions"
)

// The tests in this file run the Controller with the FooReconciler
// against a real kube-apiserver and etcd (controller-runtime's envtest) with the
// shipped CRD, but no kube-controller-manager: nothing else writes Deployment
// status, so a test can set it and watch the Foo follow.

// envtestAssets returns the folder holding kube-apiserver and etcd for envtest:
// $KUBEBUILDER_ASSETS, which `make test-unit` (at the kit's root or in
// sample-controller) sets after building them. When it is unset, or either
// binary is not in its folder, the test fails at once, naming that target.
func envtestAssets(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		t.Fatal("envtest needs kube-apiserver and etcd, and KUBEBUILDER_ASSETS, the folder that holds them, is not set: " +
			"run the tests with 'make test-unit' (at the kit's root or in sample-controller), which builds both and sets KUBEBUILDER_ASSETS")
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if info, err := os.Stat(filepath.Join(dir, name)); err != nil || info.IsDir() {
			t.Fatalf("envtest needs %s in KUBEBUILDER_ASSETS=%s, and it is not there: "+
				"run the tests with 'make test-unit' (at the kit's root or in sample-controller), which builds it", name, dir)
		}
	}
	return dir
}

// startAPIServer starts kube-apiserver and etcd with the Foo CRD installed and
// stops them at the end of the test.
func startAPIServer(t *testing.T) *rest.Config {
	t.Helper()
	env := &envtest.Environment{
		BinaryAssetsDirectory: envtestAssets(t),
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	return cfg
}

// startController runs the Controller with the FooReconciler until the
// test ends.
func startController(t *testing.T, cfg *rest.Config) (kubernetes.Interface, versioned.Interface) {
	t.Helper()
	kubeClient := kubernetes.NewForConfigOrDie(cfg)
	fooClient := versioned.NewForConfigOrDie(cfg)
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)

	kubeFactory := kubeinformers.NewSharedInformerFactory(kubeClient, 0)
	fooFactory := fooinformers.NewSharedInformerFactory(fooClient, 0)
	deployments := kubeFactory.Apps().V1().Deployments()
	foos := fooFactory.Samplecontroller().V1alpha1().Foos()
	c, err := New(ctx, foos, deployments, &FooReconciler{
		KubeClient:  kubeClient,
		FooClient:   fooClient,
		Foos:        foos.Lister(),
		Deployments: deployments.Lister(),
		Recorder:    record.NewFakeRecorder(100),
	}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	kubeFactory.Start(ctx.Done())
	fooFactory.Start(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx, 2)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		kubeFactory.Shutdown()
		fooFactory.Shutdown()
	})
	return kubeClient, fooClient
}

// poll waits up to 30 s for cond; the deadline only bounds a failing test.
func poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestFooStatusFollowsDeploymentStatusSubresource(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver and etcd")
	}
	cfg := startAPIServer(t)
	kubeClient, fooClient := startController(t, cfg)
	ctx := context.Background()
	foos := fooClient.SamplecontrollerV1alpha1().Foos(metav1.NamespaceDefault)

	_, err := foos.Create(ctx, &samplev1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: metav1.NamespaceDefault},
		Spec:       samplev1alpha1.FooSpec{DeploymentName: "web", Replicas: ptr.To[int32](2)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Foo web: %v", err)
	}
	poll(t, "Deployment web", func(ctx context.Context) (bool, error) {
		_, err := kubeClient.AppsV1().Deployments(metav1.NamespaceDefault).Get(ctx, "web", metav1.GetOptions{})
		return err == nil, nil
	})

	// Play kube-controller-manager: report two available replicas through the
	// Deployment's status subresource.
	patch := []byte(`{"status":{"replicas":2,"readyReplicas":2,"availableReplicas":2}}`)
	if _, err := kubeClient.AppsV1().Deployments(metav1.NamespaceDefault).Patch(ctx, "web", types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("patching Deployment web's status: %v", err)
	}

	poll(t, "Foo web status.availableReplicas = 2", func(ctx context.Context) (bool, error) {
		foo, err := foos.Get(ctx, "web", metav1.GetOptions{})
		return err == nil && foo.Status.AvailableReplicas == 2, nil
	})

	// With the subresource on, status sent to the main resource is dropped:
	// that is why the controller must use UpdateStatus.
	foo, err := foos.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	foo.Status.AvailableReplicas = 7
	updated, err := foos.Update(ctx, foo, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("updating Foo web: %v", err)
	}
	if updated.Status.AvailableReplicas != 2 {
		t.Errorf("a plain Update changed status.availableReplicas to %d; the CRD must have the status subresource", updated.Status.AvailableReplicas)
	}
}

// TestBuiltObjectsPassServerSideDryRun sends the Deployment newDeployment
// builds for each seed of FuzzNewDeployment (fooSeeds, fuzz_test.go) to a real
// kube-apiserver as a server-side dry run: the API server decodes, defaults,
// validates and admits it exactly as it would a create, then stores nothing.
// It proves, for the seeds, what the fuzz target can only check offline
// (checkDeployment, with the subset of the API server's rules that
// apimachinery holds): every Deployment the Reconciler would create for a Foo
// that validateSpec accepts is one the API server accepts, with all of apps/v1's
// validation. For a seed validateSpec refuses, the Reconciler creates nothing,
// and neither does the test: nothing is sent.
//
// Each seed's Foo is created first, in the seed's namespace, so that the
// Deployment's owner reference names a Foo that exists, by the UID the API
// server gave it, as when the Reconciler builds it; the Foo is deleted after,
// freeing its name for the next seed.
func TestBuiltObjectsPassServerSideDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver and etcd")
	}
	cfg := startAPIServer(t)
	kubeClient := kubernetes.NewForConfigOrDie(cfg)
	fooClient := versioned.NewForConfigOrDie(cfg)
	ctx := context.Background()
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

	sent := 0
	for _, seed := range fooSeeds {
		foo := seed.foo()
		if field, problem := validateSpec(foo); field != "" {
			t.Logf("seed %q: nothing sent, validateSpec refuses %s: %s", seed.origin, field, problem)
			continue
		}

		// The Foo as a user creates it: the API server assigns its UID,
		// resourceVersion and generation. The Deployment is built from the
		// seed's Foo with that UID, the seed's other fields as they are.
		owner := foo.DeepCopy()
		owner.UID, owner.ResourceVersion, owner.Generation = "", "", 0
		foos := fooClient.SamplecontrollerV1alpha1().Foos(foo.Namespace)
		created, err := foos.Create(ctx, owner, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("seed %q: creating its Foo %s: %v", seed.origin, foo.Name, err)
		}
		foo.UID = created.UID

		deployment := newDeployment(foo)
		_, err = kubeClient.AppsV1().Deployments(foo.Namespace).Create(ctx, deployment, dryRun)
		if err != nil {
			t.Errorf("seed %q: the API server refuses the Deployment newDeployment builds: %v", seed.origin, err)
		}
		sent++

		if err := foos.Delete(ctx, foo.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("seed %q: deleting its Foo %s: %v", seed.origin, foo.Name, err)
		}
	}
	if sent == 0 {
		t.Fatal("validateSpec refuses every seed: nothing was sent")
	}
	t.Logf("%d of %d seeds' Deployments sent as a dry run", sent, len(fooSeeds))
}
