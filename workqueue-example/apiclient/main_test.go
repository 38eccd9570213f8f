package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// withOptimisticConcurrency makes the fake clientset do what the API server
// does with resourceVersion, which its object tracker does not: every write of
// a Deployment gives it a new resourceVersion, and an update that carries
// another one than the stored is refused with 409 Conflict.
func withOptimisticConcurrency(cs *fake.Clientset) {
	version := 0
	next := func() string { version++; return strconv.Itoa(version) }
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	cs.PrependReactor("*", "deployments", func(action clienttesting.Action) (bool, runtime.Object, error) {
		// By verb, not by type: an UpdateAction is a CreateAction too (both
		// carry an object).
		switch action.GetVerb() {
		case "create":
			obj, _ := meta.Accessor(action.(clienttesting.CreateAction).GetObject())
			obj.SetResourceVersion(next())
		case "update":
			obj, _ := meta.Accessor(action.(clienttesting.UpdateAction).GetObject())
			stored, err := cs.Tracker().Get(deployments, action.GetNamespace(), obj.GetName())
			if err != nil {
				return true, nil, err
			}
			if storedVersion := stored.(*appsv1.Deployment).ResourceVersion; obj.GetResourceVersion() != storedVersion {
				return true, nil, apierrors.NewConflict(deployments.GroupResource(), obj.GetName(),
					fmt.Errorf("the object has been modified: sent resourceVersion %s, stored %s", obj.GetResourceVersion(), storedVersion))
			}
			obj.SetResourceVersion(next())
		case "patch":
			name := action.(clienttesting.PatchAction).GetName()
			stored, err := cs.Tracker().Get(deployments, action.GetNamespace(), name)
			if err != nil {
				return true, nil, err
			}
			bumped := stored.(*appsv1.Deployment).DeepCopy()
			bumped.ResourceVersion = next()
			if err := cs.Tracker().Update(deployments, bumped, action.GetNamespace()); err != nil {
				return true, nil, err
			}
		}
		return false, nil, nil // the tracker does the rest
	})
}

// TestStepsSendTheirRequestsInOrder runs the demo on a fake clientset and
// checks every request it sends, in order: the create, the read, the second
// writer's patch between the first read-modify-write's read and its write, the
// conflicting update and the retry that reads again and succeeds, the list by
// label, the foreground delete and the reads of the wait. A step left out or
// moved fails it.
func TestStepsSendTheirRequestsInOrder(t *testing.T) {
	cs := fake.NewClientset()
	withOptimisticConcurrency(cs)
	var out bytes.Buffer
	d := &Demo{Client: cs, SecondWriter: cs, Namespace: "team-a", Name: "demo", Out: &out,
		Poll: time.Millisecond, Timeout: 5 * time.Second}

	if err := d.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}

	var got []string
	for _, a := range cs.Actions() {
		got = append(got, a.GetVerb()+" "+a.GetResource().Resource)
	}
	want := []string{
		"create deployments",                   // 1
		"get deployments",                      // 2
		"get deployments", "patch deployments", // 3, attempt 1: read, then the second writer
		"update deployments",                    //    its write: 409
		"get deployments", "update deployments", // 3, attempt 2: read again, write
		"list deployments",                                 // 4
		"delete deployments",                               // 5
		"get deployments", "list replicasets", "list pods", // the wait's first look: all gone
	}
	if !slices.Equal(got, want) {
		t.Errorf("requests sent:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	for _, a := range cs.Actions() {
		switch a := a.(type) {
		case clienttesting.DeleteAction:
			if p := a.GetDeleteOptions().PropagationPolicy; p == nil || *p != metav1.DeletePropagationForeground {
				t.Errorf("the delete's propagationPolicy is %v, want Foreground", p)
			}
		case clienttesting.ListAction:
			if sel := a.GetListRestrictions().Labels.String(); sel != InstanceLabel+"=demo" {
				t.Errorf("%s listed with label selector %q, want %s=demo", a.GetResource().Resource, sel, InstanceLabel)
			}
		}
	}
	if n := strings.Count(out.String(), "409 Conflict"); n != 1 {
		t.Errorf("the narration reports %d conflicts, want 1:\n%s", n, out.String())
	}
}

// Without a second writer nothing changes the Deployment between the read and
// the write, so the update succeeds at once: the conflict of the test above is
// the second writer's doing, not something the demo does to itself.
func TestWithoutASecondWriterTheUpdateDoesNotConflict(t *testing.T) {
	cs := fake.NewClientset()
	withOptimisticConcurrency(cs)
	d := &Demo{Client: cs, Namespace: "team-a", Name: "demo", Out: &bytes.Buffer{}, Poll: time.Millisecond, Timeout: 5 * time.Second}

	if err := d.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	updates := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == "update" {
			updates++
		}
	}
	if updates != 1 {
		t.Errorf("%d updates sent, want 1", updates)
	}
}

// A Deployment left from an earlier run is not overwritten: the demo stops at
// step 1 with an error that says how to remove it, and sends nothing else.
func TestExistingDeploymentStopsTheDemoNamingTheFix(t *testing.T) {
	existing := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "demo"}}
	cs := fake.NewClientset(existing)
	d := &Demo{Client: cs, SecondWriter: cs, Namespace: "team-a", Name: "demo", Out: &bytes.Buffer{}, Poll: time.Millisecond, Timeout: time.Second}

	err := d.Run(context.Background())

	if !apierrors.IsAlreadyExists(err) || !strings.Contains(err.Error(), "kubectl -n team-a delete deployment demo") {
		t.Errorf("Run = %v, want AlreadyExists naming the kubectl command that deletes it", err)
	}
	if n := len(cs.Actions()); n != 1 {
		t.Errorf("%d requests sent, want only the create", n)
	}
}

func TestFlagsThatCannotWorkAreRefused(t *testing.T) {
	for _, tc := range []struct{ arg, wantNamed string }{{"--timeout=0s", "--timeout"}, {"extra", "extra"}} {
		if err := run(context.Background(), []string{tc.arg}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tc.wantNamed) {
			t.Errorf("run(%q) = %v, want an error naming %s", tc.arg, err, tc.wantNamed)
		}
	}
}
