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
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// A fuzz target for the two webhooks' Go code (Default, ValidateCreate and
// ValidateUpdate), called directly: no API server, no TLS. Run it with
//
//	go test -run='^$' -fuzz='^FuzzGuestbookWebhooks$' -fuzztime=10s ./internal/webhook/v1
//
// or all of the kit's with `make fuzz` at its root. The f.Add seeds run as
// ordinary tests on every `go test`; the case files they come from are in
// /work/shared/cases.

// onlyFuzzTargets reports whether this test binary runs fuzz targets only: as
// a worker of `go test -fuzz` (which runs nothing else), or with a -run pattern
// that selects no Test function (-run='^$' as `make fuzz` passes, or -run='^Fuzz').
// TestMain then skips envtest: the fuzz target needs no API server, and each
// fuzz worker would otherwise start one of its own.
func onlyFuzzTargets() bool {
	flag.Parse()
	if flag.Lookup("test.fuzzworker").Value.String() == "true" {
		return true
	}
	run := flag.Lookup("test.run").Value.String()
	return run == "^$" || strings.HasPrefix(run, "^Fuzz")
}

// FuzzGuestbookWebhooks checks, for any Guestbook name and spec:
//   - no webhook method panics;
//   - defaulting is stable: Default twice gives what Default once gives, fills
//     only empty images, and keeps every image that is set;
//   - validation is deterministic (the same answer twice) and stable on the
//     defaulted spec (defaulted again, validated again: the same answer);
//   - a refusal is an Invalid API error whose every cause names metadata.name,
//     spec.frontend.image or spec.redis.image;
//   - 0 frontend replicas is admitted with a warning (zero-columns.md);
//   - whatever the stored spec (even one stored while the webhook was off, not
//     defaulted), an update that changes only metadata (a finalizer, a label)
//     is admitted, and so is any update of a Guestbook being deleted
//     (webhook-on-delete.md);
//   - an update that changes the spec is refused exactly when ValidateSpec
//     refuses the new spec.
//
// Seeds:
//   - webhook-on-delete.md: spec.redis.image "docker.io/redis 6.0.5", stored
//     without the webhook, then a finalizer update and a deletion;
//   - rename-and-invalid.md, input B: names the children cannot carry (a dot,
//     49 characters, a leading digit, empty), then the spec fixed by an update;
//   - zero-columns.md: 0 frontend replicas;
//   - missing fields: empty images (Default fills them), nil replicas;
//   - image-tag.md: a tag, a digest, no tag, a registry port;
//   - names at the limits: MaxNameLength (48), 63, 253 characters.
func FuzzGuestbookWebhooks(f *testing.F) {
	// name, frontendImage, redisImage, hasFrontendReplicas, frontendReplicas, oldRedisImage, deleting
	f.Add("shop", "", "", true, int32(2), "", false)                                           // missing images: defaulted
	f.Add("shop", "", "docker.io/redis 6.0.5", true, int32(2), "docker.io/redis 6.0.5", false) // webhook-on-delete.md: a finalizer update
	f.Add("shop", "", "docker.io/redis 6.0.5", true, int32(2), "docker.io/redis 6.0.5", true)  // webhook-on-delete.md: the deletion
	f.Add("shop", "", "docker.io/redis:6.0.5", true, int32(2), "docker.io/redis 6.0.5", false) // rename-and-invalid.md B: the spec fixed
	f.Add("shop", "", "docker.io/redis 6.0.6", true, int32(2), "docker.io/redis:6.0.5", false) // an update to an unusable image
	f.Add("shop", "", "", true, int32(0), "", false)                                           // zero-columns.md
	f.Add("shop", "", "", false, int32(0), "", false)                                          // missing replicas
	f.Add("my.shop", "", "", true, int32(2), "", false)                                        // rename-and-invalid.md B: a dot
	f.Add("1st-shop", "", "", true, int32(2), "", false)                                       // rename-and-invalid.md B: a leading digit
	f.Add("", "", "", true, int32(2), "", false)                                               // rename-and-invalid.md B: empty
	f.Add(strings.Repeat("g", webappv1.MaxNameLength), "", "", true, int32(2), "", false)      // the longest usable name
	f.Add(strings.Repeat("g", webappv1.MaxNameLength+1), "", "", true, int32(2), "", false)    // one over
	f.Add(strings.Repeat("g", 63), "", "", true, int32(2), "", false)                          // the longest label
	f.Add(strings.Repeat("g", 253), "", "", true, int32(2), "", false)                         // the longest object name
	f.Add("shop", "nginx", "redis@sha256:"+strings.Repeat("0", 64), true, int32(1), "", false) // image-tag.md: no tag, a digest
	f.Add("shop", "localhost:5000/gb:v5", " redis:7", true, int32(1), "redis:7", false)        // image-tag.md: a registry port; a leading space

	ctx := context.Background()
	defaulter, validator := &GuestbookDefaulter{}, &GuestbookValidator{}

	f.Fuzz(func(t *testing.T, name, frontendImage, redisImage string, hasFrontendReplicas bool, frontendReplicas int32,
		oldRedisImage string, deleting bool) {
		// As sent: the spec the user wrote, before the defaulting webhook.
		sent := &webappv1.Guestbook{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: webappv1.GuestbookSpec{
				Frontend: webappv1.FrontendSpec{Image: frontendImage},
				Redis:    webappv1.RedisSpec{Image: redisImage},
			},
		}
		if hasFrontendReplicas {
			sent.Spec.Frontend.Replicas = &frontendReplicas
		}

		// Defaulting: once, then again.
		once := sent.DeepCopy()
		if err := defaulter.Default(ctx, once); err != nil {
			t.Fatalf("Default: %v", err)
		}
		twice := once.DeepCopy()
		if err := defaulter.Default(ctx, twice); err != nil {
			t.Fatalf("Default: %v", err)
		}
		if !reflect.DeepEqual(once, twice) {
			t.Fatalf("Default twice differs from Default once:\n%+v\n%+v", once.Spec, twice.Spec)
		}
		for _, image := range []struct{ sent, defaulted, fallback string }{
			{frontendImage, once.Spec.Frontend.Image, webappv1.DefaultFrontendImage},
			{redisImage, once.Spec.Redis.Image, webappv1.DefaultRedisImage},
		} {
			if want := cmp.Or(image.sent, image.fallback); image.defaulted != want {
				t.Errorf("Default turns image %q into %q; want %q", image.sent, image.defaulted, want)
			}
		}

		// Validation on create: deterministic, stable on the defaulted spec.
		warnings, err := validator.ValidateCreate(ctx, once)
		warnings2, err2 := validator.ValidateCreate(ctx, twice)
		if !reflect.DeepEqual(warnings, warnings2) || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("ValidateCreate answered (%v, %v), then (%v, %v)", warnings, err, warnings2, err2)
		}
		if err != nil {
			checkInvalid(t, err)
		} else if zero := hasFrontendReplicas && frontendReplicas == 0; zero != (len(warnings) > 0) {
			t.Errorf("ValidateCreate with frontend replicas %v warns %q; want a warning exactly for 0", sent.Spec.Frontend.Replicas, warnings)
		}

		// webhook-on-delete.md: the stored object may predate the webhook (not
		// defaulted, any spec). An update that adds a finalizer and a label,
		// sent through the defaulting webhook first, is always admitted.
		stored := sent.DeepCopy()
		metadataOnly := stored.DeepCopy()
		metadataOnly.Finalizers = append(metadataOnly.Finalizers, "webapp.controller-kit.dev/finalizer")
		metadataOnly.Labels = map[string]string{"team": "web"}
		if err := defaulter.Default(ctx, metadataOnly); err != nil {
			t.Fatalf("Default: %v", err)
		}
		if _, err := validator.ValidateUpdate(ctx, stored, metadataOnly); err != nil {
			t.Errorf("an update of metadata only is refused for the stored spec %+v: %v", stored.Spec, err)
		}

		// An update from an older Redis image to this spec.
		old := sent.DeepCopy()
		old.Spec.Redis.Image = oldRedisImage
		update := once.DeepCopy()
		if deleting {
			now := metav1.Now()
			update.DeletionTimestamp = &now
		}
		_, err = validator.ValidateUpdate(ctx, old, update)
		_, again := validator.ValidateUpdate(ctx, old, update)
		if fmt.Sprint(err) != fmt.Sprint(again) {
			t.Fatalf("ValidateUpdate answered %v, then %v", err, again)
		}
		oldDefaulted := old.DeepCopy()
		if err := defaulter.Default(ctx, oldDefaulted); err != nil {
			t.Fatalf("Default: %v", err)
		}
		specChanged := !reflect.DeepEqual(oldDefaulted.Spec, update.Spec)
		wantRefused := !deleting && specChanged && len(webappv1.ValidateSpec(&update.Spec)) > 0
		switch {
		case err != nil && !wantRefused:
			t.Errorf("ValidateUpdate refuses (deleting %v, spec changed %v): %v", deleting, specChanged, err)
		case err == nil && wantRefused:
			t.Errorf("ValidateUpdate admits a changed spec ValidateSpec refuses: %+v", update.Spec)
		case err != nil:
			checkInvalid(t, err)
		}
	})
}

// checkInvalid wants err to be the Invalid API error kubectl shows, with every
// cause naming a field the webhook validates.
func checkInvalid(t *testing.T, err error) {
	t.Helper()
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("refused with %T %v; want an Invalid API error with details", err, err)
	}
	causes := status.Status().Details.Causes
	if len(causes) == 0 {
		t.Errorf("an Invalid error without causes: %v", err)
	}
	for _, cause := range causes {
		switch cause.Field {
		case "metadata.name", "spec.frontend.image", "spec.redis.image":
		default:
			t.Errorf("refused naming field %q, which the webhook does not validate: %v", cause.Field, err)
		}
	}
}
