package controller

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	samplev1alpha1 "github.com/controller-kit/controller-kit/sample-controller/pkg/apis/samplecontroller/v1alpha1"
)

// Fuzz targets for the pure parts of the reference Reconciler: validateSpec,
// desiredReplicas and newDeployment. Run one with
//
//	go test -run='^$' -fuzz='^FuzzNewDeployment$' -fuzztime=10s ./pkg/controller
//
// or all of them with `make fuzz` at the kit's root. The f.Add seeds run as
// ordinary tests on every `go test`; the case files they come from are in
// /work/shared/cases.
//
// (The status the Reconciler writes is built inline in Reconcile, from the
// Deployment's status.availableReplicas and the Foo's metadata.generation; it is
// covered by reference_test.go, not fuzzed here.)

// fooSeed is one input of FuzzNewDeployment: the Foo it describes (foo) and
// where it comes from (origin: a case file in /work/shared/cases, or the limit
// it probes).
type fooSeed struct {
	origin                                string
	name, namespace, uid, resourceVersion string
	generation                            int64
	deploymentName                        string
	hasReplicas                           bool // false: spec.replicas is missing
	replicas                              int32
}

// foo returns the Foo the seed describes.
func (s fooSeed) foo() *samplev1alpha1.Foo {
	foo := &samplev1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.name, Namespace: s.namespace, UID: types.UID(s.uid),
			ResourceVersion: s.resourceVersion, Generation: s.generation,
		},
		Spec: samplev1alpha1.FooSpec{DeploymentName: s.deploymentName},
	}
	if s.hasReplicas {
		foo.Spec.Replicas = &s.replicas
	}
	return foo
}

// fooSeeds are FuzzNewDeployment's seeds (f.Add), and the Foos
// TestBuiltObjectsPassServerSideDryRun (envtest_test.go) sends to a real API
// server: one table, so that the two cannot drift apart.
var fooSeeds = []fooSeed{
	// origin, name, namespace, uid, resourceVersion, generation, deploymentName, hasReplicas, replicas
	{"rename-and-invalid.md, input A: before the rename", "foo", "default", "uid-1", "", 1, "d1", true, 1},
	{"rename-and-invalid.md, input A: after the rename", "foo", "default", "uid-1", "", 2, "d2", true, 1},
	{"rename-and-invalid.md, input B: empty deploymentName", "foo", "default", "uid-1", "", 1, "", true, 1},
	{"rename-and-invalid.md, input B: not a DNS label", "foo", "default", "uid-1", "", 1, "Nginx_1", true, 1},
	{"rename-and-invalid.md, input B: a subdomain, not a label", "foo", "default", "uid-1", "", 1, "web.v2", true, 1},
	{"rename-and-invalid.md, input B: one over the limit", "foo", "default", "uid-1", "", 1, strings.Repeat("d", 64), true, 1},
	{"rename-and-invalid.md, input B: negative replicas", "foo", "default", "uid-1", "", 1, "d1", true, -1},
	{"rename-and-invalid.md, input B: over the schema's maximum", "foo", "default", "uid-1", "", 1, "d1", true, 101},
	{"rename-and-invalid.md, input B: huge replicas", "foo", "default", "uid-1", "", 1, "d1", true, 2147483647},
	{"rename-and-invalid.md, input B: hugely negative replicas", "foo", "default", "uid-1", "", 1, "d1", true, -2147483648},
	{"zero-columns.md: 0 replicas", "foo", "default", "uid-1", "", 1, "d1", true, 0},
	{"missing replicas (the CRD defaults them to 1)", "foo", "default", "uid-1", "", 1, "d1", false, 0},
	{"the longest label, the most replicas", "foo", "default", "uid-1", "", 1, strings.Repeat("d", 63), true, 100},
	{"the longest Foo name", strings.Repeat("f", 253), "default", "uid-1", "", 1, "d1", true, 3},
	{"server-assigned-fields.md: resourceVersion and generation", "foo", "default", "uid-1", "12345", 7, "d1", true, 2},
}

