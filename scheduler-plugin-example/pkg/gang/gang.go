// Package gang is lesson 8's Permit plugin, Gang, in two versions that
// register under the same name: the reference (Gang), which holds the Pods of
// one group at the Permit point until both Pods of the group have a node, then
// lets them through together, and the stub (Stub), which lets every Pod
// through at once, the learner's starting point for exercise 4.
//
// Permit is the last point of the scheduling cycle: the Pod already has a node
// and holds its place there (Reserve ran), but it is not bound yet. A Permit
// plugin answers Success (bind it), Unschedulable (give the place back), or Wait
// with a timeout: the binding cycle then blocks in the framework's WaitOnPermit
// until a plugin allows the Pod (WaitingPod.Allow) or rejects it, or the
// timeout rejects it. This is how a gang scheduler (the scheduler-plugins
// project's Coscheduling, a gang of any size) keeps a group from starting half
// placed.
package gang

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

const (
	// Name is the plugin's name: what app.WithPlugin registers and what a
	// profile's plugins section names at permit.
	Name = "Gang"
	// GroupLabel is the label by which a Pod joins a gang, such as
	// gang.controller-kit.dev/group: pair. Two Pods of one namespace with the
	// same value are one gang. A Pod without it is no gang's and is never held.
	GroupLabel = "gang.controller-kit.dev/group"
	// Size is how many Pods make a gang: two, a gang of two.
	Size = 2
	// PermitTimeout is how long a Pod of a gang waits at Permit for the rest of
	// its gang. After it, the framework rejects the Pod ("rejected due to
	// timeout after waiting 10s at plugin Gang"), gives its node back, and the
	// Pod goes back to the scheduling queue, Unschedulable, with that reason in
	// its FailedScheduling Event.
	PermitTimeout = 10 * time.Second
)

// Group returns the gang pod belongs to (its GroupLabel), or "" for none.
func Group(pod *v1.Pod) string {
	return pod.Labels[GroupLabel]
}

// SameGang reports whether a and b are two Pods of one gang: the same
// namespace, the same non-empty GroupLabel, and not the same Pod.
func SameGang(a, b *v1.Pod) bool {
	return a.UID != b.UID && a.Namespace == b.Namespace && Group(a) != "" && Group(a) == Group(b)
}
