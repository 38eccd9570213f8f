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
	"cmp"
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// component is one tier of the guestbook application: it becomes a Deployment
// and a Service of the same name.
type component struct {
	name     string // "frontend", "redis-leader" or "redis-follower"
	suffix   string // appended to the Guestbook's name to name the children
	replicas int32
	image    string
	args     []string
	env      []corev1.EnvVar
	portName string
	port     int32
}

// components returns the three components of a Guestbook, leader first.
func components(gb *webappv1.Guestbook) []component {
	redisImage := cmp.Or(gb.Spec.Redis.Image, webappv1.DefaultRedisImage)
	leaderService := gb.Name + webappv1.RedisLeaderSuffix
	return []component{{
		name: "redis-leader", suffix: webappv1.RedisLeaderSuffix,
		replicas: 1, image: redisImage,
		portName: "redis", port: 6379,
	}, {
		name: "redis-follower", suffix: webappv1.RedisFollowerSuffix,
		replicas: ptr.Deref(gb.Spec.Redis.FollowerReplicas, 0), image: redisImage,
		// The followers replicate from the leader's Service.
		args:     []string{"--replicaof", leaderService, "6379"},
		portName: "redis", port: 6379,
	}, {
		name: "frontend", suffix: webappv1.FrontendSuffix,
		replicas: ptr.Deref(gb.Spec.Frontend.Replicas, 0),
		image:    cmp.Or(gb.Spec.Frontend.Image, webappv1.DefaultFrontendImage),
		// The PHP frontend writes to the leader and reads from the followers.
		env: []corev1.EnvVar{
			{Name: "GET_HOSTS_FROM", Value: "env"},
			{Name: "REDIS_LEADER_SERVICE_HOST", Value: leaderService},
			{Name: "REDIS_FOLLOWER_SERVICE_HOST", Value: gb.Name + webappv1.RedisFollowerSuffix},
		},
		portName: "http", port: 80,
	}}
}

// selector returns the labels that pick a component's Pods. They never change
// after the Deployment is created: a Deployment's selector is immutable.
func (c component) selector(gb *webappv1.Guestbook) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "guestbook",
		"app.kubernetes.io/instance":  gb.Name,
		"app.kubernetes.io/component": c.name,
	}
}

// labels returns the labels of a component's Deployment, Service and Pods.
func (c component) labels(gb *webappv1.Guestbook) map[string]string {
	l := c.selector(gb)
	l["app.kubernetes.io/managed-by"] = ControllerName
	return l
}

// ensureChildren creates or updates the Deployment and the Service of every
// component and returns the Deployments by component name.
func (r *GuestbookReconciler) ensureChildren(ctx context.Context, gb *webappv1.Guestbook) (map[string]*appsv1.Deployment, error) {
	deployments := make(map[string]*appsv1.Deployment, 3)
	for _, c := range components(gb) {
		meta := metav1.ObjectMeta{Name: gb.Name + c.suffix, Namespace: gb.Namespace}
		d := &appsv1.Deployment{ObjectMeta: meta}
		if err := r.ensureChild(ctx, gb, d, func() { setDeployment(d, gb, c) }); err != nil {
			return nil, err
		}
		deployments[c.name] = d
		s := &corev1.Service{ObjectMeta: meta}
		if err := r.ensureChild(ctx, gb, s, func() { setService(s, gb, c) }); err != nil {
			return nil, err
		}
	}
	return deployments, nil
}

// guestbookNameOf returns the name of the Guestbook a child's name belongs to:
// "shop" for "shop-frontend", "shop-redis-leader" or "shop-redis-follower".
func guestbookNameOf(child string) (string, bool) {
	for _, suffix := range []string{webappv1.FrontendSuffix, webappv1.RedisLeaderSuffix, webappv1.RedisFollowerSuffix} {
		if name, ok := strings.CutSuffix(child, suffix); ok && name != "" {
			return name, true
		}
	}
	return "", false
}

// ensureChild creates obj, or updates it if set changes any field the Reconciler
// owns. CreateOrUpdate reads obj from the cache and compares it before and after
// set, so an object already in shape costs no write. An object of the same name
// that this Guestbook does not control is left alone: the kit never adopts (it
// may be someone else's, and a removed owner reference is a person's decision).
// One that is going away (goingAway) is waited for; any other is a conflict.
func (r *GuestbookReconciler) ensureChild(ctx context.Context, gb *webappv1.Guestbook, obj client.Object, set func()) error {
	kind := kindOf(obj)
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, obj, func() error {
		if obj.GetUID() != "" && !metav1.IsControlledBy(obj, gb) {
			if why := goingAway(obj, gb); why != "" {
				return &goingAwayError{kind: kind, name: obj.GetName(), why: why}
			}
			return &notOwnedError{kind: kind, name: obj.GetName()}
		}
		set()
		return controllerutil.SetControllerReference(gb, obj, r.Scheme)
	})
	if err != nil {
		return err
	}
	switch op {
	case controllerutil.OperationResultCreated:
		r.Recorder.Eventf(gb, obj, corev1.EventTypeNormal, ReasonCreated, "Create", "Created %s %s", kind, obj.GetName())
	case controllerutil.OperationResultUpdated:
		r.Recorder.Eventf(gb, obj, corev1.EventTypeNormal, ReasonUpdated, "Update", "Updated %s %s to match the spec", kind, obj.GetName())
	}
	return nil
}

