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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// setObserved fills the Guestbook's status from its Deployments: the replica
// counts per component and the three conditions. meta.SetStatusCondition moves a
// condition's lastTransitionTime only when its status flips, so an unchanged
// world yields an unchanged status and no write.
func setObserved(gb *webappv1.Guestbook, deployments map[string]*appsv1.Deployment) {
	gb.Status.RedisLeader = componentStatus(deployments["redis-leader"])
	gb.Status.RedisFollower = componentStatus(deployments["redis-follower"])
	gb.Status.Frontend = componentStatus(deployments["frontend"])

	var unavailable, rolling, failing []string
	for _, name := range []string{"redis-leader", "redis-follower", "frontend"} {
		d := deployments[name]
		desired := ptr.Deref(d.Spec.Replicas, 1)
		if d.Status.AvailableReplicas < desired {
			unavailable = append(unavailable, name+" "+replicasText(d.Status.AvailableReplicas, desired)+" available")
		}
		if failure := deploymentFailure(d); failure != "" {
			failing = append(failing, failure)
		} else if rollingOut(d) {
			rolling = append(rolling, name)
		}
	}

	if len(unavailable) == 0 {
		setCondition(gb, webappv1.ConditionAvailable, metav1.ConditionTrue, "AllComponentsAvailable", "every component has all its replicas available")
	} else {
		setCondition(gb, webappv1.ConditionAvailable, metav1.ConditionFalse, "ComponentsUnavailable", strings.Join(unavailable, ", "))
	}
	switch {
	case len(failing) > 0:
		// A child that has given up is not rolling out: say which and why.
		message := strings.Join(failing, "; ")
		setCondition(gb, webappv1.ConditionProgressing, metav1.ConditionFalse, ReasonChildFailed, "see the Degraded condition")
		setCondition(gb, webappv1.ConditionDegraded, metav1.ConditionTrue, ReasonChildFailed, message)
		return
	case len(rolling) > 0 && childFailed(gb):
		// A child that failed and is still rolling out has not recovered: between
		// two failures its conditions can say nothing for a moment (on a real
		// kubelet ReplicaFailure goes before ProgressDeadlineExceeded comes), and
		// one failure is one Warning. Degraded stays as it is until the rollout
		// completes or a child's conditions say it failed again.
		return
	case len(rolling) == 0:
		setCondition(gb, webappv1.ConditionProgressing, metav1.ConditionFalse, "RolloutComplete", "every component runs its current spec")
	default:
		setCondition(gb, webappv1.ConditionProgressing, metav1.ConditionTrue, "RollingOut", "rolling out: "+strings.Join(rolling, ", "))
	}
	setCondition(gb, webappv1.ConditionDegraded, metav1.ConditionFalse, "AsExpected", "the operator can bring the Guestbook to its spec")
}

// childFailed reports whether the Guestbook's status says a child Deployment
// failed: Degraded True with reason ReasonChildFailed.
func childFailed(gb *webappv1.Guestbook) bool {
	c := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionDegraded)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == ReasonChildFailed
}

// deploymentFailure returns what a Deployment's own conditions say is wrong
// with it, naming it ("Deployment shop-frontend: ProgressDeadlineExceeded: ..."),
// or "" when they say nothing is. Its replica counts cannot tell a rollout that
// is slow from one that has stopped; the Deployment controller can, and says so
// in two conditions: Progressing False with reason ProgressDeadlineExceeded
// (spec.progressDeadlineSeconds passed without progress) and ReplicaFailure True
// (a ReplicaSet cannot create its Pods: a quota, an admission refusal). The
// conditions of a spec the Deployment controller has not yet seen
// (status.observedGeneration behind) are about the old one, and ignored, as
// `kubectl rollout status` does.
func deploymentFailure(d *appsv1.Deployment) string {
	if d.Status.ObservedGeneration < d.Generation {
		return ""
	}
	var causes []string
	for _, c := range d.Status.Conditions {
		switch {
		case c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded",
			c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue:
			causes = append(causes, fmt.Sprintf("%s (%s): %s", c.Type, c.Reason, c.Message))
		}
	}
	if len(causes) == 0 {
		return ""
	}
	return fmt.Sprintf("Deployment %s: %s", d.Name, strings.Join(causes, "; "))
}

// forgetComponent zeroes the replica counts of the component whose child of
// kind and name is not the Guestbook's (a conflict, or one going away), so the
// status does not report Pods of a Deployment the Guestbook does not control.
// A Service changes no count.
func forgetComponent(gb *webappv1.Guestbook, kind, name string) {
	if kind != "Deployment" {
		return
	}
	switch name {
	case gb.Name + webappv1.FrontendSuffix:
		gb.Status.Frontend = webappv1.ComponentStatus{}
	case gb.Name + webappv1.RedisLeaderSuffix:
		gb.Status.RedisLeader = webappv1.ComponentStatus{}
	case gb.Name + webappv1.RedisFollowerSuffix:
		gb.Status.RedisFollower = webappv1.ComponentStatus{}
	}
}

