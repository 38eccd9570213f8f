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
	"strings"
	"testing"
)

func TestValidateNameAcceptsNamesChildServicesCanCarry(t *testing.T) {
	for _, name := range []string{"shop", "my-guestbook", strings.Repeat("g", MaxNameLength)} {
		if errs := ValidateName(name); len(errs) != 0 {
			t.Errorf("ValidateName(%q) = %v; want no errors", name, errs)
		}
	}
}

func TestValidateNameRejectsNamesChildServicesCannotCarry(t *testing.T) {
	for _, name := range []string{
		strings.Repeat("g", MaxNameLength+1), // gggg...-redis-follower would exceed 63 characters
		"my.guestbook",                       // dots are fine in object names, not in Service names
		"1st-guestbook",                      // a Service name starts with a letter
	} {
		errs := ValidateName(name)
		if len(errs) == 0 {
			t.Errorf("ValidateName(%q) accepted a name whose children cannot be Services", name)
			continue
		}
		if got := errs[0].Field; got != "metadata.name" {
			t.Errorf("ValidateName(%q) names field %q; want metadata.name", name, got)
		}
	}
}

func TestValidateSpecRejectsImagesWithWhitespace(t *testing.T) {
	spec := GuestbookSpec{
		Frontend: FrontendSpec{Image: " registry.example/frontend:v1"},
		Redis:    RedisSpec{Image: "docker.io/redis 6"},
	}

	errs := ValidateSpec(&spec)

	if len(errs) != 2 || errs[0].Field != "spec.frontend.image" || errs[1].Field != "spec.redis.image" {
		t.Errorf("ValidateSpec = %v; want one error each for spec.frontend.image and spec.redis.image", errs)
	}
}

func TestValidateSpecAcceptsEmptyAndPlainImages(t *testing.T) {
	for _, image := range []string{"", DefaultFrontendImage, "registry.example:5000/team/frontend@sha256:0123"} {
		spec := GuestbookSpec{Frontend: FrontendSpec{Image: image}}
		if errs := ValidateSpec(&spec); len(errs) != 0 {
			t.Errorf("ValidateSpec(image %q) = %v; want no errors", image, errs)
		}
	}
}
