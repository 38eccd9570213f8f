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
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// DirectoryName is the name of the directory ConfigMap in the operator's namespace.
const DirectoryName = "guestbook-directory"

// Directory is a ConfigMap in the operator's namespace listing every Guestbook the
// operator runs: key "<namespace>.<name>", value the address of its frontend
// Service. It is the reason Guestbooks carry a finalizer: the entry lives in
// another namespace than the Guestbook, where an owner reference cannot reach
// (owners must be in the same namespace as what they own), so nothing but the
// operator removes it.
type Directory struct {
	// Client writes the ConfigMap.
	Client client.Client
	// Reader reads it before each write. The manager's API reader goes straight
	// to the API server, so a worker sees what another worker wrote a moment ago.
	Reader client.Reader
	// Key is the ConfigMap's namespace and name.
	Key types.NamespacedName
}

// EntryKey returns the directory key of a Guestbook: "<namespace>.<name>".
func EntryKey(gb *webappv1.Guestbook) string {
	return gb.Namespace + "." + gb.Name
}

// entryValue returns the address of a Guestbook's frontend Service.
func entryValue(gb *webappv1.Guestbook) string {
	return fmt.Sprintf("http://%s%s.%s.svc", gb.Name, webappv1.FrontendSuffix, gb.Namespace)
}

// sharedWrite runs write again, after a short backoff, when it lost a race for the
// directory ConfigMap: with --workers above 1 several Guestbooks register at once,
// and the one ConfigMap they share is then updated (a Conflict) or created (an
// AlreadyExists) by another worker between a read and a write. Each retry reads
// again. Nothing else requeues such a loser: the watch on the directory
// (Repairs) queues a Guestbook only when its entry was removed or changed, and
// another worker's write does neither. Other errors, and a race lost four times,
// are returned.
func sharedWrite(write func() error) error {
	lostRace := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	return retry.OnError(retry.DefaultBackoff, lostRace, write)
}

// Register makes sure the directory has the Guestbook's entry, creating the
// ConfigMap if it does not exist yet. An entry already in place costs one read.
func (d *Directory) Register(ctx context.Context, gb *webappv1.Guestbook) error {
	return sharedWrite(func() error { return d.register(ctx, gb) })
}

// register is one attempt of Register.
func (d *Directory) register(ctx context.Context, gb *webappv1.Guestbook) error {
	key, value := EntryKey(gb), entryValue(gb)
	var cm corev1.ConfigMap
	err := d.Reader.Get(ctx, d.Key, &cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: d.Key.Name, Namespace: d.Key.Namespace},
			Data:       map[string]string{key: value},
		}
		err = d.Client.Create(ctx, &cm)
	case err != nil:
		return err
	case cm.Data[key] == value:
		return nil
	default:
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[key] = value
		err = d.Client.Update(ctx, &cm)
	}
	if err != nil {
		return err
	}
	logf.FromContext(ctx).Info("Registered in the directory", "directory", d.Key, "entry", key)
	return nil
}

// entryOf returns the Guestbook a directory key names: "<namespace>.<name>"
// (a namespace has no dots, a name may).
func entryOf(key string) (types.NamespacedName, bool) {
	namespace, name, ok := strings.Cut(key, ".")
	return types.NamespacedName{Namespace: namespace, Name: name}, ok && namespace != "" && name != ""
}

// Unregister removes the Guestbook's entry. A missing ConfigMap or entry counts
// as done, so deletion never hangs on something already cleaned up.
func (d *Directory) Unregister(ctx context.Context, gb *webappv1.Guestbook) error {
	return sharedWrite(func() error { return d.unregister(ctx, EntryKey(gb)) })
}

// DropGone removes the entry of a Guestbook that no longer exists, and reports
// whether there was one. The finalizer removes an entry before its Guestbook
// goes; this is for a Guestbook that went without it (its finalizer removed by
// hand or by a `kubectl replace`, then deleted, perhaps while the operator was
// away). It looks in the manager's cache first, so the usual case, a Guestbook
// whose finalizer already did the work, costs no API call.
func (d *Directory) DropGone(ctx context.Context, gone types.NamespacedName) (bool, error) {
	key := gone.Namespace + "." + gone.Name
	var cached corev1.ConfigMap
	if err := d.Client.Get(ctx, d.Key, &cached); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if _, ok := cached.Data[key]; !ok {
		return false, nil
	}
	return true, sharedWrite(func() error { return d.unregister(ctx, key) })
}