// setDeployment writes the fields the Reconciler owns into d and leaves every
// field the API server defaulted as it is; replacing whole structs would undo
// those defaults and make every pass an update.
func setDeployment(d *appsv1.Deployment, gb *webappv1.Guestbook, c component) {
	d.Labels = withLabels(d.Labels, c.labels(gb))
	d.Spec.Replicas = ptr.To(c.replicas)
	if d.Spec.Selector == nil {
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: c.selector(gb)}
	}
	d.Spec.Template.Labels = withLabels(d.Spec.Template.Labels, c.labels(gb))

	containers := d.Spec.Template.Spec.Containers
	if len(containers) != 1 || containers[0].Name != c.name {
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: c.name}}
	}
	ct := &d.Spec.Template.Spec.Containers[0]
	ct.Image = c.image
	ct.Args = c.args
	ct.Env = c.env
	ct.Ports = []corev1.ContainerPort{{Name: c.portName, ContainerPort: c.port, Protocol: corev1.ProtocolTCP}}
	ct.Resources.Requests = corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("100m"),
		corev1.ResourceMemory: resource.MustParse("100Mi"),
	}
}

// setService writes the fields the Reconciler owns into s: its labels, selector
// and port. Every port field the API server would default is set explicitly;
// the one it assigns, nodePort (when someone made the Service a NodePort or
// LoadBalancer), is kept. The rest of the spec (type, clusterIP, ipFamilies,
// sessionAffinity, ...) is the API server's or the user's: the Reconciler never
// sets it, so a Service switched to NodePort by hand stays one.
func setService(s *corev1.Service, gb *webappv1.Guestbook, c component) {
	s.Labels = withLabels(s.Labels, c.labels(gb))
	s.Spec.Selector = c.selector(gb)
	var nodePort int32
	for _, p := range s.Spec.Ports {
		if p.Name == c.portName {
			nodePort = p.NodePort
		}
	}
	s.Spec.Ports = []corev1.ServicePort{{
		Name:       c.portName,
		Protocol:   corev1.ProtocolTCP,
		Port:       c.port,
		TargetPort: intstr.FromString(c.portName),
		NodePort:   nodePort,
	}}
}

// withLabels returns have with every label of want set; other labels are kept.
func withLabels(have, want map[string]string) map[string]string {
	if have == nil {
		have = make(map[string]string, len(want))
	}
	maps.Copy(have, want)
	return have
}

// notOwnedError reports a child name taken by an object the Guestbook does not control.
type notOwnedError struct {
	kind, name string
}

// Error says which child is in the way and what the user can do about it.
func (e *notOwnedError) Error() string {
	return fmt.Sprintf("%s %s exists and is not controlled by this Guestbook; delete or rename it", e.kind, e.name)
}

// goingAway says why obj, a child-named object this Guestbook does not control,
// is on its way out, or returns "" when it is not: one on its way out is waited
// for, any other is a conflict. An object is on its way out when its
// deletionTimestamp is set (it is being deleted, and a finalizer holds it for
// now), or when its controller is an earlier Guestbook of the same name, one
// with another UID: the Guestbook was deleted and created again under its name
// (kubectl replace --force, a GitOps tool syncing again), and the garbage
// collector deletes what the old one owned. That owner reference must be its
// only one, or the collector would keep the object. The name alone cannot tell
// an old child from a stranger's object; the owner's UID and the child's
// deletionTimestamp can.
func goingAway(obj client.Object, gb *webappv1.Guestbook) string {
	if !obj.GetDeletionTimestamp().IsZero() {
		return "it is being deleted"
	}
	refs := obj.GetOwnerReferences()
	if len(refs) != 1 {
		return ""
	}
	ref := refs[0]
	if ptr.Deref(ref.Controller, false) && ref.Kind == "Guestbook" &&
		ref.APIVersion == webappv1.GroupVersion.String() && ref.Name == gb.Name && ref.UID != gb.UID {
		return fmt.Sprintf("it belongs to a deleted Guestbook of the same name (uid %s), and the garbage collector deletes it", ref.UID)
	}
	return ""
}

// goingAwayError reports a child name still held by an object that is going
// away (goingAway): the Guestbook waits for it to be gone, then creates its own.
type goingAwayError struct {
	kind, name, why string
}

// Error names the child in the way and why it will soon be gone.
func (e *goingAwayError) Error() string {
	return fmt.Sprintf("waiting for %s %s to be gone: %s", e.kind, e.name, e.why)
}

// kindOf names the kind of a child for messages (typed objects read from the
// cache carry no TypeMeta).
func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *appsv1.Deployment:
		return "Deployment"
	case *corev1.Service:
		return "Service"
	}
	return fmt.Sprintf("%T", obj)
}

// replicasText formats available/desired replicas for condition messages.
func replicasText(available, desired int32) string {
	return strconv.Itoa(int(available)) + "/" + strconv.Itoa(int(desired))
}
