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
	"context"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
	"github.com/controller-kit/controller-kit/kubebuilder-guestbook/internal/testenv"
)

// Fuzz targets for the pure parts of the Reconciler: the builders of the
// desired children (children.go) and the status computation (status.go). They
// need no API server. Run one with
//
//	go test -run='^$' -fuzz='^FuzzChildren$' -fuzztime=10s ./internal/controller
//
// or all of the kit's with `make fuzz` at its root. The f.Add seeds run as
// ordinary tests on every `go test`; the case files they come from are in
// /work/shared/cases. TestBuiltObjectsPassServerSideDryRun sends the children
// FuzzChildren's seeds build to a real API server.

// onlyFuzzTargets reports whether this test binary runs fuzz targets only: as
// a worker of `go test -fuzz` (which runs nothing else), or with a -run pattern
// that selects no Test function (-run='^$' as `make fuzz` passes, or -run='^Fuzz').
// TestMain then skips envtest: the fuzz targets need no API server, and each
// fuzz worker would otherwise start one of its own.
func onlyFuzzTargets() bool {
	flag.Parse()
	if flag.Lookup("test.fuzzworker").Value.String() == "true" {
		return true
	}
	run := flag.Lookup("test.run").Value.String()
	return run == "^$" || strings.HasPrefix(run, "^Fuzz")
}

// guestbookSeed is one input of FuzzChildren: a Guestbook (guestbook), the
// older spec its stored children were built from (oldFrontendImage,
// oldFrontendReplicas) and the nodePort of a Service switched to NodePort by
// hand (0: left a ClusterIP Service), and where it comes from (origin: a case
// file in /work/shared/cases, or the limit it probes).
type guestbookSeed struct {
	origin                                          string
	name, namespace, uid, frontendImage, redisImage string
	hasFrontendReplicas                             bool // false: spec.frontend.replicas is missing
	frontendReplicas                                int32
	hasFollowerReplicas                             bool // false: spec.redis.followerReplicas is missing
	followerReplicas                                int32
	oldFrontendImage                                string
	oldFrontendReplicas, nodePort                   int32
}

// guestbook returns the Guestbook the seed describes.
func (s guestbookSeed) guestbook() *webappv1.Guestbook {
	gb := &webappv1.Guestbook{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.namespace, UID: types.UID(s.uid), Generation: 2},
		Spec: webappv1.GuestbookSpec{
			Frontend: webappv1.FrontendSpec{Image: s.frontendImage},
			Redis:    webappv1.RedisSpec{Image: s.redisImage},
		},
	}
	if s.hasFrontendReplicas {
		gb.Spec.Frontend.Replicas = &s.frontendReplicas
	}
	if s.hasFollowerReplicas {
		gb.Spec.Redis.FollowerReplicas = &s.followerReplicas
	}
	return gb
}

