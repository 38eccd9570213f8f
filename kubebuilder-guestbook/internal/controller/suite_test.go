/*
Copyright 2026 The controller-kit Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controller

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/controller-kit/controller-kit/kubebuilder-guestbook/internal/testenv"
)

// The envtest suite: a real kube-apiserver and etcd (the kit's own builds, no
// kube-controller-manager, so no garbage collector and no Deployment controller),
// the CRD from config/crd/bases, and the reference Reconciler in a manager, with
// its writes (written), reconciles (reconciled), the errors Reconcile returned
// (failed) and events (recorder) kept per namespace.

// operatorNamespace holds the directory ConfigMap in this suite.
const operatorNamespace = "guestbook-operator"

var (
	scheme     *runtime.Scheme
	k8sClient  client.Client // talks to the API server directly, for the tests' own reads and writes
	reconciler *GuestbookReconciler
	restConfig *rest.Config      // the API server's address and credentials
	written    = &writeLog{}     // every write of the Reconciler, per namespace
	reconciled = &perNamespace{} // every reconcile, per namespace
	failed     = &perNamespace{} // every reconcile that returned an error, per namespace
	recorder   = &testRecorder{}
)

func TestMain(m *testing.M) {
	if onlyFuzzTargets() { // fuzz_test.go: they need no API server
		os.Exit(m.Run())
	}
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	// The manager logs only errors unless the tests run with -v.
	flag.Parse()
	level := zapcore.ErrorLevel
	if testing.Verbose() {
		level = zapcore.DebugLevel
	}
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(level)))
	var err error
	if scheme, err = testenv.NewScheme(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	env, err := testenv.NewEnvironment()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	restConfig, err = env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: starting envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()

	if k8sClient, err = client.New(restConfig, client.Options{Scheme: scheme}); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		panic(err)
	}

	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// The one ConfigMap the operator watches, as cmd/main.go sets it.
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: (&Directory{Key: types.NamespacedName{Namespace: operatorNamespace, Name: DirectoryName}}).CacheOptions(),
		}},
		// The manager's client, as client.New would build it (reading from the
		// manager's cache), with every write it sends added to written first.
		// interceptor.NewClient wraps a client.WithWatch, hence NewWithWatch.
		NewClient: func(cfg *rest.Config, opts client.Options) (client.Client, error) {
			c, err := client.NewWithWatch(cfg, opts)
			if err != nil {
				return nil, err
			}
			return interceptor.NewClient(c, recordWrites(written)), nil
		},
	})
	if err != nil {
		panic(err)
	}
	writer := mgr.GetClient() // every write recorded in written, see NewClient above
	reconciler = &GuestbookReconciler{
		Client:   writer,
		Scheme:   scheme,
		Recorder: recorder,
		Directory: &Directory{
			Client: writer,
			Reader: mgr.GetAPIReader(),
			Key:    types.NamespacedName{Namespace: operatorNamespace, Name: DirectoryName},
		},
	}
	counted := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		reconciled.add(req.Namespace)
		res, err := reconciler.Reconcile(ctx, req)
		if err != nil {
			failed.add(req.Namespace)
		}
		return res, err
	})
	if err := reconciler.controllerBuilder(mgr).Complete(counted); err != nil {
		panic(err)
	}
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()

	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
	}
	return code
}

// perNamespace counts reconciles (or failed ones) per namespace.
type perNamespace struct {
	mu sync.Mutex
	n  map[string]int
}

func (p *perNamespace) add(namespace string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == nil {
		p.n = map[string]int{}
	}
	p.n[namespace]++
}

func (p *perNamespace) get(namespace string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[namespace]
}

// event is one event the Reconciler recorded.
type event struct {
	namespace, name, eventType, reason, note string
}

// testRecorder keeps every event in memory (events.EventRecorder).
type testRecorder struct {
	mu     sync.Mutex
	events []event
}

func (r *testRecorder) Eventf(regarding, _ runtime.Object, eventType, reason, _, note string, args ...any) {
	obj := regarding.(client.Object)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{obj.GetNamespace(), obj.GetName(), eventType, reason, fmt.Sprintf(note, args...)})
}

// count returns how many events were recorded in namespace, of any reason.
func (r *testRecorder) count(namespace string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e.namespace == namespace {
			n++
		}
	}
	return n
}

// in returns the events recorded in namespace with the given reason.
func (r *testRecorder) in(namespace, reason string) []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event
	for _, e := range r.events {
		if e.namespace == namespace && e.reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// waitForEvents polls until at least n events with reason were recorded in
// namespace and returns them all. The Reconciler records an event after the
// write it reports, so a test that has just seen the write must wait for the
// event too rather than read the recorder at once.
func waitForEvents(t *testing.T, namespace, reason string, n int) []event {
	t.Helper()
	eventually(t, fmt.Sprintf("%d %s event(s)", n, reason), func(context.Context) (bool, error) {
		return len(recorder.in(namespace, reason)) >= n, nil
	})
	return recorder.in(namespace, reason)
}

// waitForExactlyEvents is waitForEvents for a test that wants exactly n: once n
// are there it watches for a second more, so that a duplicate recorded a moment
// later still fails the test.
func waitForExactlyEvents(t *testing.T, namespace, reason string, n int) []event {
	t.Helper()
	waitForEvents(t, namespace, reason, n)
	consistently(t, time.Second, fmt.Sprintf("exactly %d %s event(s)", n, reason), func() bool {
		return len(recorder.in(namespace, reason)) == n
	})
	return recorder.in(namespace, reason)
}

// eventually polls cond until it returns true, failing the test after 30 s with
// what it was waiting for and the last error cond returned.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			ok, err := cond(ctx)
			last = err
			return ok && err == nil, nil
		})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
	}
}

// expectQuiet watches namespace for d and fails the test, naming the writes, if
// the Reconciler writes anything there beyond its first `writes` writes, or
// reconciles it more than twice beyond its first `reconciles` reconciles (a
// loop). A level-triggered Reconciler with nothing to change only reads.
func expectQuiet(t *testing.T, namespace string, writes, reconciles int, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if extra := written.in(namespace)[writes:]; len(extra) > 0 {
			t.Fatalf("the Reconciler wrote with nothing to change: %s", strings.Join(extra, ", "))
		}
		if n := reconciled.get(namespace) - reconciles; n > 2 {
			t.Fatalf("%d reconciles with nothing to change; want at most 2 (a reconcile loop?)", n)
		}
	}
}

// consistently checks cond every 100 ms for d and fails the test the first time
// it returns false. It guards against loops, not against slowness.
func consistently(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if !cond() {
			t.Fatalf("expected %s to hold, and it stopped holding", what)
		}
	}
}
