//go:build e2e

package reliability

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
	"github.com/controller-kit/controller-kit/test/kittest"
)

var (
	fooResource       = schema.GroupVersionResource{Group: "samplecontroller.k8s.io", Version: "v1alpha1", Resource: "foos"}
	guestbookResource = schema.GroupVersionResource{Group: "webapp.controller-kit.dev", Version: "v1", Resource: "guestbooks"}
)

// badInput is an object the API server must refuse, and the field its error
// must name so that a user knows what to fix.
type badInput struct {
	// name says what is wrong with the object.
	name     string
	resource schema.GroupVersionResource
	// object is the object to create, as YAML without apiVersion and kind; its
	// metadata.name defaults to one of the test's own.
	object string
	// patch, when set, makes the case an update: object is created first (it
	// must be valid), then this JSON merge patch is sent to subresource ("" for
	// the object itself, "status").
	patch       string
	subresource string
	// field is the path the error must name, such as "spec.replicas".
	field string
	// by is what refuses it: the schema's bound, a CEL rule, or the validating
	// webhook, as the CRD or the webhook's code spells it.
	by string
}

// validCondition is a Guestbook condition the schema accepts, which the status
// cases below spoil one field at a time.
const validCondition = `{"type":"Available","status":"True","reason":"AllReplicasAvailable","message":"ok","observedGeneration":1,"lastTransitionTime":"2026-01-01T00:00:00Z"}`

// badInputs is every bound and rule of the Foo and Guestbook CRDs (in
// sample-controller/config/crd and kubebuilder-guestbook/config/crd/bases) and
// of the Guestbook's validating webhook (webappv1.ValidateName and ValidateSpec),
// each with one object it refuses.
var badInputs = []badInput{
	// Foo: sample-controller/pkg/apis/samplecontroller/v1alpha1/types.go's markers.
	{name: "Foo without a spec", resource: fooResource, object: `{}`, field: "spec", by: "required"},
	{name: "Foo without a deploymentName", resource: fooResource, object: `spec: {replicas: 1}`, field: "spec.deploymentName", by: "required"},
	{name: "Foo with an empty deploymentName", resource: fooResource, object: `spec: {deploymentName: ""}`, field: "spec.deploymentName", by: "minLength"},
	{name: "Foo with a 64-character deploymentName", resource: fooResource, object: `spec: {deploymentName: ` + strings.Repeat("d", 64) + `}`, field: "spec.deploymentName", by: "maxLength"},
	{name: "Foo with a deploymentName that is no DNS-1123 label", resource: fooResource, object: `spec: {deploymentName: Not_A_Name}`, field: "spec.deploymentName", by: "pattern"},
	{name: "Foo with replicas below 0", resource: fooResource, object: `spec: {deploymentName: web, replicas: -1}`, field: "spec.replicas", by: "minimum"},
	{name: "Foo with replicas above 100", resource: fooResource, object: `spec: {deploymentName: web, replicas: 101}`, field: "spec.replicas", by: "maximum"},
	{name: "Foo with replicas that are not a number", resource: fooResource, object: `spec: {deploymentName: web, replicas: three}`, field: "spec.replicas", by: "type"},
	{name: "Foo whose deploymentName is changed", resource: fooResource, object: `spec: {deploymentName: web}`,
		patch: `{"spec":{"deploymentName":"web2"}}`, field: "spec.deploymentName", by: "CEL rule self == oldSelf"},

	// Guestbook: kubebuilder-guestbook/api/v1/guestbook_types.go's markers.
	// (spec is required too, but the defaulting webhook writes one into every
	// Guestbook before the schema is checked.)
	{name: "Guestbook with frontend replicas below 0", resource: guestbookResource, object: `spec: {frontend: {replicas: -1}}`, field: "spec.frontend.replicas", by: "minimum"},
	{name: "Guestbook with frontend replicas above 50", resource: guestbookResource, object: `spec: {frontend: {replicas: 51}}`, field: "spec.frontend.replicas", by: "maximum"},
	{name: "Guestbook with follower replicas below 0", resource: guestbookResource, object: `spec: {redis: {followerReplicas: -1}}`, field: "spec.redis.followerReplicas", by: "minimum"},
	{name: "Guestbook with follower replicas above 10", resource: guestbookResource, object: `spec: {redis: {followerReplicas: 11}}`, field: "spec.redis.followerReplicas", by: "maximum"},
	{name: "Guestbook with a 513-character frontend image", resource: guestbookResource, object: `spec: {frontend: {image: "` + strings.Repeat("i", 513) + `"}}`, field: "spec.frontend.image", by: "maxLength"},
	{name: "Guestbook with a 513-character Redis image", resource: guestbookResource, object: `spec: {redis: {image: "` + strings.Repeat("i", 513) + `"}}`, field: "spec.redis.image", by: "maxLength"},
	{name: "Guestbook with a frontend image on the latest tag", resource: guestbookResource, object: `spec: {frontend: {image: "registry.example/frontend:latest"}}`, field: "spec.frontend.image", by: "CEL rule !self.endsWith(':latest')"},
	{name: "Guestbook with a Redis image on the latest tag", resource: guestbookResource, object: `spec: {redis: {image: "docker.io/redis:latest"}}`, field: "spec.redis.image", by: "CEL rule !self.endsWith(':latest')"},
	// The status's conditions are metav1.Condition's, with its markers: a
	// controller's bad status write is refused too.
	{name: "Guestbook condition with a status other than True, False, Unknown", resource: guestbookResource, object: `spec: {}`, subresource: "status",
		patch: `{"status":{"conditions":[` + strings.Replace(validCondition, `"True"`, `"Maybe"`, 1) + `]}}`, field: "status.conditions[0].status", by: "enum"},
	{name: "Guestbook condition with a type that is no name", resource: guestbookResource, object: `spec: {}`, subresource: "status",
		patch: `{"status":{"conditions":[` + strings.Replace(validCondition, `"Available"`, `"not a type!"`, 1) + `]}}`, field: "status.conditions[0].type", by: "pattern"},
	{name: "Guestbook condition with a reason that starts with a digit", resource: guestbookResource, object: `spec: {}`, subresource: "status",
		patch: `{"status":{"conditions":[` + strings.Replace(validCondition, `"AllReplicasAvailable"`, `"1Available"`, 1) + `]}}`, field: "status.conditions[0].reason", by: "pattern"},
	{name: "Guestbook condition with a negative observedGeneration", resource: guestbookResource, object: `spec: {}`, subresource: "status",
		patch: `{"status":{"conditions":[` + strings.Replace(validCondition, `"observedGeneration":1`, `"observedGeneration":-1`, 1) + `]}}`, field: "status.conditions[0].observedGeneration", by: "minimum"},
	{name: "Guestbook condition with a 32769-character message", resource: guestbookResource, object: `spec: {}`, subresource: "status",
		patch: `{"status":{"conditions":[` + strings.Replace(validCondition, `"ok"`, `"`+strings.Repeat("m", 32769)+`"`, 1) + `]}}`, field: "status.conditions[0].message", by: "maxLength"},
	{name: "Guestbook condition without a lastTransitionTime", resource: guestbookResource, object: `spec: {}`, subresource: "status",
		patch: `{"status":{"conditions":[` + strings.Replace(validCondition, `,"lastTransitionTime":"2026-01-01T00:00:00Z"`, ``, 1) + `]}}`, field: "status.conditions[0].lastTransitionTime", by: "required"},

	// Guestbook: the validating webhook (kubebuilder-guestbook/internal/webhook/v1).
	{name: "Guestbook whose name is too long for its Service names", resource: guestbookResource,
		object: fmt.Sprintf(`{metadata: {name: %s}, spec: {}}`, strings.Repeat("g", webappv1.MaxNameLength+1)), field: "metadata.name", by: "webhook: ValidateName"},
	{name: "Guestbook whose name has a dot", resource: guestbookResource, object: `{metadata: {name: my.guestbook}, spec: {}}`, field: "metadata.name", by: "webhook: ValidateName"},
	{name: "Guestbook whose name starts with a digit", resource: guestbookResource, object: `{metadata: {name: 1guestbook}, spec: {}}`, field: "metadata.name", by: "webhook: ValidateName"},
	{name: "Guestbook created with a space in its frontend image", resource: guestbookResource, object: `spec: {frontend: {image: "registry.example/gb frontend:v5"}}`, field: "spec.frontend.image", by: "webhook: ValidateSpec"},
	{name: "Guestbook updated to a space in its Redis image", resource: guestbookResource, object: `spec: {}`,
		patch: `{"spec":{"redis":{"image":" docker.io/redis:6.0.5"}}}`, field: "spec.redis.image", by: "webhook: ValidateSpec"},
}

