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

// Package v1 holds the admission webhooks of webapp/v1 Guestbooks: a defaulting
// (mutating) webhook and a validating webhook, served by the manager.
package v1

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// SetupGuestbookWebhookWithManager registers both Guestbook webhooks with the
// manager's webhook server.
func SetupGuestbookWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &webappv1.Guestbook{}).
		WithValidator(&GuestbookValidator{}).
		WithDefaulter(&GuestbookDefaulter{}).
		Complete()
}

// +kubebuilder:webhook:path=/mutate-webapp-controller-kit-dev-v1-guestbook,mutating=true,failurePolicy=fail,sideEffects=None,groups=webapp.controller-kit.dev,resources=guestbooks,verbs=create;update,versions=v1,name=mguestbook-v1.kb.io,admissionReviewVersions=v1

// GuestbookDefaulter fills in the images of a Guestbook that names none. Numbers
// are defaulted by the CRD schema (+kubebuilder:default markers); the images are
// defaulted here so the stored object records the image that runs, and a newer
// operator with newer default images does not silently roll existing Guestbooks.
type GuestbookDefaulter struct{}

// Default sets spec.frontend.image and spec.redis.image when they are empty.
func (d *GuestbookDefaulter) Default(_ context.Context, gb *webappv1.Guestbook) error {
	if gb.Spec.Frontend.Image == "" {
		gb.Spec.Frontend.Image = webappv1.DefaultFrontendImage
	}
	if gb.Spec.Redis.Image == "" {
		gb.Spec.Redis.Image = webappv1.DefaultRedisImage
	}
	return nil
}

// +kubebuilder:webhook:path=/validate-webapp-controller-kit-dev-v1-guestbook,mutating=false,failurePolicy=fail,sideEffects=None,groups=webapp.controller-kit.dev,resources=guestbooks,verbs=create;update,versions=v1,name=vguestbook-v1.kb.io,admissionReviewVersions=v1

// GuestbookValidator rejects what the CRD schema does not: a name the children's
// Service names cannot be built from (webappv1.ValidateName, on create: names
// never change) and images no Pod can use (webappv1.ValidateSpec). The rest of
// the spec is validated by the schema's markers and CEL rules.
type GuestbookValidator struct{}

// ValidateCreate rejects a Guestbook whose name is not a DNS-1035 label of at most
// webappv1.MaxNameLength characters, with an error naming metadata.name.
func (v *GuestbookValidator) ValidateCreate(_ context.Context, gb *webappv1.Guestbook) (admission.Warnings, error) {
	if errs := append(webappv1.ValidateName(gb.Name), webappv1.ValidateSpec(&gb.Spec)...); len(errs) > 0 {
		return nil, invalid(gb, errs)
	}
	var warnings admission.Warnings
	if gb.Spec.Frontend.Replicas != nil && *gb.Spec.Frontend.Replicas == 0 {
		warnings = append(warnings, "spec.frontend.replicas is 0: the Guestbook serves no one until you scale it up")
	}
	return warnings, nil
}

// ValidateUpdate rejects an update that changes the spec to one the children
// cannot carry, with an error naming the field. An update to a Guestbook that is
// being deleted, or one that leaves the spec as it was apart from the images the
// defaulting webhook fills in (a label, a finalizer), is always admitted: a spec stored while this webhook was off must not keep the
// operator from adding or removing its finalizer, which would leave the
// Guestbook, and its namespace, Terminating for ever.
func (v *GuestbookValidator) ValidateUpdate(ctx context.Context, old, gb *webappv1.Guestbook) (admission.Warnings, error) {
	if !gb.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	// The defaulting webhook ran on gb but not on old: a Guestbook stored without
	// it has empty images that this update fills in. Compare both defaulted, or
	// the operator's finalizer update would count as a spec change.
	before, after := old.DeepCopy(), gb.DeepCopy()
	for _, g := range []*webappv1.Guestbook{before, after} {
		if err := (&GuestbookDefaulter{}).Default(ctx, g); err != nil {
			return nil, err
		}
	}
	if equality.Semantic.DeepEqual(before.Spec, after.Spec) {
		return nil, nil
	}
	if errs := webappv1.ValidateSpec(&gb.Spec); len(errs) > 0 {
		return nil, invalid(gb, errs)
	}
	return nil, nil
}

// invalid is the Invalid API error for a Guestbook: "Guestbook NAME is invalid:
// FIELD: ...", which kubectl shows as it is.
func invalid(gb *webappv1.Guestbook, errs field.ErrorList) error {
	return apierrors.NewInvalid(webappv1.GroupVersion.WithKind("Guestbook").GroupKind(), gb.Name, errs)
}

// ValidateDelete accepts every deletion: the webhook is not registered for deletions.
func (v *GuestbookValidator) ValidateDelete(_ context.Context, _ *webappv1.Guestbook) (admission.Warnings, error) {
	return nil, nil
}
