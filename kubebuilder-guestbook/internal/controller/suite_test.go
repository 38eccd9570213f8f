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
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
	"github.com/controller-kit/controller-kit/kubebuilder-guestbook/internal/testenv"
)

// The envtest suite: a real kube-apiserver and etcd (the kit's own builds, no
// kube-controller-manager, so no garbage collector and no Deployment controller),
// the CRD from config/crd/bases, and the reference Reconciler in a manager, with
// its writes, reconciles and events counted per namespace.

// operatorNamespace holds the directory ConfigMap in this suite.
const operatorNamespace = "guestbook-operator"

var (
	scheme     = runtime.NewScheme()
	k8sClient  client.Client // talks to the API server directly, for the tests' own reads and writes
	reconciler *GuestbookReconciler
	counts     = &perNamespace{}
	recorder   = &testRecorder{}
)

func TestMain(m *testing.M) {
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
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := webappv1.AddToScheme(scheme); err != nil {
		panic(err)
	}

	env, err := testenv.NewEnvironment()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: starting envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()

	if k8sClient, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		panic(err)
	}

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		panic(err)
	}
	writer := &countingClient{Client: mgr.GetClient(), counts: counts}
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
		counts.add("reconcile", req.Namespace)
		return reconciler.Reconcile(ctx, req)
	})
	if err := NewControllerBuilder(mgr).Complete(counted); err != nil {
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

// perNamespace counts things (writes, reconciles) per namespace.
type perNamespace struct {
	mu sync.Mutex
	n  map[string]int
}

func (p *perNamespace) add(what, namespace string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == nil {
		p.n = map[string]int{}
	}
	p.n[what+"/"+namespace]++
}

func (p *perNamespace) get(what, namespace string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[what+"/"+namespace]
}

// countingClient counts every write the Reconciler makes, per namespace.
type countingClient struct {
	client.Client
	counts *perNamespace
}

func (c *countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.counts.add("write", obj.GetNamespace())
	return c.Client.Create(ctx, obj, opts...)
}

func (c *countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.counts.add("write", obj.GetNamespace())
	return c.Client.Update(ctx, obj, opts...)
}

func (c *countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.counts.add("write", obj.GetNamespace())
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *countingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.counts.add("write", obj.GetNamespace())
	return c.Client.Delete(ctx, obj, opts...)
}

func (c *countingClient) Status() client.SubResourceWriter {
	return &countingStatusWriter{SubResourceWriter: c.Client.Status(), counts: c.counts}
}

type countingStatusWriter struct {
	client.SubResourceWriter
	counts *perNamespace
}

func (w *countingStatusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	w.counts.add("write", obj.GetNamespace())
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

func (w *countingStatusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	w.counts.add("write", obj.GetNamespace())
	return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
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