// TestBadInputIsRejectedNamingTheField sends each of badInputs to the API
// server, with the Guestbook's webhooks served by the manager and registered as
// the project ships them (config/webhook), and checks that each is refused as
// Invalid with the field's path in the error: what kubectl shows a user.
func TestBadInputIsRejectedNamingTheField(t *testing.T) {
	scenario(t)
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "bad-input")
	serveGuestbookWebhooks(t, cs, ns)
	client, err := dynamic.NewForConfig(kittest.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	refused := map[string]int{}
	for i, tc := range badInputs {
		passed := t.Run(tc.name, func(t *testing.T) {
			var object map[string]any
			if err := yaml.Unmarshal([]byte(tc.object), &object); err != nil {
				t.Fatalf("the case's object: %v", err)
			}
			u := &unstructured.Unstructured{Object: object}
			u.SetAPIVersion(tc.resource.GroupVersion().String())
			u.SetKind(map[string]string{"foos": "Foo", "guestbooks": "Guestbook"}[tc.resource.Resource])
			if u.GetName() == "" {
				u.SetName(fmt.Sprintf("case-%d", i))
			}
			objects := client.Resource(tc.resource).Namespace(ns)
			_, err := objects.Create(ctx, u, metav1.CreateOptions{})
			if tc.patch != "" {
				if err != nil {
					t.Fatalf("creating the valid object the case then spoils: %v", err)
				}
				var sub []string
				if tc.subresource != "" {
					sub = append(sub, tc.subresource)
				}
				_, err = objects.Patch(ctx, u.GetName(), types.MergePatchType, []byte(tc.patch), metav1.PatchOptions{}, sub...)
			}
			switch {
			case err == nil:
				t.Fatalf("the API server accepted it; want it refused by the %s of %s", tc.by, tc.field)
			case !apierrors.IsInvalid(err):
				t.Fatalf("refused as %v; want Invalid, by the %s of %s", err, tc.by, tc.field)
			case !strings.Contains(err.Error(), tc.field+":"):
				t.Errorf("the error does not name %s (%s):\n%v", tc.field, tc.by, err)
			}
		})
		if passed {
			refused[tc.resource.Resource]++
		}
	}
	record(t, "Foo inputs refused naming the field", float64(refused["foos"]), "")
	record(t, "Guestbook inputs refused naming the field", float64(refused["guestbooks"]), "")
}
