package v1

import (
	"reflect"
	"strings"
	"testing"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Fuzz targets for the name and spec checks the validating webhook and the
// Reconciler share. Run one with
//
//	go test -run='^$' -fuzz='^FuzzValidateName$' -fuzztime=10s ./api/v1
//
// or all of the kit's with `make fuzz` at its root. The f.Add seeds run as
// ordinary tests on every `go test`; the case files they come from are in
// /work/shared/cases.

// FuzzValidateName checks, for any name:
//   - ValidateName never panics and gives the same answer twice;
//   - a rejection names metadata.name, and only it;
//   - an accepted name is one the API server takes for a Guestbook (a DNS-1123
//     subdomain), one the children's "instance" label can carry (a label value),
//     and, with each child suffix, a valid Deployment name (DNS-1123 subdomain)
//     and Service name (DNS-1035 label, at most 63 characters).
//
// Seeds: rename-and-invalid.md, input B (names the schema lets through but the
// children cannot carry: empty, a dot, a leading digit, uppercase, 49 characters,
// the 253 the API server allows), and the names at the limits (MaxNameLength,
// 63, 253).
func FuzzValidateName(f *testing.F) {
	f.Add("shop")                               // an ordinary name
	f.Add("")                                   // rename-and-invalid.md B: empty
	f.Add("my.guestbook")                       // rename-and-invalid.md B: a subdomain, not a label
	f.Add("1st-guestbook")                      // rename-and-invalid.md B: a Service name starts with a letter
	f.Add("Shop")                               // rename-and-invalid.md B: uppercase
	f.Add("shop-")                              // rename-and-invalid.md B: ends with '-'
	f.Add(strings.Repeat("g", MaxNameLength))   // the longest name whose children are valid Services
	f.Add(strings.Repeat("g", MaxNameLength+1)) // one over: gg...g-redis-follower is 64 characters
	f.Add(strings.Repeat("g", 63))              // the longest label
	f.Add(strings.Repeat("g", 253))             // the longest object name
	f.Add(strings.Repeat("a.", 126) + "a")      // 253 characters of subdomain

	f.Fuzz(func(t *testing.T, name string) {
		errs := ValidateName(name)
		if again := ValidateName(name); !reflect.DeepEqual(errs, again) {
			t.Fatalf("ValidateName(%q) answered %v, then %v", name, errs, again)
		}
		if len(errs) > 0 {
			for _, err := range errs {
				if err.Field != "metadata.name" {
					t.Errorf("ValidateName(%q) names field %q; want metadata.name", name, err.Field)
				}
			}
			return
		}
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			t.Errorf("ValidateName accepts %q, which the API server refuses as a name: %s", name, msg)
		}
		for _, msg := range validation.IsValidLabelValue(name) {
			t.Errorf("ValidateName accepts %q, which is no label value (app.kubernetes.io/instance): %s", name, msg)
		}
		for _, suffix := range []string{FrontendSuffix, RedisLeaderSuffix, RedisFollowerSuffix} {
			child := name + suffix
			for _, msg := range validation.IsDNS1123Subdomain(child) {
				t.Errorf("ValidateName accepts %q, but its Deployment %q is invalid: %s", name, child, msg)
			}
			for _, msg := range validation.IsDNS1035Label(child) {
				t.Errorf("ValidateName accepts %q, but its Service %q is invalid: %s", name, child, msg)
			}
		}
	})
}

// FuzzValidateSpec checks, for any pair of images:
//   - ValidateSpec never panics and gives the same answer twice;
//   - each rejection names spec.frontend.image or spec.redis.image, the field
//     whose value is wrong;
//   - an accepted image has no whitespace (the API server refuses a Pod image
//     with leading or trailing whitespace).
//
// Seeds: webhook-on-delete.md ("docker.io/redis 6.0.5", a space inside);
// image-tag.md (a tag, a digest, no tag at all, a registry with a port);
// missing fields (empty images, which the defaulting webhook fills in).
func FuzzValidateSpec(f *testing.F) {
	f.Add(DefaultFrontendImage, DefaultRedisImage)                             // the defaults
	f.Add(DefaultFrontendImage, "docker.io/redis 6.0.5")                       // webhook-on-delete.md
	f.Add(" registry.example/frontend:v1", "docker.io/redis:6.0.5\n")          // whitespace at either end
	f.Add("nginx", "redis")                                                    // image-tag.md: no tag
	f.Add("nginx@sha256:"+strings.Repeat("a", 64), "localhost:5000/redis:7.2") // image-tag.md: a digest; a registry port
	f.Add("", "")                                                              // missing fields: left to the defaulting webhook

	f.Fuzz(func(t *testing.T, frontendImage, redisImage string) {
		spec := &GuestbookSpec{
			Frontend: FrontendSpec{Image: frontendImage},
			Redis:    RedisSpec{Image: redisImage},
		}
		errs := ValidateSpec(spec)
		if again := ValidateSpec(spec); !reflect.DeepEqual(errs, again) {
			t.Fatalf("ValidateSpec(%+v) answered %v, then %v", spec, errs, again)
		}
		rejected := map[string]bool{}
		for _, err := range errs {
			rejected[err.Field] = true
		}
		for path, image := range map[string]string{"spec.frontend.image": frontendImage, "spec.redis.image": redisImage} {
			hasSpace := strings.ContainsFunc(image, unicode.IsSpace)
			switch {
			case hasSpace && !rejected[path]:
				t.Errorf("ValidateSpec accepts %s %q, which has whitespace", path, image)
			case !hasSpace && rejected[path]:
				t.Errorf("ValidateSpec rejects %s %q, which has no whitespace", path, image)
			case !rejected[path] && strings.TrimSpace(image) != image:
				t.Errorf("ValidateSpec accepts %s %q, which the API server refuses in a Pod", path, image)
			}
			delete(rejected, path)
		}
		for path := range rejected {
			t.Errorf("ValidateSpec names %q, which is not an image field of GuestbookSpec", path)
		}
	})
}
