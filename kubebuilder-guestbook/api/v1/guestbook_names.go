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

package v1

import (
	"fmt"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Suffixes of the names of a Guestbook's children: a Guestbook "gb" owns the
// Deployments and Services gb-frontend, gb-redis-leader and gb-redis-follower.
const (
	FrontendSuffix      = "-frontend"
	RedisLeaderSuffix   = "-redis-leader"
	RedisFollowerSuffix = "-redis-follower"
)

// MaxNameLength is the longest Guestbook name whose children's names are still
// valid Service names (DNS-1035 labels of at most 63 characters): 48.
const MaxNameLength = validation.DNS1035LabelMaxLength - len(RedisFollowerSuffix)

// ValidateName returns what is wrong with a Guestbook name the operator cannot
// derive child Service names from, or nil. The API server accepts any DNS
// subdomain as a name (dots, a leading digit, up to 253 characters), so this is
// checked by the validating webhook and again by the Reconciler, which must also
// cope with Guestbooks created while the webhook was off.
func ValidateName(name string) field.ErrorList {
	path := field.NewPath("metadata", "name")
	if len(name) > MaxNameLength {
		return field.ErrorList{field.TooLong(path, name, MaxNameLength)}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1035Label(name) {
		errs = append(errs, field.Invalid(path, name,
			fmt.Sprintf("%s (the name prefixes the Guestbook's Service names)", msg)))
	}
	return errs
}

// ValidateSpec returns what is wrong with a spec that the CRD schema accepts but
// the Guestbook's children cannot carry, or nil: today, an image with whitespace
// in it (the API server refuses a Pod whose image starts or ends with a space, and
// no registry serves one with a space inside). Like ValidateName, it runs in the
// validating webhook and again in the Reconciler.
func ValidateSpec(spec *GuestbookSpec) field.ErrorList {
	var errs field.ErrorList
	images := []struct {
		path  *field.Path
		value string
	}{
		{field.NewPath("spec", "frontend", "image"), spec.Frontend.Image},
		{field.NewPath("spec", "redis", "image"), spec.Redis.Image},
	}
	for _, image := range images {
		if strings.ContainsFunc(image.value, unicode.IsSpace) {
			errs = append(errs, field.Invalid(image.path, image.value, "an image reference has no whitespace"))
		}
	}
	return errs
}