// guestbookSeeds are FuzzChildren's seeds (f.Add), and the Guestbooks
// TestBuiltObjectsPassServerSideDryRun sends the children of to a real API
// server: one table, so that the two cannot drift apart.
var guestbookSeeds = []guestbookSeed{
	// origin, name, namespace, uid, frontendImage, redisImage, hasFrontendReplicas, frontendReplicas,
	// hasFollowerReplicas, followerReplicas, oldFrontendImage, oldFrontendReplicas, nodePort
	{"the defaults", "shop", "default", "uid-1", "", "", true, 2, true, 2, "", 2, 0},
	{"zero-columns.md: 0 replicas", "shop", "default", "uid-1", "", "", true, 0, true, 0, "", 0, 0},
	{"server-assigned-fields.md: a Service switched to NodePort", "shop", "default", "uid-1", "", "", true, 2, true, 2, "", 2, 30080},
	{"missing replicas", "shop", "default", "uid-1", "", "", false, 0, false, 0, "", 2, 0},
	{"a spec change", "shop", "default", "uid-1", "gb:v6", "redis:7", true, 3, true, 1, "gb:v5", 2, 0},
	{"webhook-on-delete.md: an image with a space", "shop", "default", "uid-1", "", "docker.io/redis 6.0.5", true, 2, true, 2, "", 2, 0},
	{"image-tag.md: no tag, a digest", "shop", "default", "uid-1", "nginx", "redis@sha256:" + strings.Repeat("0", 64), true, 1, true, 1, "", 1, 0},
	{"image-tag.md: a registry port; the schema's maxima", "shop", "default", "uid-1", "localhost:5000/gb:v5", "", true, 50, true, 10, "", 2, 0},
	{"rename-and-invalid.md, input B: replicas out of bounds", "shop", "default", "uid-1", "", "", true, -1, true, 11, "", 2, 0},
	{"rename-and-invalid.md, input B: extreme replicas", "shop", "default", "uid-1", "", "", true, 2147483647, true, -2147483648, "", 2, 0},
	{"rename-and-invalid.md, input B: a dot", "my.shop", "default", "uid-1", "", "", true, 2, true, 2, "", 2, 0},
	{"rename-and-invalid.md, input B: a leading digit", "1st-shop", "default", "uid-1", "", "", true, 2, true, 2, "", 2, 0},
	{"rename-and-invalid.md, input B: an empty name", "", "default", "uid-1", "", "", true, 2, true, 2, "", 2, 0},
	{"the longest usable name (MaxNameLength)", strings.Repeat("g", webappv1.MaxNameLength), "default", "uid-1", "", "", true, 2, true, 2, "", 2, 0},
	{"one over MaxNameLength", strings.Repeat("g", webappv1.MaxNameLength+1), "default", "uid-1", "", "", true, 2, true, 2, "", 2, 0},
	{"63: the longest label", strings.Repeat("g", 63), strings.Repeat("n", 63), "uid-1", "", "", true, 2, true, 2, "", 2, 0},
	{"253: the longest object name", strings.Repeat("g", 253), "default", "uid-1", "", "", true, 2, true, 2, "", 2, 0},
}

