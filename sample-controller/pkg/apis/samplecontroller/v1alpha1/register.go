package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/controller-kit/controller-kit/sample-controller/pkg/apis/samplecontroller"
)

// SchemeGroupVersion is the group and version of every type in this package.
// The generated clientset and informers refer to it by this name.
var SchemeGroupVersion = schema.GroupVersion{Group: samplecontroller.GroupName, Version: "v1alpha1"}

// Resource returns the group-qualified resource for an unqualified one, for
// example "foos" -> foos.samplecontroller.k8s.io. The generated listers use it
// to build NotFound errors.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder collects the functions that register this package's types.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme registers Foo and FooList with a scheme; the generated
	// clientset calls it, and so does main to let the event recorder name Foos.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes maps the Go types to their kinds in this group version.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &Foo{}, &FooList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
