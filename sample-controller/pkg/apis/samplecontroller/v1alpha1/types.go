package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Two families of comment tags live on these types:
//   - +genclient and +k8s:deepcopy-gen are read by k8s.io/code-generator
//     (clientset, listers, informers, DeepCopy methods);
//   - +kubebuilder:... are read by controller-gen, which writes the CRD's
//     OpenAPI schema, CEL rules, status subresource and printer columns
//     (config/crd/samplecontroller.k8s.io_foos.yaml).
// Compare with k8s.io/sample-controller/pkg/apis/samplecontroller/v1alpha1/types.go,
// whose CRD is written by hand and has no validation.
//
// The group samplecontroller.k8s.io ends in .k8s.io, a suffix the API server
// reserves for APIs reviewed by the Kubernetes project: a CRD in it must carry
// the api-approved.kubernetes.io annotation, here saying it is not approved.
// Your own APIs belong in a group of your own domain instead.

// Foo asks for a Deployment named spec.deploymentName with spec.replicas
// replicas in the Foo's namespace. The controller creates that Deployment, owns
// it (so deleting the Foo deletes it), keeps its replica count, and reports the
// Deployment's available replicas in status.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, experimental-only"
// +kubebuilder:printcolumn:name="Deployment",type=string,JSONPath=`.spec.deploymentName`
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Foo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FooSpec   `json:"spec"`
	Status FooStatus `json:"status,omitempty"`
}

// FooSpec is what the user asks for.
type FooSpec struct {
	// DeploymentName is the name of the Deployment this Foo owns, in the Foo's
	// namespace. It is a DNS-1123 label (lowercase letters, digits and '-', at
	// most 63 characters) because it is also used as a label value on the pods.
	// It cannot be changed after creation: delete the Foo and create a new one
	// to use another name.
	//
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="deploymentName is immutable; delete the Foo and create a new one to use another name"
	DeploymentName string `json:"deploymentName"`

	// Replicas is the number of pods the Deployment should run, 0 to 100.
	// Left out, it is 1.
	//
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Replicas *int32 `json:"replicas,omitempty"`
}

// FooStatus is what the controller last observed. Only the controller writes
// it, through the status subresource.
type FooStatus struct {
	// AvailableReplicas is the owned Deployment's status.availableReplicas.
	//
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`

	// ObservedGeneration is the metadata.generation of the Foo spec the
	// controller last acted on. When it equals metadata.generation, the status
	// describes the current spec.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// FooList is a list of Foos, as returned by a list call.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type FooList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`

	Items []Foo `json:"items"`
}