// FuzzChildren checks, for any Guestbook and any stored children:
//   - components, setDeployment, setService and SetControllerReference never panic;
//   - when the Guestbook is one the Reconciler acts on (ValidateName and
//     ValidateSpec accept it, as do the CRD schema's bounds), each Deployment and
//     Service is one the API server accepts, by the rules checkable offline
//     (checkChildren): names, labels, a selector that matches the Pods, ports in
//     1..65535, a Service targetPort the container has, no nodePort on a new
//     Service, one controller owner reference with blockOwnerDeletion;
//   - guestbookNameOf maps each child's name back to the Guestbook;
//   - on children stored from an older spec and defaulted by the API server
//     (server-assigned-fields.md), the setters write the new spec, keep every
//     server-assigned field (nodePort of a NodePort Service, clusterIP, strategy,
//     ...), and a second pass changes nothing: CreateOrUpdate sends no write.
//
// Seeds (guestbookSeeds; TestBuiltObjectsPassServerSideDryRun sends the
// children of the accepted ones to a real API server):
//   - zero-columns.md: 0 frontend and 0 follower replicas;
//   - server-assigned-fields.md: the frontend Service switched to NodePort
//     (nodePort 30080) and stored children defaulted by the server;
//   - rename-and-invalid.md, input B: names and images the schema lets through
//     but the children cannot carry (a dot, 49 characters, a leading digit, an
//     image with a space), replicas beyond the schema's bounds, and the spec then
//     fixed (an image changed from an older one);
//   - webhook-on-delete.md: "docker.io/redis 6.0.5";
//   - missing fields: nil replicas, empty images (the Reconciler's fallbacks);
//   - names at the limits: MaxNameLength (48), 63, 253 characters;
//   - image-tag.md: images with a tag, a digest, no tag, a registry port.
func FuzzChildren(f *testing.F) {
	for _, s := range guestbookSeeds {
		f.Add(s.name, s.namespace, s.uid, s.frontendImage, s.redisImage, s.hasFrontendReplicas, s.frontendReplicas,
			s.hasFollowerReplicas, s.followerReplicas, s.oldFrontendImage, s.oldFrontendReplicas, s.nodePort)
	}

	scheme := runtime.NewScheme()
	if err := webappv1.AddToScheme(scheme); err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, name, namespace, uid, frontendImage, redisImage string,
		hasFrontendReplicas bool, frontendReplicas int32, hasFollowerReplicas bool, followerReplicas int32,
		oldFrontendImage string, oldFrontendReplicas int32, nodePort int32) {
		// The fuzzed input, as the Guestbook a seed would describe.
		gb := guestbookSeed{"", name, namespace, uid, frontendImage, redisImage, hasFrontendReplicas, frontendReplicas,
			hasFollowerReplicas, followerReplicas, oldFrontendImage, oldFrontendReplicas, nodePort}.guestbook()

		// The same Guestbook as it was before its frontend changed.
		old := gb.DeepCopy()
		old.Spec.Frontend.Image, old.Spec.Frontend.Replicas = oldFrontendImage, &oldFrontendReplicas
		oldComponents := components(old)

		accepted := actsOn(gb)
		for i, c := range components(gb) {
			childName := gb.Name + c.suffix
			d, s, err := newChildren(gb, c, scheme)
			if !accepted {
				continue // the Reconciler stops at ValidateName or ValidateSpec
			}
			if err != nil {
				t.Fatalf("SetControllerReference on %s: %v", childName, err)
			}
			for _, err := range checkChildren(gb, c, d, s) {
				t.Errorf("Guestbook %q with spec %+v: %v", gb.Name, gb.Spec, err)
			}
			if owner, ok := guestbookNameOf(childName); !ok || owner != gb.Name {
				t.Errorf("guestbookNameOf(%q) = %q, %v; want %q", childName, owner, ok, gb.Name)
			}

			// The same children as stored from the old spec, with everything the
			// API server fills in, then reconciled with the new spec: twice.
			storedD := asStoredDeployment(d, old, oldComponents[i])
			storedS := asStoredService(s, nodePort)
			setDeployment(storedD, gb, c)
			setService(storedS, gb, c)
			if !equality.Semantic.DeepEqual(storedD.Spec.Template.Spec.Containers[0].Image, d.Spec.Template.Spec.Containers[0].Image) ||
				!equality.Semantic.DeepEqual(storedD.Spec.Replicas, d.Spec.Replicas) {
				t.Errorf("setDeployment on a stored %s leaves image %q, replicas %v; want the spec's %q, %v", childName,
					storedD.Spec.Template.Spec.Containers[0].Image, ptr.Deref(storedD.Spec.Replicas, -1),
					d.Spec.Template.Spec.Containers[0].Image, ptr.Deref(d.Spec.Replicas, -1))
			}
			for _, err := range serverFieldsKept(storedD, storedS, nodePort) {
				t.Errorf("%s: %v", childName, err)
			}
			againD, againS := storedD.DeepCopy(), storedS.DeepCopy()
			setDeployment(againD, gb, c)
			setService(againS, gb, c)
			if !equality.Semantic.DeepEqual(storedD, againD) || !equality.Semantic.DeepEqual(storedS, againS) {
				t.Errorf("a second pass over %s changes it (CreateOrUpdate would write on every reconcile)", childName)
			}
		}
	})
}

