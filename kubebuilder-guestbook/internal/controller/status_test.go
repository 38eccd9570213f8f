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
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// TestOneChildFailureIsOneDegradedTransition (child-failure-surfaces.md, on a
// real kubelet): a frontend whose ReplicaSet cannot create its Pods (a quota)
// reports ReplicaFailure, then, for a moment, nothing, then
// ProgressDeadlineExceeded. The Guestbook turns Degraded once and stays so
// while the frontend still rolls out, so it records one Warning; it recovers
// when the rollout completes.
func TestOneChildFailureIsOneDegradedTransition(t *testing.T) {
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Name: "shop", Generation: 1}}
	healthy := func(name string) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "shop-" + name, Generation: 2},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
			Status:     appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2},
		}
	}
	frontend := healthy("frontend")
	deployments := map[string]*appsv1.Deployment{"redis-leader": healthy("redis-leader"), "redis-follower": healthy("redis-follower"), "frontend": frontend}
	// Rolling out a new spec, one new Pod refused by the quota.
	frontend.Status.UpdatedReplicas = 1
	frontend.Status.Replicas = 3

	var flips []metav1.ConditionStatus
	step := func(what string, conditions ...appsv1.DeploymentCondition) {
		t.Helper()
		frontend.Status.Conditions = conditions
		before := meta.IsStatusConditionTrue(gb.Status.Conditions, webappv1.ConditionDegraded)
		setObserved(gb, deployments)
		c := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionDegraded)
		if c == nil {
			t.Fatalf("%s: no Degraded condition", what)
		}
		if now := c.Status == metav1.ConditionTrue; now != before {
			flips = append(flips, c.Status)
		}
	}
	step("rolling out")
	step("the quota refuses a Pod", appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate"})
	step("ReplicaFailure gone, no deadline yet", appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated"})
	step("the progress deadline passed", appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"})
	if len(flips) != 1 || flips[0] != metav1.ConditionTrue {
		t.Fatalf("Degraded flipped %v while one child failure went on; want once, to True (each flip to True is a Warning)", flips)
	}
	// The quota goes: the rollout completes.
	frontend.Status = healthy("frontend").Status
	step("rolled out", appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"})
	if len(flips) != 2 || flips[1] != metav1.ConditionFalse {
		t.Fatalf("Degraded flipped %v; want True, then False once the rollout completed", flips)
	}
}
