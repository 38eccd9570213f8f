// Package v1alpha1 is version v1alpha1 of the samplecontroller.k8s.io API: the Foo kind.
//
// The comment tags below drive the generators. deepcopy-gen writes
// zz_generated.deepcopy.go for every type of the package; groupName tells
// client-gen and controller-gen which API group the package serves.
//
// +k8s:deepcopy-gen=package
// +groupName=samplecontroller.k8s.io
package v1alpha1