// TestBuiltObjectsPassServerSideDryRun sends the Deployments and Services
// newChildren builds for each seed of FuzzChildren (guestbookSeeds) to a real
// kube-apiserver as a server-side dry run: the API server decodes, defaults,
// validates and admits each exactly as it would a create, then stores nothing.
// It proves, for the seeds, what the fuzz target can only check offline
// (checkChildren, with the subset of the API server's rules that apimachinery
// holds): every child the Reconciler would create for a Guestbook it acts on
// (actsOn) is one the API server accepts, with all of apps/v1's and core/v1's
// validation. For a seed it does not act on, the Reconciler creates nothing,
// and neither does the test: nothing is sent.
//
// Each seed's Guestbook is created first, in the seed's namespace, so that the
// children's owner references name a Guestbook that exists, by the UID the API
// server gave it, as when the Reconciler builds them; the Guestbook is deleted
// after, freeing its name for the next seed. The test starts an API server of
// its own, without the suite's manager: there, the Reconciler would create the
// same children as soon as the Guestbook exists, and a dry-run create of a name
// already taken is refused (AlreadyExists) before any validation.
func TestBuiltObjectsPassServerSideDryRun(t *testing.T) {
	env, err := testenv.NewEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	scheme, err := testenv.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	sent := 0
	for _, seed := range guestbookSeeds {
		gb := seed.guestbook()
		if !actsOn(gb) {
			why := "the CRD schema's bounds refuse it"
			if errs := append(webappv1.ValidateName(gb.Name), webappv1.ValidateSpec(&gb.Spec)...); len(errs) > 0 {
				why = errs.ToAggregate().Error()
			}
			t.Logf("seed %q: nothing sent, the Reconciler does not act on it: %s", seed.origin, why)
			continue
		}

		// The Guestbook as a user creates it, in its namespace: the API server
		// assigns its UID and generation. The children are built from the
		// seed's Guestbook with that UID, the seed's other fields as they are.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gb.Namespace}}
		if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("seed %q: creating namespace %s: %v", seed.origin, gb.Namespace, err)
		}
		owner := gb.DeepCopy()
		owner.UID, owner.Generation = "", 0
		if err := c.Create(ctx, owner); err != nil {
			t.Fatalf("seed %q: creating its Guestbook %s: %v", seed.origin, gb.Name, err)
		}
		gb.UID = owner.UID

		for _, comp := range components(gb) {
			d, s, err := newChildren(gb, comp, scheme)
			if err != nil {
				t.Fatalf("seed %q: SetControllerReference on %s: %v", seed.origin, d.Name, err)
			}
			for _, child := range []client.Object{d, s} {
				if err := c.Create(ctx, child, client.DryRunAll); err != nil {
					t.Errorf("seed %q: the API server refuses the %s %s: %v", seed.origin, kindOf(child), child.GetName(), err)
				}
				sent++
			}
		}

		if err := c.Delete(ctx, owner); err != nil {
			t.Fatalf("seed %q: deleting its Guestbook %s: %v", seed.origin, gb.Name, err)
		}
	}
	if sent == 0 {
		t.Fatal("the Reconciler acts on no seed: nothing was sent")
	}
	t.Logf("%d Deployments and Services sent as a dry run", sent)
}

// actsOn reports whether the Reconciler creates children for gb: the API server
// stored it (a valid namespace, a UID, the CRD schema's bounds), and ValidateName
// and ValidateSpec accept it, as the webhook and the Reconciler ask.
func actsOn(gb *webappv1.Guestbook) bool {
	inRange := func(p *int32, maximum int32) bool { return p == nil || (*p >= 0 && *p <= maximum) }
	schemaImage := func(image string) bool { return len(image) <= 512 && !strings.HasSuffix(image, ":latest") }
	return len(validation.IsDNS1123Label(gb.Namespace)) == 0 && gb.UID != "" &&
		inRange(gb.Spec.Frontend.Replicas, 50) && inRange(gb.Spec.Redis.FollowerReplicas, 10) &&
		schemaImage(gb.Spec.Frontend.Image) && schemaImage(gb.Spec.Redis.Image) &&
		len(webappv1.ValidateName(gb.Name)) == 0 && len(webappv1.ValidateSpec(&gb.Spec)) == 0
}

// newChildren returns the Deployment and the Service of component c as
// ensureChild creates them: named after the Guestbook, filled in by
// setDeployment and setService, with the Guestbook as controller owner. The
// error is SetControllerReference's.
func newChildren(gb *webappv1.Guestbook, c component, scheme *runtime.Scheme) (*appsv1.Deployment, *corev1.Service, error) {
	meta := metav1.ObjectMeta{Name: gb.Name + c.suffix, Namespace: gb.Namespace}
	d := &appsv1.Deployment{ObjectMeta: meta}
	setDeployment(d, gb, c)
	s := &corev1.Service{ObjectMeta: meta}
	setService(s, gb, c)
	return d, s, errors.Join(controllerutil.SetControllerReference(gb, d, scheme), controllerutil.SetControllerReference(gb, s, scheme))
}

