// Package zonespread is lesson 8's scheduling plugin, ZoneSpread, in two
// versions that register under the same name: the reference (ZoneSpread), which
// keeps a Pod to the nodes of the zone it asks for and spreads one workload's
// Pods over them, and the stub (Stub), which logs what it is asked and lets every
// node through, the learner's starting point.
//
// A plugin is a value that implements some of the extension points of
// k8s.io/kube-scheduler/framework (FilterPlugin, ScorePlugin, ...): the
// framework finds out which by type assertions when it builds a profile, and
// calls each at its point of the scheduling cycle. main.go registers the
// factory --reconciler picks (app.WithPlugin); a profile of the scheduler's
// configuration (config/scheduler-config.yaml) turns the plugin on.
package zonespread

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	// Name is the plugin's name: what app.WithPlugin registers and what a
	// profile's plugins section names.
	Name = "ZoneSpread"
	// ZoneAnnotation is the annotation by which a Pod asks for a zone, such as
	// zonespread.controller-kit.dev/zone: zone-a. A Pod without it may run in any
	// zone.
	ZoneAnnotation = "zonespread.controller-kit.dev/zone"
	// ZoneLabel is the Node label that says a node's zone: the well-known label
	// topology.kubernetes.io/zone, which clouds set on their nodes.
	ZoneLabel = v1.LabelTopologyZone
)

// RequestedZone returns the zone pod asks for (its ZoneAnnotation), or "" when
// it asks for none.
func RequestedZone(pod *v1.Pod) string {
	return pod.Annotations[ZoneAnnotation]
}

// Workload returns the UID of the object that controls pod (its owner
// reference with controller: true, such as a ReplicaSet), which is what makes
// Pods one workload here, or "" for a Pod that no controller owns.
func Workload(pod *v1.Pod) types.UID {
	for _, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			return ref.UID
		}
	}
	return ""
}
