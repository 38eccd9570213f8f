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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

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