// checkChildren returns what the API server would refuse in the new Deployment d
// and Service s of component c, checked with apimachinery's validation (the rules
// of k8s.io/kubernetes's apps and core validation that need no server), plus the
// kit's own promises.
func checkChildren(gb *webappv1.Guestbook, c component, d *appsv1.Deployment, s *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(d.Name) {
		errs = append(errs, field.Invalid(field.NewPath("deployment", "metadata", "name"), d.Name, msg))
	}
	for _, msg := range validation.IsDNS1035Label(s.Name) {
		errs = append(errs, field.Invalid(field.NewPath("service", "metadata", "name"), s.Name, msg))
	}
	for kind, obj := range map[string]metav1.Object{"deployment": d, "service": s} {
		errs = append(errs, metav1validation.ValidateLabels(obj.GetLabels(), field.NewPath(kind, "metadata", "labels"))...)
		errs = append(errs, checkOwner(gb, obj.GetOwnerReferences(), field.NewPath(kind, "metadata", "ownerReferences"))...)
	}

	spec := field.NewPath("deployment", "spec")
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 0 || *d.Spec.Replicas != c.replicas {
		errs = append(errs, field.Invalid(spec.Child("replicas"), d.Spec.Replicas, "want the component's replicas, >= 0"))
	}
	podLabels := labels.Set(d.Spec.Template.Labels)
	errs = append(errs, metav1validation.ValidateLabels(podLabels, spec.Child("template", "metadata", "labels"))...)
	errs = append(errs, checkSelector(d.Spec.Selector, podLabels, spec.Child("selector"))...)
	containers := d.Spec.Template.Spec.Containers
	if len(containers) != 1 {
		return append(errs, field.Invalid(spec.Child("template", "spec", "containers"), len(containers), "want one container"))
	}
	ct, ctPath := containers[0], spec.Child("template", "spec", "containers").Index(0)
	for _, msg := range validation.IsDNS1123Label(ct.Name) {
		errs = append(errs, field.Invalid(ctPath.Child("name"), ct.Name, msg))
	}
	if ct.Image == "" || strings.TrimSpace(ct.Image) != ct.Image {
		errs = append(errs, field.Invalid(ctPath.Child("image"), ct.Image, "empty, or surrounded by whitespace"))
	}
	for i, env := range ct.Env {
		for _, msg := range validation.IsEnvVarName(env.Name) {
			errs = append(errs, field.Invalid(ctPath.Child("env").Index(i).Child("name"), env.Name, msg))
		}
	}
	portNames := map[string]bool{}
	for i, p := range ct.Ports {
		errs = append(errs, checkPort(ctPath.Child("ports").Index(i), p.Name, p.ContainerPort)...)
		portNames[p.Name] = true
	}

	spec = field.NewPath("service", "spec")
	if s.Spec.Type != "" && s.Spec.Type != corev1.ServiceTypeClusterIP {
		errs = append(errs, field.Invalid(spec.Child("type"), s.Spec.Type, "the Reconciler never sets the type; want it left to the API server (ClusterIP)"))
	}
	if len(s.Spec.Selector) == 0 || !labels.SelectorFromSet(s.Spec.Selector).Matches(podLabels) {
		errs = append(errs, field.Invalid(spec.Child("selector"), s.Spec.Selector, "does not pick the Deployment's Pods"))
	}
	errs = append(errs, metav1validation.ValidateLabels(s.Spec.Selector, spec.Child("selector"))...)
	if len(s.Spec.Ports) == 0 {
		errs = append(errs, field.Required(spec.Child("ports"), "a ClusterIP Service needs a port"))
	}
	for i, p := range s.Spec.Ports {
		path := spec.Child("ports").Index(i)
		errs = append(errs, checkPort(path, p.Name, p.Port)...)
		if p.TargetPort.Type != intstr.String || !portNames[p.TargetPort.StrVal] {
			errs = append(errs, field.Invalid(path.Child("targetPort"), p.TargetPort.String(), "not a named port of the container"))
		}
		if p.NodePort != 0 { // server-assigned-fields.md: only the API server assigns one, for NodePort and LoadBalancer
			errs = append(errs, field.Forbidden(path.Child("nodePort"), "set on a new ClusterIP Service"))
		}
	}
	return errs
}

// checkOwner wants exactly one controller owner reference, to gb, with
// blockOwnerDeletion (rbac.md: the Deployment is created with it).
func checkOwner(gb *webappv1.Guestbook, refs []metav1.OwnerReference, path *field.Path) field.ErrorList {
	var controllers []metav1.OwnerReference
	for _, ref := range refs {
		if ptr.Deref(ref.Controller, false) {
			controllers = append(controllers, ref)
		}
	}
	if len(controllers) != 1 {
		return field.ErrorList{field.Invalid(path, len(controllers), "want exactly one controller reference")}
	}
	ref := controllers[0]
	if ref.APIVersion != webappv1.GroupVersion.String() || ref.Kind != "Guestbook" || ref.Name != gb.Name ||
		ref.UID != gb.UID || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		return field.ErrorList{field.Invalid(path, ref, "want the Guestbook as controller, with blockOwnerDeletion")}
	}
	return nil
}