// unregister is one attempt of Unregister: it removes the entry key.
func (d *Directory) unregister(ctx context.Context, key string) error {
	var cm corev1.ConfigMap
	if err := d.Reader.Get(ctx, d.Key, &cm); err != nil {
		return client.IgnoreNotFound(err)
	}
	if _, ok := cm.Data[key]; !ok {
		return nil
	}
	delete(cm.Data, key)
	return d.Client.Update(ctx, &cm)
}

// CacheOptions returns what the manager's cache needs to watch the directory
// ConfigMap and nothing else: the one object, by namespace and name (a field
// selector), so the operator caches no other ConfigMap and needs list and watch
// on ConfigMaps only in its own namespace. Give it to the manager as
// cache.Options{ByObject: ...} with the key &corev1.ConfigMap{}.
func (d *Directory) CacheOptions() cache.ByObject {
	return cache.ByObject{
		Namespaces: map[string]cache.Config{d.Key.Namespace: {}},
		Field:      fields.OneTermEqualSelector("metadata.name", d.Key.Name),
	}
}

// Repairs is the event handler that keeps the directory true, in both
// directions: a controller watches what it generates. When someone deletes the
// ConfigMap, every Guestbook is queued, and its reconcile registers it again
// (creating the ConfigMap); when someone removes or changes an entry by hand,
// the Guestbook whose entry it was is queued. An entry whose Guestbook does not
// exist queues that Guestbook's key, and the reconcile of a Guestbook that is
// gone drops the entry (Directory.DropGone): such an entry is seen when the
// ConfigMap is first listed, at the operator's start (its Guestbook was deleted
// while the operator was away, with its finalizer removed by hand), and when an
// entry is added. An update looks only at the entries it changed, so the
// operator's own writes, which add or set entries that are right, cost a map
// comparison and a cache read and queue nothing, and an entry removed because
// its Guestbook is going away queues nothing either. guestbooks reads the
// Guestbooks (the manager's cache). Events of other ConfigMaps are ignored.
func (d *Directory) Repairs(guestbooks client.Reader) handler.TypedEventHandler[client.Object, reconcile.Request] {
	isDirectory := func(obj client.Object) bool {
		return obj.GetNamespace() == d.Key.Namespace && obj.GetName() == d.Key.Name
	}
	// queueIfGone queues the key of an entry whose Guestbook does not exist.
	queueIfGone := func(ctx context.Context, entry string, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		key, ok := entryOf(entry)
		if !ok {
			return
		}
		if err := guestbooks.Get(ctx, key, &webappv1.Guestbook{}); apierrors.IsNotFound(err) {
			q.Add(reconcile.Request{NamespacedName: key})
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e ctrlevent.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			cm, ok := e.Object.(*corev1.ConfigMap)
			if !ok || !isDirectory(cm) {
				return
			}
			for entry := range cm.Data {
				queueIfGone(ctx, entry, q)
			}
		},
		UpdateFunc: func(ctx context.Context, e ctrlevent.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			oldCM, ok1 := e.ObjectOld.(*corev1.ConfigMap)
			newCM, ok2 := e.ObjectNew.(*corev1.ConfigMap)
			if !ok1 || !ok2 || !isDirectory(newCM) {
				return
			}
			for entry := range newCM.Data {
				if _, had := oldCM.Data[entry]; !had {
					queueIfGone(ctx, entry, q)
				}
			}
			for entry, was := range oldCM.Data {
				now, still := newCM.Data[entry]
				if still && now == was {
					continue // untouched
				}
				key, ok := entryOf(entry)
				if !ok {
					continue
				}
				var gb webappv1.Guestbook
				if err := guestbooks.Get(ctx, key, &gb); err != nil {
					continue // no such Guestbook (any more): nothing to repair
				}
				if gb.DeletionTimestamp.IsZero() && now != entryValue(&gb) {
					q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&gb)})
				}
			}
		},
		DeleteFunc: func(ctx context.Context, e ctrlevent.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if !isDirectory(e.Object) {
				return
			}
			var list webappv1.GuestbookList
			if err := guestbooks.List(ctx, &list); err != nil {
				logf.FromContext(ctx).Error(err, "Cannot list the Guestbooks to repair the directory", "directory", d.Key)
				return
			}
			for i := range list.Items {
				if gb := &list.Items[i]; gb.DeletionTimestamp.IsZero() {
					q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(gb)})
				}
			}
		},
	}
}
