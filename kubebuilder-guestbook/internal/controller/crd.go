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

package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// GuestbookGVK is the group, version and kind the operator reconciles.
var GuestbookGVK = webappv1.GroupVersion.WithKind("Guestbook")

// RequireCRD returns an error naming the CRD and the command that installs it
// when the API server does not serve gvk. The manager calls it before it starts:
// without the CRD the Guestbook informer could never sync, and the operator
// would wait for the cache sync timeout while logging retries.
func RequireCRD(mapper meta.RESTMapper, gvk schema.GroupVersionKind, installHint string) error {
	_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return fmt.Errorf("the API server does not serve %s: its CRD is not installed; %s", gvk, installHint)
	}
	if err != nil {
		return fmt.Errorf("looking up %s: %w", gvk, err)
	}
	return nil
}
