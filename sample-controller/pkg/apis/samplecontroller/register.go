// Package samplecontroller holds the API group name shared by every version of
// the Foo API. Compare with k8s.io/sample-controller/pkg/apis/samplecontroller.
package samplecontroller

// GroupName is the API group of Foo. It is the same as upstream sample-controller's,
// so upstream documentation and kubectl habits carry over.
const GroupName = "samplecontroller.k8s.io"
