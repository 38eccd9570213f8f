//go:build e2e

package e2e

import (
	"context"
	"errors"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestWatchListSendsInitialEventsThenABookmark watches ConfigMaps of a
// namespace of its own as section 14 does, with sendInitialEvents=true,
// allowWatchBookmarks=true and resourceVersionMatch=NotOlderThan (a
// streaming list, the way informers list since WatchList went on): the
// watch first sends every ConfigMap there as ADDED, then one BOOKMARK
// annotated k8s.io/initial-events-end, then the changes made after it. The
// same watch without resourceVersionMatch is refused, 422, naming the field.
func TestWatchListSendsInitialEventsThenABookmark(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "lesson6-watch")
	for _, name := range []string{"first", "second"} {
		createConfigMap(t, cs, ns, name)
	}

	refused := metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true}
	if w, err := cs.CoreV1().ConfigMaps(ns).Watch(context.Background(), refused); err == nil {
		w.Stop()
		t.Error("a watch with sendInitialEvents=true and no resourceVersionMatch was accepted; want it refused, 422 Invalid, naming resourceVersionMatch")
	} else if !apierrors.IsInvalid(err) {
		t.Errorf("a watch with sendInitialEvents=true and no resourceVersionMatch: %v; want 422 Invalid, naming resourceVersionMatch", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{
		SendInitialEvents:    ptr.To(true),
		AllowWatchBookmarks:  true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	})
	if err != nil {
		t.Fatalf("watching ConfigMaps with sendInitialEvents=true: %v", err)
	}
	defer w.Stop()

	// The namespace's ConfigMaps: the two made above (and rootCA, once the
	// publisher has made it).
	added := map[string]bool{}
	for bookmarked := false; !bookmarked; {
		ev := next(t, ctx, w)
		switch ev.Type {
		case watch.Added:
			added[ev.Object.(*corev1.ConfigMap).Name] = true
		case watch.Bookmark:
			obj, err := meta.Accessor(ev.Object)
			if err != nil {
				t.Fatal(err)
			}
			if obj.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
				t.Fatalf("a BOOKMARK before the initial events ended: annotations %v; want %s: \"true\"", obj.GetAnnotations(), metav1.InitialEventsAnnotationKey)
			}
			bookmarked = true
		default:
			t.Fatalf("a %s event among the initial events; want ADDED, then one BOOKMARK", ev.Type)
		}
	}
	if !added["first"] || !added["second"] {
		t.Errorf("the initial events added %v; want first and second among them, before the BOOKMARK", added)
	}

	// Then the changes: the ConfigMap made now (and kube-root-ca.crt, when
	// the publisher made it after the watch began; other BOOKMARKs may come
	// too, which say only how far the watch has read).
	createConfigMap(t, cs, ns, "third")
	for {
		ev := next(t, ctx, w)
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if ev.Type == watch.Bookmark || (ok && cm.Name == rootCA) {
			continue
		}
		if !ok || ev.Type != watch.Added || cm.Name != "third" {
			t.Fatalf("after the BOOKMARK: a %s event of %v; want ADDED third, the ConfigMap made after it", ev.Type, ev.Object)
		}
		break
	}
}

// rootCA is the ConfigMap kube-controller-manager's root-CA publisher makes in
// every namespace.
const rootCA = "kube-root-ca.crt"

// TestUpdateWithAnOldResourceVersionConflicts makes two writers read one
// ConfigMap, as section 14 does: the first one's update is stored, and the
// second one's, sent with the resourceVersion both read, is refused with 409
// Conflict (GuaranteedUpdate's precondition), the ConfigMap left as the first
// writer made it.
func TestUpdateWithAnOldResourceVersionConflicts(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "lesson6-conflict")
	cm := createConfigMap(t, cs, ns, "shared")

	first, second := cm.DeepCopy(), cm.DeepCopy()
	first.Data = map[string]string{"writer": "first"}
	second.Data = map[string]string{"writer": "second"}
	stored, err := cs.CoreV1().ConfigMaps(ns).Update(context.Background(), first, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("the first writer's update: %v", err)
	}
	_, err = cs.CoreV1().ConfigMaps(ns).Update(context.Background(), second, metav1.UpdateOptions{})
	var status apierrors.APIStatus
	switch {
	case err == nil:
		t.Fatalf("the second writer's update, sent with resourceVersion %s after the first made it %s, was stored; want 409 Conflict", cm.ResourceVersion, stored.ResourceVersion)
	case !apierrors.IsConflict(err):
		t.Fatalf("the second writer's update: %v; want 409 Conflict", err)
	case !errors.As(err, &status) || status.Status().Code != http.StatusConflict:
		t.Fatalf("the second writer's update: %v; want an answer with code 409", err)
	}
	got, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), cm.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["writer"] != "first" || got.ResourceVersion != stored.ResourceVersion {
		t.Errorf("the ConfigMap is %v at resourceVersion %s; want the first writer's, %s", got.Data, got.ResourceVersion, stored.ResourceVersion)
	}
}

// createConfigMap creates an empty ConfigMap called name.
func createConfigMap(t *testing.T, cs kubernetes.Interface, namespace, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(namespace).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ConfigMap %s/%s: %v", namespace, name, err)
	}
	return cm
}

// next returns the watch's next event, failing the test when the watch ends
// or ctx does first.
func next(t *testing.T, ctx context.Context, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch ended before the event the test waits for")
		}
		if ev.Type == watch.Error {
			t.Fatalf("the watch sent an error: %v", apierrors.FromObject(ev.Object))
		}
		return ev
	case <-ctx.Done():
		t.Fatalf("no event within %s", deadline)
	}
	return watch.Event{}
}