// checkSelector wants a valid, non-empty selector that matches the Pods' labels.
func checkSelector(selector *metav1.LabelSelector, podLabels labels.Set, path *field.Path) field.ErrorList {
	if selector == nil || len(selector.MatchLabels)+len(selector.MatchExpressions) == 0 {
		return field.ErrorList{field.Required(path, "an empty selector would match every Pod")}
	}
	errs := metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, path)
	if s, err := metav1.LabelSelectorAsSelector(selector); err != nil {
		errs = append(errs, field.Invalid(path, selector, err.Error()))
	} else if !s.Matches(podLabels) {
		errs = append(errs, field.Invalid(path, selector, "does not match the Pod template's labels"))
	}
	return errs
}

// checkPort wants a port number in 1..65535 and an IANA_SVC_NAME port name.
func checkPort(path *field.Path, name string, port int32) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidPortNum(int(port)) {
		errs = append(errs, field.Invalid(path.Child("port"), port, msg))
	}
	for _, msg := range validation.IsValidPortName(name) {
		errs = append(errs, field.Invalid(path.Child("name"), name, msg))
	}
	return errs
}

// asStoredDeployment returns d as the API server would store it had it been
// built from the old Guestbook: the old spec, the server-assigned metadata, the
// defaulted fields (TestSettersLeaveServerDefaultedFieldsAlone lists them) and a
// status.
func asStoredDeployment(d *appsv1.Deployment, old *webappv1.Guestbook, c component) *appsv1.Deployment {
	stored := d.DeepCopy()
	setDeployment(stored, old, c)
	stored.UID, stored.ResourceVersion, stored.Generation = "deployment-uid", "42", 3
	stored.CreationTimestamp = metav1.Unix(1700000000, 0)
	quarter := intstr.FromString("25%")
	stored.Spec.Strategy = appsv1.DeploymentStrategy{
		Type:          appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &quarter, MaxSurge: &quarter},
	}
	stored.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	stored.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	pod := &stored.Spec.Template.Spec
	pod.RestartPolicy = corev1.RestartPolicyAlways
	pod.DNSPolicy = corev1.DNSClusterFirst
	pod.SchedulerName = corev1.DefaultSchedulerName
	pod.SecurityContext = &corev1.PodSecurityContext{}
	pod.TerminationGracePeriodSeconds = ptr.To[int64](30)
	for i := range pod.Containers {
		pod.Containers[i].ImagePullPolicy = corev1.PullIfNotPresent
		pod.Containers[i].TerminationMessagePath = corev1.TerminationMessagePathDefault
		pod.Containers[i].TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	stored.Status = appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}
	return stored
}

// asStoredService returns s as the API server would store it, switched to
// NodePort by hand with that nodePort when nodePort is not 0
// (server-assigned-fields.md), a ClusterIP Service otherwise.
func asStoredService(s *corev1.Service, nodePort int32) *corev1.Service {
	stored := s.DeepCopy()
	stored.UID, stored.ResourceVersion = "service-uid", "43"
	stored.Spec.Type = corev1.ServiceTypeClusterIP
	stored.Spec.ClusterIP, stored.Spec.ClusterIPs = "10.96.0.10", []string{"10.96.0.10"}
	stored.Spec.SessionAffinity = corev1.ServiceAffinityNone
	stored.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	stored.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	stored.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	if nodePort != 0 {
		stored.Spec.Type = corev1.ServiceTypeNodePort
		stored.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
		for i := range stored.Spec.Ports {
			stored.Spec.Ports[i].NodePort = nodePort
		}
	}
	return stored
}

