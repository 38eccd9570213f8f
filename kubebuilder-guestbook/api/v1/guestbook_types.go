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

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The markers (// +kubebuilder:...) on these types are read by controller-gen:
// `make generate` turns them into the CRD's OpenAPI schema in
// config/crd/bases/webapp.controller-kit.dev_guestbooks.yaml.

// Images the defaulting webhook writes into a Guestbook that names none (and that
// the Reconciler falls back to when the operator runs without webhooks).
const (
	// DefaultFrontendImage is the guestbook PHP frontend from the Kubernetes examples.
	DefaultFrontendImage = "us-docker.pkg.dev/google-samples/containers/gke/gb-frontend:v5"
	// DefaultRedisImage is the Redis image of the leader and the followers.
	DefaultRedisImage = "docker.io/redis:6.0.5"
)

// GuestbookSpec is the desired state of a Guestbook: a PHP frontend in front of a
// Redis leader (writes) and Redis followers (reads).
type GuestbookSpec struct {
	// frontend is the web tier users talk to.
	// +kubebuilder:default={}
	// +optional
	Frontend FrontendSpec `json:"frontend,omitempty"`

	// redis is the storage tier: one leader and a number of read-only followers.
	// +kubebuilder:default={}
	// +optional
	Redis RedisSpec `json:"redis,omitempty"`
}

// FrontendSpec is the desired state of the frontend Deployment.
type FrontendSpec struct {
	// replicas is the number of frontend Pods.
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=50
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// image is the frontend container image. The defaulting webhook sets it to
	// DefaultFrontendImage when it is empty.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.endsWith(':latest')",message="pin an image tag: ':latest' may pull a different image on every Pod start"
	// +optional
	Image string `json:"image,omitempty"`
}

// RedisSpec is the desired state of the Redis leader and follower Deployments.
type RedisSpec struct {
	// followerReplicas is the number of read-only Redis followers (the leader is always one Pod).
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +optional
	FollowerReplicas *int32 `json:"followerReplicas,omitempty"`

	// image is the Redis container image of the leader and the followers. The
	// defaulting webhook sets it to DefaultRedisImage when it is empty.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.endsWith(':latest')",message="pin an image tag: ':latest' may pull a different image on every Pod start"
	// +optional
	Image string `json:"image,omitempty"`
}

// Condition types of a Guestbook, as Kubernetes API conventions name them.
const (
	// ConditionAvailable is True when every component has all its replicas available.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while a component rolls out (created, scaled or updated).
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the operator cannot bring the Guestbook to its
	// spec: an invalid spec, a child it does not own, or an API error.
	ConditionDegraded = "Degraded"
)

// ComponentStatus is what the operator last observed of one component's Deployment.
// Its fields have no omitempty: 0 Pods is an observation too, stored as 0, so
// the FRONTEND and FOLLOWERS printer columns show 0 instead of a blank.
type ComponentStatus struct {
	// replicas is the number of Pods the component should run.
	// +optional
	Replicas int32 `json:"replicas"`

	// availableReplicas is the number of the component's Pods that are available.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`
}

// GuestbookStatus is the observed state of a Guestbook.
type GuestbookStatus struct {
	// frontend is the observed state of the frontend Deployment.
	// +optional
	Frontend ComponentStatus `json:"frontend,omitempty"`

	// redisLeader is the observed state of the Redis leader Deployment.
	// +optional
	RedisLeader ComponentStatus `json:"redisLeader,omitempty"`

	// redisFollower is the observed state of the Redis follower Deployment.
	// +optional
	RedisFollower ComponentStatus `json:"redisFollower,omitempty"`

	// conditions are Available, Progressing and Degraded. Each records the
	// metadata.generation it was computed from in observedGeneration.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=gb
// +kubebuilder:printcolumn:name="Frontend",type=integer,JSONPath=`.status.frontend.availableReplicas`,description="Available frontend Pods"
// +kubebuilder:printcolumn:name="Followers",type=integer,JSONPath=`.status.redisFollower.availableReplicas`,description="Available Redis follower Pods"
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Guestbook is the Schema for the guestbooks API: the classic Kubernetes guestbook
// application, run by the operator in this project.
type Guestbook struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec defines the desired state of Guestbook
	// +required
	Spec GuestbookSpec `json:"spec"`

	// status defines the observed state of Guestbook
	// +optional
	Status GuestbookStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// GuestbookList contains a list of Guestbook
type GuestbookList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Guestbook `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &Guestbook{}, &GuestbookList{})
		return nil
	})
}
