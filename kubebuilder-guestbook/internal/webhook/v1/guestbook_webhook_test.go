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
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

func guestbook(name string) *webappv1.Guestbook {
	return &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
}

func TestDefaultingWebhookFillsEmptyImages(t *testing.T) {
	gb := guestbook("defaulted")

	if err := k8sClient.Create(context.Background(), gb); err != nil {
		t.Fatalf("creating a Guestbook with an empty spec: %v", err)
	}

	if gb.Spec.Frontend.Image != webappv1.DefaultFrontendImage || gb.Spec.Redis.Image != webappv1.DefaultRedisImage {
		t.Errorf("stored images = %q, %q; want the defaults %q, %q", gb.Spec.Frontend.Image, gb.Spec.Redis.Image,
			webappv1.DefaultFrontendImage, webappv1.DefaultRedisImage)
	}
	if ptr.Deref(gb.Spec.Frontend.Replicas, -1) != 2 || ptr.Deref(gb.Spec.Redis.FollowerReplicas, -1) != 2 {
		t.Errorf("stored replicas = %v, %v; want the schema defaults 2 and 2", gb.Spec.Frontend.Replicas, gb.Spec.Redis.FollowerReplicas)
	}
}

func TestDefaultingWebhookKeepsImagesThatAreSet(t *testing.T) {
	gb := guestbook("pinned")
	gb.Spec.Frontend.Image = "registry.example/frontend:v1"

	if err := k8sClient.Create(context.Background(), gb); err != nil {
		t.Fatalf("creating: %v", err)
	}

	if gb.Spec.Frontend.Image != "registry.example/frontend:v1" {
		t.Errorf("frontend image = %q; want the one given", gb.Spec.Frontend.Image)
	}
}

// Each case must be rejected with an Invalid error whose message names the field.
func TestInvalidGuestbooksAreRejectedNamingTheField(t *testing.T) {
	tests := []struct {
		name      string
		guestbook func() *webappv1.Guestbook
		field     string
		by        string
	}{{
		name:      "name too long for the child Service names",
		guestbook: func() *webappv1.Guestbook { return guestbook(strings.Repeat("g", webappv1.MaxNameLength+1)) },
		field:     "metadata.name", by: "validating webhook",
	}, {
		name:      "name with a dot",
		guestbook: func() *webappv1.Guestbook { return guestbook("my.guestbook") },
		field:     "metadata.name", by: "validating webhook",
	}, {
		name: "frontend image on the latest tag",
		guestbook: func() *webappv1.Guestbook {
			gb := guestbook("latest")
			gb.Spec.Frontend.Image = "registry.example/frontend:latest"
			return gb
		},
		field: "spec.frontend.image", by: "CEL rule",
	}, {
		name: "redis image with a leading space",
		guestbook: func() *webappv1.Guestbook {
			gb := guestbook("spaced")
			gb.Spec.Redis.Image = " docker.io/redis:6.0.5"
			return gb
		},
		field: "spec.redis.image", by: "validating webhook",
	}, {
		name: "negative follower replicas",
		guestbook: func() *webappv1.Guestbook {
			gb := guestbook("negative")
			gb.Spec.Redis.FollowerReplicas = ptr.To[int32](-1)
			return gb
		},
		field: "spec.redis.followerReplicas", by: "schema minimum",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := k8sClient.Create(context.Background(), tt.guestbook())

			if !apierrors.IsInvalid(err) {
				t.Fatalf("create = %v; want an Invalid error from the %s", err, tt.by)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name the field %s", err, tt.field)
			}
		})
	}
}

func TestValidatingWebhookRejectsAnUpdateToAnUnusableImage(t *testing.T) {
	gb := guestbook("updated")
	if err := k8sClient.Create(context.Background(), gb); err != nil {
		t.Fatalf("creating: %v", err)
	}
	gb.Spec.Frontend.Image = "registry.example/gb frontend:v5"

	err := k8sClient.Update(context.Background(), gb)

	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.frontend.image") {
		t.Errorf("update with a space in the image = %v; want Invalid naming spec.frontend.image", err)
	}
}

