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

// The subtests of TestGuestbookOperator about what the Reconciler reports in
// the Guestbook's conditions: Degraded for what it cannot do (a name that
// cannot name the children, a child name already taken), Progressing while the
// Deployments roll out. The envtest suite (internal/controller) checks the
// reference's own details; these hold any Reconciler to what a user sees.

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/controller-kit/controller-kit/test/kittest"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// unusableNameIsDegradedWithoutChildren: a Guestbook named my.guestbook (a
// valid object name, but a Service name is a DNS-1035 label: no dots) with the
// webhook off, as the suite runs the manager.
func unusableNameIsDegradedWithoutChildren(t *testing.T, c client.Client, cs kubernetes.Interface) {
	ns := kittest.Namespace(t, cs, "guestbook")
	const name = "my.guestbook"
	createGuestbook(t, c, ns, name, 1)

	waitCondition(t, c, ns, name, webappv1.ConditionDegraded, metav1.ConditionTrue, "InvalidName")
	waitEvent(t, c, ns, name, corev1.EventTypeWarning, "InvalidName")

	// The status is written once the Reconciler has decided; a Reconciler that
	// created children first has created them by now.
	var deployments appsv1.DeploymentList
	var services corev1.ServiceList
	if err := c.List(context.Background(), &deployments, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := c.List(context.Background(), &services, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var children []string
	for _, d := range deployments.Items {
		children = append(children, "Deployment "+d.Name)
	}
	for _, s := range services.Items {
		children = append(children, "Service "+s.Name)
	}
	if len(children) > 0 {
		t.Errorf("Guestbook %s is Degraded with reason InvalidName, yet its namespace has children: %s; want none (check the name before creating anything)",
			name, strings.Join(children, ", "))
	}
}

// conditionsFollowTheRollout watches every version of the Guestbook the API
// server stores, from its creation on: polling could miss a Progressing=True
// that lasts a second.
func conditionsFollowTheRollout(t *testing.T, c client.Client, cs kubernetes.Interface) {
	ns := kittest.Namespace(t, cs, "guestbook")
	wc, err := client.NewWithWatch(kittest.Config(t), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	watcher, err := wc.Watch(ctx, &webappv1.GuestbookList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatalf("watching the Guestbooks of %s: %v", ns, err)
	}
	defer watcher.Stop()
	createGuestbook(t, c, ns, "shop", 2)

	var history []string // the conditions of each stored version, repeats left out
	progressing := false
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %s waiting for Available=True, Progressing=False (RolloutComplete) and Degraded=False (AsExpected) on Guestbook %s/shop; its conditions, version by version:\n  %s",
				deadline, ns, strings.Join(history, "\n  "))
		case ev, ok := <-watcher.ResultChan():
			if !ok {
				t.Fatalf("the watch of Guestbook %s/shop ended early; its conditions so far:\n  %s", ns, strings.Join(history, "\n  "))
			}
			gb, ok := ev.Object.(*webappv1.Guestbook)
			if !ok {
				continue
			}
			if seen := conditionsText(gb.Status.Conditions); len(history) == 0 || history[len(history)-1] != seen {
				history = append(history, seen)
			}
			if meta.IsStatusConditionTrue(gb.Status.Conditions, webappv1.ConditionProgressing) {
				progressing = true
			}
			if !settled(gb, 2) {
				continue
			}
			if !progressing {
				t.Errorf("Guestbook %s/shop settled without ever reporting Progressing=True while its Deployments rolled out; its conditions, version by version:\n  %s",
					ns, strings.Join(history, "\n  "))
			}
			return
		}
	}
}

// settled reports whether the Guestbook is Available with frontend available
// frontend Pods for its current generation, done rolling out and not degraded.
func settled(gb *webappv1.Guestbook, frontend int32) bool {
	available := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionAvailable)
	return available != nil && available.Status == metav1.ConditionTrue &&
		available.ObservedGeneration == gb.Generation &&
		gb.Status.Frontend.AvailableReplicas == frontend &&
		hasCondition(gb, webappv1.ConditionProgressing, metav1.ConditionFalse, "RolloutComplete") &&
		hasCondition(gb, webappv1.ConditionDegraded, metav1.ConditionFalse, "AsExpected")
}