// FuzzNewDeployment checks, for any Foo:
//   - validateSpec, desiredReplicas and newDeployment never panic, and validateSpec
//     gives the same answer twice;
//   - a rejection names a real field of FooSpec ("spec." and its JSON name);
//   - whenever validateSpec accepts the Foo, newDeployment returns a Deployment
//     the API server would accept, by the rules that can be checked offline
//     (checkDeployment), with desiredReplicas replicas.
//
// Seeds (fooSeeds, the inputs of the case files; TestBuiltObjectsPassServerSideDryRun
// sends the Deployments of the accepted ones to a real API server):
//   - rename-and-invalid.md, input A: deploymentName d1 with 1 replica, then d2;
//   - rename-and-invalid.md, input B: specs the schema let through but the
//     controller cannot act on: an empty name, uppercase, a dot, 64 characters,
//     negative, too many and extreme replicas;
//   - zero-columns.md: 0 replicas; a missing replicas field (the CRD defaults it to 1);
//   - names at the limits: a 63-character deploymentName (the longest label),
//     a 253-character Foo name (the longest object name);
//   - server-assigned-fields.md: a Foo carrying resourceVersion and generation,
//     which the Deployment must not copy;
//   - image-tag.md: the Deployment's image is always PodImage, a pinned tag.
func FuzzNewDeployment(f *testing.F) {
	for _, s := range fooSeeds {
		f.Add(s.name, s.namespace, s.uid, s.resourceVersion, s.generation, s.deploymentName, s.hasReplicas, s.replicas)
	}

	f.Fuzz(func(t *testing.T, name, namespace, uid, resourceVersion string, generation int64, deploymentName string, hasReplicas bool, replicas int32) {
		// The fuzzed input, as the Foo a seed would describe.
		foo := fooSeed{"", name, namespace, uid, resourceVersion, generation, deploymentName, hasReplicas, replicas}.foo()

		// None of these may panic, whatever the Foo.
		field, problem := validateSpec(foo)
		want := desiredReplicas(foo)
		deployment := newDeployment(foo)

		if f2, p2 := validateSpec(foo); f2 != field || p2 != problem {
			t.Fatalf("validateSpec answered (%q, %q), then (%q, %q) for the same Foo", field, problem, f2, p2)
		}
		if field != "" {
			if !fooSpecFields[field] {
				t.Errorf("validateSpec rejects the Foo naming %q, which is not a field of FooSpec (%v)", field, fooSpecFields)
			}
			if problem == "" {
				t.Errorf("validateSpec rejects %s without saying why", field)
			}
			return
		}

		// Accepted. The Foo's own name, namespace and UID come from the API
		// server, which stores only valid ones: check the Deployment only for those.
		if len(validation.IsDNS1123Subdomain(name)) > 0 || len(validation.IsDNS1123Label(namespace)) > 0 || uid == "" {
			return
		}
		if want < 0 {
			t.Errorf("desiredReplicas = %d for an accepted Foo; want >= 0", want)
		}
		for _, err := range checkDeployment(deployment, foo, want) {
			t.Errorf("validateSpec accepts deploymentName %q, replicas %v, but newDeployment's Deployment is invalid: %v",
				deploymentName, foo.Spec.Replicas, err)
		}
	})
}

// fooSpecFields are the paths of FooSpec's fields as a field error names them:
// "spec." and each field's JSON name.
var fooSpecFields = func() map[string]bool {
	paths := map[string]bool{}
	spec := reflect.TypeFor[samplev1alpha1.FooSpec]()
	for i := range spec.NumField() {
		name, _, _ := strings.Cut(spec.Field(i).Tag.Get("json"), ",")
		paths["spec."+name] = true
	}
	return paths
}()