// serverFieldsKept returns the server-assigned or defaulted fields of the stored
// children that the setters changed (asStoredDeployment and asStoredService set them).
func serverFieldsKept(d *appsv1.Deployment, s *corev1.Service, nodePort int32) field.ErrorList {
	var errs field.ErrorList
	changed := func(path string, ok bool) {
		if !ok {
			errs = append(errs, field.Forbidden(field.NewPath(path), "a field the API server assigned was overwritten"))
		}
	}
	pod, ct := d.Spec.Template.Spec, d.Spec.Template.Spec.Containers[0]
	changed("deployment.metadata.resourceVersion", d.ResourceVersion == "42")
	changed("deployment.spec.strategy", d.Spec.Strategy.RollingUpdate != nil)
	changed("deployment.spec.revisionHistoryLimit", ptr.Deref(d.Spec.RevisionHistoryLimit, 0) == 10)
	changed("deployment.spec.progressDeadlineSeconds", ptr.Deref(d.Spec.ProgressDeadlineSeconds, 0) == 600)
	changed("deployment.spec.template.spec.restartPolicy", pod.RestartPolicy == corev1.RestartPolicyAlways)
	changed("deployment.spec.template.spec.dnsPolicy", pod.DNSPolicy == corev1.DNSClusterFirst)
	changed("deployment.spec.template.spec.schedulerName", pod.SchedulerName == corev1.DefaultSchedulerName)
	changed("deployment.spec.template.spec.terminationGracePeriodSeconds", ptr.Deref(pod.TerminationGracePeriodSeconds, 0) == 30)
	changed("deployment.spec.template.spec.containers[0].imagePullPolicy", ct.ImagePullPolicy == corev1.PullIfNotPresent)
	changed("deployment.spec.template.spec.containers[0].terminationMessagePath", ct.TerminationMessagePath == corev1.TerminationMessagePathDefault)
	changed("service.metadata.resourceVersion", s.ResourceVersion == "43")
	changed("service.spec.clusterIP", s.Spec.ClusterIP == "10.96.0.10" && slices.Equal(s.Spec.ClusterIPs, []string{"10.96.0.10"}))
	changed("service.spec.sessionAffinity", s.Spec.SessionAffinity == corev1.ServiceAffinityNone)
	changed("service.spec.ipFamilies", len(s.Spec.IPFamilies) == 1 && s.Spec.IPFamilyPolicy != nil)
	changed("service.spec.internalTrafficPolicy", s.Spec.InternalTrafficPolicy != nil)
	if nodePort != 0 {
		changed("service.spec.type", s.Spec.Type == corev1.ServiceTypeNodePort)
		changed("service.spec.ports[0].nodePort", len(s.Spec.Ports) == 1 && s.Spec.Ports[0].NodePort == nodePort)
	} else {
		changed("service.spec.type", s.Spec.Type == corev1.ServiceTypeClusterIP)
		changed("service.spec.ports[0].nodePort", len(s.Spec.Ports) == 1 && s.Spec.Ports[0].NodePort == 0)
	}
	return errs
}

