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

// Package manifests checks properties of the shipped manifests under config/
// that no cluster test would notice until a learner's deploy goes wrong.
package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// read decodes the documents of the given kind in a YAML file under config/;
// it fails the test when there are none.
func read[T any](t *testing.T, path string, kind string) []T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", path))
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, doc := range strings.Split(string(data), "\n---") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if meta.Kind != kind {
			continue
		}
		var obj T
		if err := yaml.UnmarshalStrict([]byte(doc), &obj); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, obj)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no %s", path, kind)
	}
	return out
}

// With the status subresource, a plain update of a Guestbook cannot change its
// status and the status writes need their own RBAC (guestbooks/status).
func TestCRDHasStatusSubresource(t *testing.T) {
	crd := read[apiextensionsv1.CustomResourceDefinition](t, "crd/bases/webapp.controller-kit.dev_guestbooks.yaml", "CustomResourceDefinition")[0]
	for _, v := range crd.Spec.Versions {
		if v.Subresources == nil || v.Subresources.Status == nil {
			t.Errorf("version %s has no status subresource", v.Name)
		}
	}
}

// The image is loaded into the node under a commit tag: the manager must never pull it.
func TestManagerNeverPullsItsImage(t *testing.T) {
	d := read[appsv1.Deployment](t, "manager/manager.yaml", "Deployment")[0]
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("container %s: imagePullPolicy %q; want IfNotPresent", c.Name, c.ImagePullPolicy)
		}
	}
}

// Least privilege: no wildcards, and nothing deleted by hand (the garbage
// collector deletes the children).
func TestManagerRoleHasNoWildcardsAndNoDelete(t *testing.T) {
	var rules []rbacv1.PolicyRule
	for _, r := range read[rbacv1.ClusterRole](t, "rbac/role.yaml", "ClusterRole") {
		rules = append(rules, r.Rules...)
	}
	for _, r := range read[rbacv1.Role](t, "rbac/role.yaml", "Role") {
		rules = append(rules, r.Rules...)
	}
	for _, rule := range rules {
		for _, list := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs} {
			if slices.Contains(list, "*") {
				t.Errorf("rule %+v has a wildcard", rule)
			}
		}
		if slices.Contains(rule.Verbs, "delete") || slices.Contains(rule.Verbs, "deletecollection") {
			t.Errorf("rule %+v lets the operator delete", rule)
		}
	}
	finalizers := false
	for _, rule := range rules {
		if slices.Contains(rule.Resources, "guestbooks/finalizers") && slices.Contains(rule.Verbs, "update") {
			finalizers = true
		}
	}
	if !finalizers {
		t.Error("no update on guestbooks/finalizers: owner references with blockOwnerDeletion would be refused")
	}
}
