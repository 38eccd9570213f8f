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
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// StubReconciler is the learner's starting point: the same controller (same
// watches, same RBAC) as the reference, with a Reconcile that only logs what it
// sees. Run it with `make run RECONCILER=stub`, then grow it step by step until
// the e2e suite passes (lesson 3, "Exercises").
type StubReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	client.Client
	// MaxRetryDelay is the longest wait between two retries of a failed
	// Guestbook (--max-retry-delay); 0 means DefaultMaxRetryDelay.
	MaxRetryDelay time.Duration
}

var _ reconcile.Reconciler = &StubReconciler{}

// Reconcile logs the Guestbook named by req, or that it is gone.
func (r *StubReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	var gb webappv1.Guestbook
	if err := r.Get(ctx, req.NamespacedName, &gb); err != nil {
		if client.IgnoreNotFound(err) == nil {
			log.Info("Guestbook is gone, nothing to do")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	log.Info("Guestbook seen",
		"generation", gb.Generation,
		"frontendReplicas", ptr.Deref(gb.Spec.Frontend.Replicas, 0),
		"redisFollowerReplicas", ptr.Deref(gb.Spec.Redis.FollowerReplicas, 0),
		"deleting", !gb.DeletionTimestamp.IsZero())
	return ctrl.Result{}, nil
}

// SetupWithManager registers the stub Reconciler with the manager.
func (r *StubReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return NewControllerBuilder(mgr, r.MaxRetryDelay).Complete(r)
}