// FuzzSetObserved checks, for a Guestbook whose Deployments report any numbers
// (one component varies; the other two are fully available):
//   - setObserved never panics;
//   - each component's status mirrors its Deployment (0 stays 0: zero-columns.md);
//   - the status has exactly the three conditions, each valid by the API's
//     rules for metav1.Condition (reason format, status True or False, message
//     length, observedGeneration = the Guestbook's generation), Degraded False;
//   - Available is True exactly when every component has its replicas available,
//     and a False Available or True Progressing names the component;
//   - a second pass over the same Deployments changes nothing, so the status is
//     written once (and no lastTransitionTime moves);
//   - a Guestbook blocked before (rename-and-invalid.md B, then the spec fixed)
//     converges to the same conditions.
//
// Seeds: zero-columns.md (0 desired, 0 available); status-subresource.md
// (availableReplicas patched to 2); a Deployment with no replicas field (nil,
// which the API server defaults to 1); negative and huge numbers; a rollout not
// yet observed (generation ahead of observedGeneration); a previously blocked
// Guestbook.
func FuzzSetObserved(f *testing.F) {
	// component, hasReplicas, replicas, available, updated, statusReplicas, generation, observedGeneration, gbGeneration, wasBlocked
	f.Add(uint8(2), true, int32(0), int32(0), int32(0), int32(0), int64(1), int64(1), int64(1), false)                                                                 // zero-columns.md
	f.Add(uint8(2), true, int32(2), int32(2), int32(2), int32(2), int64(1), int64(1), int64(1), false)                                                                 // status-subresource.md: 2 available
	f.Add(uint8(1), false, int32(0), int32(1), int32(1), int32(1), int64(1), int64(1), int64(1), false)                                                                // missing replicas: 1
	f.Add(uint8(0), true, int32(1), int32(0), int32(1), int32(1), int64(1), int64(1), int64(1), false)                                                                 // the leader unavailable
	f.Add(uint8(2), true, int32(3), int32(2), int32(3), int32(4), int64(5), int64(4), int64(7), false)                                                                 // a rollout not yet observed
	f.Add(uint8(1), true, int32(-1), int32(-5), int32(-2), int32(-3), int64(-1), int64(-9), int64(1), false)                                                           // negative numbers
	f.Add(uint8(2), true, int32(2147483647), int32(-2147483648), int32(0), int32(2147483647), int64(9223372036854775807), int64(0), int64(9223372036854775807), false) // extremes
	f.Add(uint8(2), true, int32(2), int32(2), int32(2), int32(2), int64(1), int64(1), int64(2), true)                                                                  // rename-and-invalid.md B: blocked, then fixed

	f.Fuzz(func(t *testing.T, component uint8, hasReplicas bool, replicas, available, updated, statusReplicas int32,
		generation, observedGeneration, gbGeneration int64, wasBlocked bool) {
		if gbGeneration < 1 {
			return // the API server's generations start at 1
		}
		names := []string{"redis-leader", "redis-follower", "frontend"}
		varied := names[int(component)%len(names)]
		deployments := map[string]*appsv1.Deployment{}
		for _, name := range names {
			healthy := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Generation: 1},
				Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
				Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2},
			}
			deployments[name] = healthy
		}
		d := deployments[varied]
		d.Generation = generation
		d.Spec.Replicas = nil
		if hasReplicas {
			d.Spec.Replicas = &replicas
		}
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: observedGeneration, Replicas: statusReplicas,
			UpdatedReplicas: updated, AvailableReplicas: available,
		}

		gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Name: "shop", Generation: gbGeneration}}
		if wasBlocked {
			setBlocked(gb, ReasonInvalidSpec, `spec.redis.image: Invalid value: "docker.io/redis 6.0.5": an image reference has no whitespace`)
		}
		setObserved(gb, deployments)

		desired := ptr.Deref(d.Spec.Replicas, 1)
		status := map[string]webappv1.ComponentStatus{
			"redis-leader": gb.Status.RedisLeader, "redis-follower": gb.Status.RedisFollower, "frontend": gb.Status.Frontend,
		}[varied]
		if status.Replicas != desired || status.AvailableReplicas != available {
			t.Errorf("status of %s = %+v; want replicas %d, availableReplicas %d", varied, status, desired, available)
		}

		conditions := gb.Status.Conditions
		if len(conditions) != 3 {
			t.Fatalf("%d conditions; want Available, Progressing and Degraded: %+v", len(conditions), conditions)
		}
		for _, err := range metav1validation.ValidateConditions(conditions, field.NewPath("status", "conditions")) {
			t.Errorf("setObserved leaves an invalid condition: %v", err)
		}
		for _, c := range conditions {
			if c.ObservedGeneration != gbGeneration {
				t.Errorf("condition %s observedGeneration %d; want the Guestbook's %d", c.Type, c.ObservedGeneration, gbGeneration)
			}
		}
		if !meta.IsStatusConditionFalse(conditions, webappv1.ConditionDegraded) {
			t.Errorf("Degraded is not False after setObserved: %+v", meta.FindStatusCondition(conditions, webappv1.ConditionDegraded))
		}
		availableCond := meta.FindStatusCondition(conditions, webappv1.ConditionAvailable)
		if wantTrue := available >= desired; (availableCond.Status == metav1.ConditionTrue) != wantTrue {
			t.Errorf("Available is %s with %s %d/%d available; want True exactly when all are", availableCond.Status, varied, available, desired)
		}
		if availableCond.Status == metav1.ConditionFalse && !strings.Contains(availableCond.Message, varied+" ") {
			t.Errorf("Available is False with message %q, which does not name %s", availableCond.Message, varied)
		}
		if p := meta.FindStatusCondition(conditions, webappv1.ConditionProgressing); p.Status == metav1.ConditionTrue && !strings.Contains(p.Message, varied) {
			t.Errorf("Progressing is True with message %q, which does not name %s", p.Message, varied)
		}

		before := gb.Status.DeepCopy()
		setObserved(gb, deployments)
		if !equality.Semantic.DeepEqual(before, &gb.Status) {
			t.Errorf("a second setObserved over the same Deployments changes the status:\n%+v\nthen\n%+v", before, gb.Status)
		}
	})
}
