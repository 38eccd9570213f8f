package main

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// A fuzz target for PhaseLabelReconciler. The phase label is decided inline in
// Reconcile (the label is status.phase, as it is), so the target runs the whole
// Reconcile against a fake clientset and a cache filled by hand: no cluster, no
// informer, nothing but memory. Run it with
//
//	go test -run='^$' -fuzz='^FuzzPhaseLabelReconciler$' -fuzztime=10s .
//
// or all of the kit's fuzz targets with `make fuzz` at its root. The f.Add seeds
// run as ordinary tests on every `go test`; the case files they come from are in
// /work/shared/cases.

// FuzzPhaseLabelReconciler checks, for any key and any Pod:
//   - Reconcile never panics;
//   - a malformed key (SplitMetaNamespaceKey refuses it) is an error, and
//     nothing is written;
//   - a Pod missing from the cache (deleted-object.md), or being deleted
//     (namespace-terminating.md, owner-being-deleted.md), is no error and gets
//     no write;
//   - otherwise the Pod ends up with PhaseLabel set to its phase, a valid label
//     value, with at most one write, and only a patch of Pods (rbac.md: no other
//     verb, no other resource); other labels are kept;
//   - a second Reconcile, once the cache has seen that write, writes nothing:
//     the loop closes.
//
// Phases: the five the kubelet writes, and "" (a Pod not yet seen by the
// scheduler's side of things). The fuzzer tries any string; a phase that is not
// a valid label value (none of those six) is left out, since the API server would
// refuse that patch and the key would be retried as an error.
//
// Seeds: deleted-object.md (key default/p1, the Pod gone); namespace-terminating.md
// (a Pod being deleted); keys with an empty name or namespace, too many slashes;
// names at the 63 (namespace) and 253 (Pod name) limits; a stale label and a
// label already right.
func FuzzPhaseLabelReconciler(f *testing.F) {
	// key, namespace, name, phase, oldLabel (empty: none), inCache, deleting
	f.Add("default/p1", "default", "p1", "Running", "", true, false)                                                                           // a Pod, no label yet
	f.Add("default/p1", "default", "p1", "Running", "Pending", true, false)                                                                    // a stale label
	f.Add("default/p1", "default", "p1", "Succeeded", "Succeeded", true, false)                                                                // the label already right: no write
	f.Add("default/p1", "default", "p1", "Failed", "", true, false)                                                                            // Failed
	f.Add("default/p1", "default", "p1", "Unknown", "", true, false)                                                                           // Unknown
	f.Add("default/p1", "default", "p1", "", "", true, false)                                                                                  // no phase yet: an empty label value
	f.Add("default/p1", "default", "p1", "Running", "", false, false)                                                                          // deleted-object.md: gone from the cache
	f.Add("default/p1", "default", "p1", "Running", "Pending", true, true)                                                                     // namespace-terminating.md: being deleted
	f.Add("", "default", "p1", "Running", "", true, false)                                                                                     // an empty key
	f.Add("default/", "default", "p1", "Running", "", true, false)                                                                             // an empty name
	f.Add("/p1", "default", "p1", "Running", "", true, false)                                                                                  // an empty namespace
	f.Add("a/b/c", "default", "p1", "Running", "", true, false)                                                                                // too many slashes
	f.Add("p1", "", "p1", "Pending", "", true, false)                                                                                          // a key without namespace
	f.Add(strings.Repeat("n", 63)+"/"+strings.Repeat("p", 253), strings.Repeat("n", 63), strings.Repeat("p", 253), "Pending", "", true, false) // names at their limits

	f.Fuzz(func(t *testing.T, key, namespace, name, phase, oldLabel string, inCache, deleting bool) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"app": "web"}},
			Status:     corev1.PodStatus{Phase: corev1.PodPhase(phase)},
		}
		if oldLabel != "" {
			pod.Labels[PhaseLabel] = oldLabel
		}
		if deleting {
			pod.DeletionTimestamp = &metav1.Time{}
			pod.Finalizers = []string{"example.com/hold"}
		}
		storable := len(validation.IsDNS1123Label(namespace)) == 0 && len(validation.IsDNS1123Subdomain(name)) == 0
		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		client := fake.NewClientset()
		if storable {
			// Only a Pod the API server could store is in the API and the cache.
			if err := client.Tracker().Add(pod.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			if inCache {
				if err := indexer.Add(pod.DeepCopy()); err != nil {
					t.Fatal(err)
				}
			}
		}
		r := &PhaseLabelReconciler{Client: client, Pods: corelisters.NewPodLister(indexer)}
		ctx := klog.NewContext(context.Background(), klog.Background().V(10)) // quiet: its lines are logged at -v=10

		err := r.Reconcile(ctx, key) // must not panic, whatever the key
		writes := 0
		for _, action := range client.Actions() {
			if action.GetVerb() == "get" || action.GetVerb() == "list" || action.GetVerb() == "watch" {
				continue
			}
			writes++
			if action.GetVerb() != "patch" || action.GetResource().Resource != "pods" {
				t.Errorf("Reconcile(%q) sends %s %s; want only patches of Pods", key, action.GetVerb(), action.GetResource().Resource)
			}
		}

		keyNamespace, keyName, splitErr := cache.SplitMetaNamespaceKey(key)
		ours := storable && inCache && keyNamespace == namespace && keyName == name
		switch {
		case splitErr != nil:
			if err == nil || writes > 0 {
				t.Errorf("Reconcile(%q), a malformed key: error %v, %d writes; want an error and no write", key, err, writes)
			}
			return
		case !ours || deleting:
			if err != nil || writes > 0 {
				t.Errorf("Reconcile(%q) of a Pod gone or being deleted: error %v, %d writes; want neither", key, err, writes)
			}
			return
		}
		if len(validation.IsValidLabelValue(phase)) > 0 {
			return // not a phase the kubelet writes; see the doc comment
		}
		if err != nil {
			t.Fatalf("Reconcile(%q): %v", key, err)
		}
		want := 1 // no label yet (oldLabel ""), or a stale one
		if oldLabel != "" && oldLabel == phase {
			want = 0
		}
		if writes != want {
			t.Errorf("Reconcile(%q) with label %q, phase %q: %d writes; want %d", key, oldLabel, phase, writes, want)
		}
		stored, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := stored.Labels[PhaseLabel]; got != phase || len(validation.IsValidLabelValue(got)) > 0 {
			t.Errorf("after Reconcile, %s = %q; want the phase %q, a valid label value", PhaseLabel, got, phase)
		}
		if stored.Labels["app"] != "web" {
			t.Errorf("after Reconcile, the Pod's other labels are %v; want app=web kept", stored.Labels)
		}

		// The informer brings the write back to the cache; the next reconcile
		// finds the label right.
		if err := indexer.Update(stored); err != nil {
			t.Fatal(err)
		}
		client.ClearActions()
		if err := r.Reconcile(ctx, key); err != nil {
			t.Fatalf("second Reconcile(%q): %v", key, err)
		}
		for _, action := range client.Actions() {
			if action.GetVerb() == "patch" {
				t.Errorf("a second Reconcile(%q) patches again; want no write once the label is right", key)
			}
		}
	})
}