// childNameTakenIsDegradedAndLeftAlone: a Deployment named like the
// Guestbook's frontend exists before the Guestbook, without an owner.
func childNameTakenIsDegradedAndLeftAlone(t *testing.T, c client.Client, cs kubernetes.Interface) {
	ns := kittest.Namespace(t, cs, "guestbook")
	labels := map[string]string{"app": "theirs"}
	theirs := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop" + webappv1.FrontendSuffix, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/theirs:v1"}}},
			},
		},
	}
	if err := c.Create(context.Background(), theirs); err != nil {
		t.Fatal(err)
	}
	createGuestbook(t, c, ns, "shop", 1)

	waitCondition(t, c, ns, "shop", webappv1.ConditionDegraded, metav1.ConditionTrue, "ChildConflict")

	var now appsv1.Deployment
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(theirs), &now); err != nil {
		t.Fatalf("the Deployment %s the Guestbook does not own: %v", theirs.Name, err)
	}
	var changed []string
	if now.Generation != theirs.Generation {
		changed = append(changed, fmt.Sprintf("its spec (generation %d -> %d, image %s)",
			theirs.Generation, now.Generation, now.Spec.Template.Spec.Containers[0].Image))
	}
	if !maps.Equal(now.Labels, theirs.Labels) {
		changed = append(changed, fmt.Sprintf("its labels (%v -> %v)", theirs.Labels, now.Labels))
	}
	for key, value := range now.Annotations {
		// The Deployment controller records its revisions in annotations of its own.
		if !strings.HasPrefix(key, "deployment.kubernetes.io/") && theirs.Annotations[key] != value {
			changed = append(changed, fmt.Sprintf("its annotation %s=%s", key, value))
		}
	}
	if len(now.OwnerReferences) > 0 {
		changed = append(changed, fmt.Sprintf("its owner references (%v)", now.OwnerReferences))
	}
	if len(changed) > 0 {
		t.Errorf("Deployment %s/%s, which the Guestbook does not control, was changed: %s; a child the Guestbook does not control must be left alone",
			ns, theirs.Name, strings.Join(changed, "; "))
	}
}

// waitCondition waits until the Guestbook's condition conditionType has status
// and reason, and logs the conditions it last saw when it gives up.
func waitCondition(t *testing.T, c client.Client, ns, name, conditionType string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	var seen string
	defer func() {
		if t.Failed() {
			t.Logf("last seen conditions of Guestbook %s/%s: %s", ns, name, seen)
		}
	}()
	kittest.Eventually(t, deadline, fmt.Sprintf("%s=%s with reason %s on Guestbook %s", conditionType, status, reason, name),
		func(ctx context.Context) (bool, error) {
			gb, err := getGuestbook(ctx, c, ns, name)
			if err != nil {
				if ctx.Err() != nil {
					return false, nil
				}
				return false, err
			}
			seen = conditionsText(gb.Status.Conditions)
			return hasCondition(gb, conditionType, status, reason), nil
		})
}

// hasCondition reports whether the Guestbook's condition conditionType has
// status and reason.
func hasCondition(gb *webappv1.Guestbook, conditionType string, status metav1.ConditionStatus, reason string) bool {
	cond := meta.FindStatusCondition(gb.Status.Conditions, conditionType)
	return cond != nil && cond.Status == status && cond.Reason == reason
}

// conditionsText formats conditions on one line, as "Available=False
// (ComponentsUnavailable) Progressing=True (RollingOut)", or "no conditions".
func conditionsText(conditions []metav1.Condition) string {
	if len(conditions) == 0 {
		return "no conditions"
	}
	parts := make([]string, 0, len(conditions))
	for _, cond := range conditions {
		parts = append(parts, fmt.Sprintf("%s=%s (%s)", cond.Type, cond.Status, cond.Reason))
	}
	return strings.Join(parts, " ")
}

// waitEvent waits for an event of type eventType with reason on the Guestbook
// name in ns.
func waitEvent(t *testing.T, c client.Client, ns, name, eventType, reason string) {
	t.Helper()
	kittest.Eventually(t, deadline, fmt.Sprintf("a %s event with reason %s on Guestbook %s", eventType, reason, name),
		func(ctx context.Context) (bool, error) {
			var events corev1.EventList
			if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
				return false, err
			}
			for _, e := range events.Items {
				if e.Reason == reason && e.Type == eventType && e.InvolvedObject.Name == name {
					return true, nil
				}
			}
			return false, nil
		})
}
