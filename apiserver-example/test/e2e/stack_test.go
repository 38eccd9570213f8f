//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/controller-kit/controller-kit/test/kittest"
	"github.com/controller-kit/controller-kit/test/kittest/delve"
)

const (
	// createLocation is where section 10 stops both creates: the closure
	// createHandler returns, which serves one create request.
	createLocation = "k8s.io/apiserver/pkg/endpoints/handlers.createHandler.func1"
	// stackDepth is how many frames the check reads, as the lesson's stack 80:
	// the whole goroutine, down to the timeout filter that started it.
	stackDepth = 80
	// debugBuildTimeout bounds make debug when it builds: a first debug build
	// of kube-apiserver took 8.5 minutes on a loaded 2-core machine.
	debugBuildTimeout = 40 * time.Minute
)

// TestDebugReplicaStopsCreatesOnTheRoutesTheLessonQuotes runs make debug
// WHAT=kube-apiserver's replica from the pinned module's debug build, stops a
// ConfigMap's create and a Foo's create in createHandler's closure as section
// 10 does, and holds each stopped goroutine's frames to the stack the lesson
// quotes (<!-- stack: configmap-create --> and <!-- stack: foo-create -->): the
// installer's go-restful route for the one, crdHandler for the other, the
// filters of the chain below both. It builds the debug build when it is not
// there yet, printing the build's progress, only under make test-lesson6
// (KIT_DEBUG_CACHED=0); elsewhere, make check and make test's smoke, it skips
// without one, naming make test-lesson6.
func TestDebugReplicaStopsCreatesOnTheRoutesTheLessonQuotes(t *testing.T) {
	// Not parallel: TestDebugReplicaServesARequest, which is, starts its replica
	// after this one has ended (one replica per cluster at a time).
	skipUnderASolution(t)
	stacks := map[string]delve.QuotedStack{}
	for _, name := range []string{"configmap-create", "foo-create"} {
		q, err := delve.ReadQuotedStack(suite.Lesson.Doc, name)
		if err != nil {
			t.Fatal(err)
		}
		stacks[name] = q
	}
	info, err := kittest.CurrentClusterInfo()
	if err != nil {
		t.Fatalf("lesson 6's replica runs beside the local cluster's kube-apiserver: %v", err)
	}
	root := kittest.RepoRoot()
	state := filepath.Join(root, "_output", "debug", info.Name, apiserver+".env")
	if _, err := os.Stat(state); err == nil {
		t.Skipf("a replica of %s runs in the cluster %s already (%s; make undebug WHAT=%s ends it): the check leaves it be", apiserver, info.Name, state, apiserver)
	}
	installFooCRD(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	// The pinned module's debug build, whatever copy of the source the learner
	// has: the stacks are the pinned version's.
	env := append(os.Environ(), kittest.ClusterEnv+"="+info.Name, "KUBECONFIG="+info.Kubeconfig,
		"KUBE_SRC="+filepath.Join(t.TempDir(), "no-copy"))
	// Only make test-lesson6 builds (KIT_DEBUG_CACHED=0, hack/test-lesson.sh):
	// make check and make test's smoke take the debug build when it is there
	// and skip when not, as TestDebugReplicaServesARequest does.
	var progress io.Writer
	if os.Getenv(delve.CachedOnlyEnv) == "0" {
		progress = os.Stderr
		fmt.Fprintf(progress, ">> make debug WHAT=%s PORT=%s, building its debug build from the pinned module when it is not cached (minutes the first time)\n", apiserver, port)
	} else {
		env = append(env, delve.CachedOnlyEnv+"=1")
	}
	out, err := debugShWith(root, append(env, "PORT="+port), debugBuildTimeout, progress, "debug", apiserver)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == notCached {
		t.Skipf("no cached debug build of %s from the pinned module: the stacks are not taken (make test-lesson6 builds it and takes them; so does make debug WHAT=%s while there is no copy of the source, _output/kubernetes; minutes the first time)", apiserver, apiserver)
	}
	t.Cleanup(func() {
		if out, err := debugSh(root, env, "undebug", apiserver); err != nil {
			t.Errorf("make undebug WHAT=%s: %v\n%s", apiserver, err, out)
		}
	})
	if err != nil {
		t.Fatalf("make debug WHAT=%s PORT=%s (hack/debug.sh debug %s): %v\n%s", apiserver, port, apiserver, err, out)
	}
	config, err := clientcmd.BuildConfigFromFlags("", readState(t, state, "KUBECONFIG"))
	if err != nil {
		t.Fatalf("the replica's kubeconfig: %v", err)
	}
	replica, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	replicaDynamic, err := dynamic.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	ns := kittest.Namespace(t, kittest.Clientset(t), "lesson6-stacks")
	foos := replicaDynamic.Resource(kittest.FooGVR).Namespace(ns)
	// The replica learns of the CRD through its own watch: the Foo's create
	// must not find it unknown.
	kittest.Eventually(t, deadline, "the replica to serve Foos", func(ctx context.Context) (bool, error) {
		_, err := foos.List(ctx, metav1.ListOptions{})
		return err == nil, err
	})

	d, err := delve.Dial("127.0.0.1:" + port)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Halt(); err != nil {
		t.Fatal(err)
	}
	configMapPath := "/api/v1/namespaces/" + ns + "/configmaps"
	fooPath := "/apis/" + kittest.FooGVR.GroupVersion().String() + "/namespaces/" + ns + "/" + kittest.FooGVR.Resource
	bp, err := d.Break(createLocation, fmt.Sprintf("req.URL.Path == %q || req.URL.Path == %q", configMapPath, fooPath))
	if err != nil {
		t.Fatal(err)
	}
	creates := []struct {
		stack, path string
		create      func(ctx context.Context) error
	}{
		{"configmap-create", configMapPath, func(ctx context.Context) error {
			_, err := replica.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "stacked"},
				Data:       map[string]string{"lesson": "6"},
			}, metav1.CreateOptions{})
			return err
		}},
		{"foo-create", fooPath, func(ctx context.Context) error {
			_, err := foos.Create(ctx, kittest.NewFoo(ns, 0, 0), metav1.CreateOptions{})
			return err
		}},
	}
	// One create at a time: each is held at the breakpoint until the next
	// continue lets it through.
	done := make([]chan error, len(creates))
	for i, c := range creates {
		stopped := d.ContinueUntilStop()
		done[i] = make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*deadline)
			defer cancel()
			done[i] <- c.create(ctx)
		}()
		st := d.WaitForBreakpoint(t, stopped, bp, deadline)
		gid := st.CurrentThread.GoroutineID
		path, err := d.Eval(gid, "req.URL.Path")
		if err != nil {
			t.Fatal(err)
		}
		if path.Value != c.path {
			t.Fatalf("createHandler stopped on req.URL.Path %q; want the %s's, %q", path.Value, c.stack, c.path)
		}
		seen, err := d.Stack(gid, stackDepth)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(c.stack, func(t *testing.T) {
			delve.RequireQuotedStack(t, stacks[c.stack], seen)
		})
	}
	if err := d.Clear(bp.ID); err != nil {
		t.Fatal(err)
	}
	d.DetachRunning()
	for i, c := range creates {
		if err := <-done[i]; err != nil {
			t.Errorf("the %s through the replica, once let go: %v", c.stack, err)
		}
	}
}

// skipUnderASolution skips a check of the debug replica while the suite runs
// an exercise solution's kube-apiserver in the cluster (make check
// SOLUTION=admission-plugin, make test-lesson6's solution step): the replica
// takes the cluster's flags, and the pinned debug build refuses to start with
// the solution's plugin named in --enable-admission-plugins. The other steps
// run it on the pinned kube-apiserver.
func skipUnderASolution(t *testing.T) {
	t.Helper()
	if patch := os.Getenv(kittest.KubeSolutionEnv); patch != "" {
		t.Skipf("the cluster runs the kube-apiserver of %s, whose plugin the pinned debug build of the replica lacks: the other steps of make test-lesson6 check the replica", filepath.Base(patch))
	}
}