// The validating webhook judges a spec only when an update changes it: an
// object being deleted, or an update that leaves the spec as it was, is
// admitted whatever the spec holds, so a finalizer can always be added and removed.
func TestValidateUpdateJudgesOnlyAChangedSpecOfALiveGuestbook(t *testing.T) {
	spaced := func() *webappv1.Guestbook {
		gb := guestbook("trapped")
		gb.Spec.Redis.Image = "docker.io/redis 6.0.5"
		return gb
	}
	deleting := spaced()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	labelled := spaced()
	labelled.Labels = map[string]string{"team": "web"}
	scaled := spaced()
	scaled.Spec.Frontend.Replicas = ptr.To[int32](3)
	broken := guestbook("trapped")
	broken.Spec.Redis.Image = "docker.io/redis 6.0.5"
	tests := []struct {
		name     string
		old, new *webappv1.Guestbook
		admitted bool
	}{
		{"being deleted, finalizer removed", spaced(), deleting, true},
		{"spec unchanged, label added", spaced(), labelled, true},
		{"spec changed, the bad image kept", spaced(), scaled, false},
		{"spec changed to a bad image", guestbook("trapped"), broken, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := (&GuestbookValidator{}).ValidateUpdate(context.Background(), tt.old, tt.new)

			if admitted := err == nil; admitted != tt.admitted {
				t.Errorf("ValidateUpdate = %v; want admitted %t", err, tt.admitted)
			}
		})
	}
}

// The webhook-on-delete case, through the API server: a Guestbook stored while
// the validating webhook was off, with an image no Pod can use and a finalizer;
// with the webhook on again, an update that adds a label and the update that
// removes the finalizer of the deleted Guestbook are both admitted.
func TestFinalizerOfGuestbookStoredWhileWebhookWasOffCanBeRemoved(t *testing.T) {
	ctx := context.Background()
	gb := guestbook("stored-while-off")
	gb.Spec.Redis.Image = "docker.io/redis 6.0.5"
	gb.Finalizers = []string{"webapp.controller-kit.dev/directory-entry"}
	withValidatingWebhookOff(t, func() {
		if err := k8sClient.Create(ctx, gb); err != nil {
			t.Fatalf("creating with the webhook off: %v", err)
		}
	})

	metav1.SetMetaDataLabel(&gb.ObjectMeta, "team", "web")
	if err := k8sClient.Update(ctx, gb); err != nil {
		t.Errorf("an update that adds a label and leaves the spec alone: %v; want it admitted", err)
	}
	if err := k8sClient.Delete(ctx, gb); err != nil {
		t.Fatalf("deleting: %v", err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(gb), gb); err != nil {
		t.Fatal(err)
	}
	gb.Finalizers = nil
	if err := k8sClient.Update(ctx, gb); err != nil {
		t.Fatalf("removing the finalizer of a Guestbook being deleted: %v; want it admitted", err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(gb), gb); !apierrors.IsNotFound(err) {
		t.Errorf("get after the finalizer was removed = %v; want NotFound", err)
	}
}

// withValidatingWebhookOff runs do with the validating webhook configuration
// deleted, then installs it again and waits until the API server calls the
// webhook again (it refuses a dry-run create of a Guestbook only it rejects).
func withValidatingWebhookOff(t *testing.T, do func()) {
	t.Helper()
	ctx := context.Background()
	var configs admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := k8sClient.List(ctx, &configs); err != nil || len(configs.Items) != 1 {
		t.Fatalf("listing validating webhook configurations = %d, %v; want the one envtest installed", len(configs.Items), err)
	}
	config := configs.Items[0]
	if err := k8sClient.Delete(ctx, &config); err != nil {
		t.Fatal(err)
	}
	rejectedByWebhook := func(ctx context.Context) bool {
		gb := guestbook("probe")
		gb.Spec.Frontend.Image = "registry.example/gb frontend:v5"
		err := k8sClient.Create(ctx, gb, client.DryRunAll)
		return apierrors.IsInvalid(err) && strings.Contains(err.Error(), "spec.frontend.image")
	}
	waitFor(t, "the webhook to be off", func(ctx context.Context) bool { return !rejectedByWebhook(ctx) })

	do()

	config.ResourceVersion, config.UID = "", ""
	if err := k8sClient.Create(ctx, &config); err != nil {
		t.Fatalf("installing the validating webhook again: %v", err)
	}
	waitFor(t, "the webhook to be on again", rejectedByWebhook)
}

// waitFor polls cond every 100 ms for up to 30 s, failing the test with what
// it waited for when cond never held.
func waitFor(t *testing.T, what string, cond func(context.Context) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) { return cond(ctx), nil })
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}
