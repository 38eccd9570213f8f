//go:build e2e

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

package e2e

// The subtest of TestGuestbookOperator about what a Reconciler owes a
// Guestbook that is going away: no new children, and no wait on a webhook
// server to let it go.

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/controller-kit/controller-kit/test/kittest"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// deletedGuestbookGetsNoNewChildren deletes an Available Guestbook with
// foreground cascading (kubectl delete --cascade=foreground): the garbage
// collector deletes the children while the Guestbook, deletionTimestamp set,
// still exists, and each delete reaches the Reconciler through Owns. It watches
// the namespace's Deployments and Services from before the delete until the
// Guestbook is gone: any of them added in that time is a new child of an owner
// that is going away.
func deletedGuestbookGetsNoNewChildren(t *testing.T, c client.Client, cs kubernetes.Interface) {
	ns := kittest.Namespace(t, cs, "guestbook")
	createGuestbook(t, c, ns, "shop", 1)
	waitAvailable(t, c, ns, "shop", 1)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wc, err := client.NewWithWatch(kittest.Config(t), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	var deployments appsv1.DeploymentList
	var services corev1.ServiceList
	if err := c.List(ctx, &deployments, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, &services, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	// Watching from the lists' resourceVersions, every later create shows.
	existing := map[types.UID]bool{}
	for _, d := range deployments.Items {
		existing[d.UID] = true
	}
	for _, s := range services.Items {
		existing[s.UID] = true
	}
	var mu sync.Mutex
	var created []string
	newChildren := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(created)
	}
	watchFrom := func(list client.ObjectList, rv string) {
		w, err := wc.Watch(ctx, list, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		if err != nil {
			t.Fatalf("watching %T in %s: %v", list, ns, err)
		}
		t.Cleanup(w.Stop)
		go func() {
			for ev := range w.ResultChan() {
				if obj, ok := ev.Object.(client.Object); ok && ev.Type == watch.Added && !existing[obj.GetUID()] {
					mu.Lock()
					created = append(created, kindOf(obj)+" "+obj.GetName())
					mu.Unlock()
				}
			}
		}()
	}
	watchFrom(&appsv1.DeploymentList{}, deployments.ResourceVersion)
	watchFrom(&corev1.ServiceList{}, services.ResourceVersion)

	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}
	if err := c.Delete(ctx, gb, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatalf("deleting Guestbook %s/shop with foreground cascading: %v", ns, err)
	}
	// A Reconciler that creates children here fights the garbage collector,
	// and the Guestbook may never go: the first new child ends the wait.
	kittest.Eventually(t, kittest.GarbageCollectionDeadline(deadline), "the Guestbook and its children to be gone", func(ctx context.Context) (bool, error) {
		if len(newChildren()) > 0 {
			return true, nil
		}
		_, err := getGuestbook(ctx, c, ns, "shop")
		return isGone(err)
	})
	// A create in the reconcile the Guestbook's last update queued shows
	// within a second.
	time.Sleep(time.Second)
	if created := newChildren(); len(created) > 0 {
		t.Errorf("after Guestbook %s/shop was deleted (deletionTimestamp set), these were created: %s; a Guestbook that is going away gets no new children",
			ns, strings.Join(created, ", "))
	}
}

// kindOf names the kind of a watched Deployment or Service.
func kindOf(obj client.Object) string {
	if _, ok := obj.(*appsv1.Deployment); ok {
		return "Deployment"
	}
	return "Service"
}

// deletingWorksWhileTheWebhookServerIsDown registers the Guestbook's webhook
// configurations as the project ships them (config/webhook, rendered by
// kustomize) for one namespace, pointed at an address where nothing listens:
// the manager Pod crashing or not yet ready, or an uninstall that left the
// configurations behind. The Guestbook was created and registered in the
// directory before, so it carries the finalizer. A change to its spec is now
// refused (the webhooks' failurePolicy is Fail), yet deleting the Guestbook,
// and then its namespace, must not wait for the webhook server: removing the
// finalizer is an update that touches metadata only, and the configurations'
// matchConditions do not send it to the webhooks.
func deletingWorksWhileTheWebhookServerIsDown(t *testing.T, c client.Client, cs kubernetes.Interface, operatorNS string) {
	ns := kittest.Namespace(t, cs, "guestbook")
	createGuestbook(t, c, ns, "shop", 1)
	kittest.Eventually(t, deadline, "the directory entry", hasDirectoryEntry(c, operatorNS, ns, "shop"))

	manifests, err := kittest.Kustomize(filepath.Join(kittest.RepoRoot(), "kubebuilder-guestbook", "config", "webhook"))
	if err != nil {
		t.Fatal(err)
	}
	if n := kittest.RegisterWebhooks(t, cs, manifests, ns, "https://"+kittest.FreeAddress(t), nil); n == 0 {
		t.Fatal("config/webhook renders no webhook configuration")
	}
	// The API server reads webhook configurations through an informer: the
	// webhooks are in force once a change to the spec (sent as a dry run) fails
	// because the webhook server cannot be called.
	kittest.Eventually(t, deadline, "a spec change to be refused by the unreachable webhooks", func(ctx context.Context) (bool, error) {
		gb, err := getGuestbook(ctx, c, ns, "shop")
		if err != nil {
			return false, err
		}
		gb.Spec.Frontend.Replicas = ptr.To(ptr.Deref(gb.Spec.Frontend.Replicas, 1) + 1)
		switch err := c.Update(ctx, gb, client.DryRunAll); {
		case apierrors.IsInternalError(err):
			return true, nil
		case err == nil:
			return false, nil // admitted: the API server does not know the webhooks yet
		default:
			return false, err // a conflict with the Reconciler's own update: read again
		}
	})

	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}
	deleted := time.Now()
	if err := c.Delete(context.Background(), gb); err != nil {
		t.Fatalf("deleting Guestbook %s/shop: %v", ns, err)
	}
	kittest.Eventually(t, deadline, "the Guestbook to be gone while the webhook server is down (its finalizer removed)", func(ctx context.Context) (bool, error) {
		_, err := getGuestbook(ctx, c, ns, "shop")
		return isGone(err)
	})
	gbGone := time.Since(deleted)
	nsDeleted := time.Now()
	if err := cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting namespace %s: %v", ns, err)
	}
	kittest.Eventually(t, kittest.NamespaceDeletionDeadline(deadline), "namespace "+ns+" to be gone while the webhook server is down", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return isGone(err)
	})
	// Figures for docs/reliability.md, not pass conditions.
	t.Logf("with the webhook server down: the Guestbook was gone %.1fs after its delete, its namespace %.1fs after its own",
		gbGone.Seconds(), time.Since(nsDeleted).Seconds())
}
