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
	defaulted := labelled.DeepCopy() // as the defaulting webhook hands it over
	defaulted.Spec.Frontend.Image = webappv1.DefaultFrontendImage
	tests := []struct {
		name     string
		old, new *webappv1.Guestbook
		admitted bool
	}{
		{"being deleted, finalizer removed", spaced(), deleting, true},
		{"spec unchanged, label added", spaced(), labelled, true},
		{"spec unchanged but for a defaulted image, label added", spaced(), defaulted, true},
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

// TestFinalizerOfGuestbookStoredWhileWebhookWasOffCanBeRemoved stores, with both
// webhooks off, a Guestbook whose spec the validating webhook would refuse and
// which the defaulting webhook never filled in (no frontend image), with the
// operator's finalizer. With the webhooks on again, updates that leave the spec
// alone (a label, the finalizer) are admitted, although the defaulting webhook
// fills in the missing image on each of them. envtest registers the webhook
// configurations as controller-gen writes them (config/webhook/manifests.yaml),
// without the matchConditions config/webhook/kustomization.yaml adds, which
// would keep such updates from the webhooks altogether: ValidateUpdate must
// admit them on a cluster configured either way.
func TestFinalizerOfGuestbookStoredWhileWebhookWasOffCanBeRemoved(t *testing.T) {
	ctx := context.Background()
	gb := guestbook("stored-while-off")
	gb.Spec.Redis.Image = "docker.io/redis 6.0.5"
	gb.Finalizers = []string{"webapp.controller-kit.dev/directory-entry"}
	withWebhooksOff(t, func() {
		if err := k8sClient.Create(ctx, gb); err != nil {
			t.Fatalf("creating with the webhooks off: %v", err)
		}
	})
	if gb.Spec.Frontend.Image != "" {
		t.Fatalf("stored frontend image %q; want it empty (stored without the defaulting webhook)", gb.Spec.Frontend.Image)
	}

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

// withWebhooksOff runs do with both webhook configurations (validating and
// mutating) deleted, then installs them again and waits until the API server
// calls them again: it probes with dry-run creates, one the validating webhook
// refuses and one the defaulting webhook fills in.
func withWebhooksOff(t *testing.T, do func()) {
	t.Helper()
	ctx := context.Background()
	var validating admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := k8sClient.List(ctx, &validating); err != nil || len(validating.Items) != 1 {
		t.Fatalf("listing validating webhook configurations = %d, %v; want the one envtest installed", len(validating.Items), err)
	}
	var mutating admissionregistrationv1.MutatingWebhookConfigurationList
	if err := k8sClient.List(ctx, &mutating); err != nil || len(mutating.Items) != 1 {
		t.Fatalf("listing mutating webhook configurations = %d, %v; want the one envtest installed", len(mutating.Items), err)
	}
	configs := []client.Object{&validating.Items[0], &mutating.Items[0]}
	for _, config := range configs {
		if err := k8sClient.Delete(ctx, config); err != nil {
			t.Fatal(err)
		}
	}
	rejectedByWebhook := func(ctx context.Context) bool {
		gb := guestbook("probe")
		gb.Spec.Frontend.Image = "registry.example/gb frontend:v5"
		err := k8sClient.Create(ctx, gb, client.DryRunAll)
		return apierrors.IsInvalid(err) && strings.Contains(err.Error(), "spec.frontend.image")
	}
	defaultedByWebhook := func(ctx context.Context) bool {
		gb := guestbook("probe")
		return k8sClient.Create(ctx, gb, client.DryRunAll) == nil && gb.Spec.Frontend.Image != ""
	}
	waitFor(t, "the webhooks to be off", func(ctx context.Context) bool { return !rejectedByWebhook(ctx) && !defaultedByWebhook(ctx) })

	do()

	for _, config := range configs {
		config.SetResourceVersion("")
		config.SetUID("")
		if err := k8sClient.Create(ctx, config); err != nil {
			t.Fatalf("installing the webhook configuration %s again: %v", config.GetName(), err)
		}
	}
	waitFor(t, "the webhooks to be on again", func(ctx context.Context) bool { return rejectedByWebhook(ctx) && defaultedByWebhook(ctx) })
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