// setBlocked records that the Reconciler cannot bring the Guestbook to its spec,
// for reason (a CamelCase word) and message.
func setBlocked(gb *webappv1.Guestbook, reason, message string) {
	setCondition(gb, webappv1.ConditionDegraded, metav1.ConditionTrue, reason, message)
	setCondition(gb, webappv1.ConditionAvailable, metav1.ConditionFalse, reason, "see the Degraded condition")
	setCondition(gb, webappv1.ConditionProgressing, metav1.ConditionFalse, reason, "see the Degraded condition")
}

// setWaiting records that the Reconciler is waiting for something that will
// happen without anyone's help (reason, message): Progressing True, Available
// False, and Degraded False, since nothing is wrong.
func setWaiting(gb *webappv1.Guestbook, reason, message string) {
	setCondition(gb, webappv1.ConditionProgressing, metav1.ConditionTrue, reason, message)
	setCondition(gb, webappv1.ConditionAvailable, metav1.ConditionFalse, reason, "see the Progressing condition")
	setCondition(gb, webappv1.ConditionDegraded, metav1.ConditionFalse, "AsExpected", "the operator can bring the Guestbook to its spec")
}

func setCondition(gb *webappv1.Guestbook, conditionType string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&gb.Status.Conditions, metav1.Condition{
		Type:               conditionType,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: gb.Generation,
	})
}

// componentStatus is what a Deployment says about its replicas.
func componentStatus(d *appsv1.Deployment) webappv1.ComponentStatus {
	return webappv1.ComponentStatus{
		Replicas:          ptr.Deref(d.Spec.Replicas, 1),
		AvailableReplicas: d.Status.AvailableReplicas,
	}
}

// rollingOut reports whether a Deployment has not yet finished applying its
// current spec (the same test `kubectl rollout status` makes).
func rollingOut(d *appsv1.Deployment) bool {
	desired := ptr.Deref(d.Spec.Replicas, 1)
	return d.Status.ObservedGeneration < d.Generation ||
		d.Status.UpdatedReplicas < desired ||
		d.Status.Replicas > d.Status.UpdatedReplicas ||
		d.Status.AvailableReplicas < d.Status.UpdatedReplicas
}

// updateStatus writes the Guestbook's status through the status subresource if
// it differs from old, then records an event for each condition that flipped.
func (r *GuestbookReconciler) updateStatus(ctx context.Context, gb *webappv1.Guestbook, old *webappv1.GuestbookStatus) error {
	if equality.Semantic.DeepEqual(old, &gb.Status) {
		return nil
	}
	if err := r.Status().Update(ctx, gb); err != nil {
		return ignoreConflictErr(ctx, fmt.Errorf("updating status: %w", err))
	}
	if goingAway, err := r.namespaceGoingAway(ctx, gb.Namespace); err != nil || goingAway {
		// No one is left to read an event there, and the API server would
		// refuse it. An error here only costs the events of this transition.
		return nil
	}
	r.recordTransitions(gb, old.Conditions)
	return nil
}

// namespaceGoingAway reports whether the namespace is being deleted (or is gone).
// The API server refuses new events there, and client-go's events.k8s.io
// recorder logs each refusal as an error (its older core/v1 recorder, in
// tools/record, treats the NamespaceTerminating cause as expected), so the
// Reconciler records none. It reads only the namespace's metadata, from the
// manager's cache: the first call starts a metadata-only informer on Namespaces.
func (r *GuestbookReconciler) namespaceGoingAway(ctx context.Context, name string) (bool, error) {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := r.Get(ctx, types.NamespacedName{Name: name}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("reading namespace %s: %w", name, err)
	}
	return !ns.DeletionTimestamp.IsZero(), nil
}

// recordTransitions records one event per real transition: Degraded turning True
// (a Warning naming the reason) or back to False, and Available turning True or
// False while the Guestbook is not degraded (Degraded already said why).
func (r *GuestbookReconciler) recordTransitions(gb *webappv1.Guestbook, old []metav1.Condition) {
	flipped := func(t string) (now *metav1.Condition, wasSet bool) {
		now = meta.FindStatusCondition(gb.Status.Conditions, t)
		before := meta.FindStatusCondition(old, t)
		if now == nil || (before != nil && before.Status == now.Status) {
			return nil, false
		}
		return now, before != nil
	}
	degraded := meta.IsStatusConditionTrue(gb.Status.Conditions, webappv1.ConditionDegraded)
	if c, wasSet := flipped(webappv1.ConditionDegraded); c != nil {
		switch {
		case degraded:
			r.Recorder.Eventf(gb, nil, corev1.EventTypeWarning, c.Reason, "Reconcile", "%s", c.Message)
		case wasSet:
			r.Recorder.Eventf(gb, nil, corev1.EventTypeNormal, ReasonRecovered, "Reconcile", "the Guestbook is no longer degraded")
		}
	}
	if c, wasSet := flipped(webappv1.ConditionAvailable); c != nil && !degraded {
		switch {
		case c.Status == metav1.ConditionTrue:
			r.Recorder.Eventf(gb, nil, corev1.EventTypeNormal, ReasonAvailable, "Reconcile", "every component is available")
		case wasSet:
			r.Recorder.Eventf(gb, nil, corev1.EventTypeWarning, ReasonUnavailable, "Reconcile", "%s", c.Message)
		}
	}
}