// checkDeployment returns what the API server would refuse in d, the Deployment
// newDeployment built for foo, checked with apimachinery's validation (the rules
// of k8s.io/kubernetes's apps validation that need no server), plus the kit's
// own promises: replicas as the Foo asks, and one controller owner reference to
// the Foo, with blockOwnerDeletion (rbac.md).
func checkDeployment(d *appsv1.Deployment, foo *samplev1alpha1.Foo, replicas int32) field.ErrorList {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	for _, msg := range validation.IsDNS1123Subdomain(d.Name) {
		errs = append(errs, field.Invalid(meta.Child("name"), d.Name, msg))
	}
	if d.Namespace != foo.Namespace {
		errs = append(errs, field.Invalid(meta.Child("namespace"), d.Namespace, "want the Foo's namespace "+foo.Namespace))
	}
	// server-assigned-fields.md: a create carrying these is refused or misleading.
	if d.ResourceVersion != "" || d.UID != "" || d.Generation != 0 {
		errs = append(errs, field.Forbidden(meta, "carries server-assigned fields (resourceVersion, uid or generation)"))
	}
	errs = append(errs, metav1validation.ValidateLabels(d.Labels, meta.Child("labels"))...)

	var controllers []metav1.OwnerReference
	for _, ref := range d.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			controllers = append(controllers, ref)
		}
	}
	owner := field.NewPath("metadata", "ownerReferences")
	if len(controllers) != 1 {
		errs = append(errs, field.Invalid(owner, len(controllers), "want exactly one controller reference"))
	} else if ref := controllers[0]; ref.APIVersion != samplev1alpha1.SchemeGroupVersion.String() || ref.Kind != "Foo" ||
		ref.Name != foo.Name || ref.UID != foo.UID || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		errs = append(errs, field.Invalid(owner, ref, "want the Foo as controller, with blockOwnerDeletion"))
	}

	spec := field.NewPath("spec")
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 0 || *d.Spec.Replicas != replicas {
		errs = append(errs, field.Invalid(spec.Child("replicas"), d.Spec.Replicas, "want desiredReplicas, which is >= 0"))
	}
	template := d.Spec.Template
	errs = append(errs, metav1validation.ValidateLabels(template.Labels, spec.Child("template", "metadata", "labels"))...)
	if d.Spec.Selector == nil || len(d.Spec.Selector.MatchLabels)+len(d.Spec.Selector.MatchExpressions) == 0 {
		errs = append(errs, field.Required(spec.Child("selector"), "an empty selector would match every Pod"))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(d.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, spec.Child("selector"))...)
		if selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err != nil {
			errs = append(errs, field.Invalid(spec.Child("selector"), d.Spec.Selector, err.Error()))
		} else if !selector.Matches(labels.Set(template.Labels)) {
			errs = append(errs, field.Invalid(spec.Child("template", "metadata", "labels"), template.Labels, "the selector does not match them"))
		}
	}
	containers := spec.Child("template", "spec", "containers")
	if len(template.Spec.Containers) == 0 {
		errs = append(errs, field.Required(containers, "a Pod needs a container"))
	}
	for i, c := range template.Spec.Containers {
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(containers.Index(i).Child("name"), c.Name, msg))
		}
		if c.Image == "" || strings.TrimSpace(c.Image) != c.Image {
			errs = append(errs, field.Invalid(containers.Index(i).Child("image"), c.Image, "empty, or surrounded by whitespace"))
		}
		if !pinned(c.Image) { // image-tag.md
			errs = append(errs, field.Invalid(containers.Index(i).Child("image"), c.Image, "want a pinned tag or a digest, not latest"))
		}
	}
	return errs
}

// pinned reports whether an image reference names a digest or a tag other than
// latest ("nginx" alone means nginx:latest). A registry's port ("host:5000/nginx")
// is not a tag: only the last path segment can carry one.
func pinned(image string) bool {
	if strings.Contains(image, "@") {
		return true
	}
	lastSegment := image[strings.LastIndex(image, "/")+1:]
	_, tag, ok := strings.Cut(lastSegment, ":")
	return ok && tag != "" && tag != "latest"
}
