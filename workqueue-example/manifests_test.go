package main

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// readManifests splits the YAML file path into its documents and returns them
// keyed by their kind.
func readManifests(t *testing.T, path string) map[string][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs[meta.Kind] = doc
	}
	return docs
}

func TestDeploymentRunsTheLoadedImageAsTheShippedServiceAccount(t *testing.T) {
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(readManifests(t, "config/manager/deployment.yaml")["Deployment"], &d); err != nil {
		t.Fatal(err)
	}
	var sa corev1.ServiceAccount
	if err := yaml.UnmarshalStrict(readManifests(t, "config/rbac/service_account.yaml")["ServiceAccount"], &sa); err != nil {
		t.Fatal(err)
	}

	c := d.Spec.Template.Spec.Containers[0]
	// kind load puts the image on the node; with "latest" or PullAlways the kubelet
	// would try a registry instead and the Pod would never run.
	if c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("imagePullPolicy = %q, want IfNotPresent", c.ImagePullPolicy)
	}
	if strings.HasSuffix(c.Image, ":latest") || !strings.Contains(c.Image, ":") {
		t.Errorf("image %q has no tag or the tag latest; make deploy sets the git commit", c.Image)
	}
	if got := d.Spec.Template.Spec.ServiceAccountName; got != sa.Name || d.Namespace != sa.Namespace {
		t.Errorf("Deployment runs as %s/%s, want the ServiceAccount bound by config/rbac, %s/%s", d.Namespace, got, sa.Namespace, sa.Name)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("replicas = %v, want 1: without leader election two copies would both reconcile every Pod", d.Spec.Replicas)
	}
}

func TestRolesGrantOnlyWhatTheControllerUses(t *testing.T) {
	var clusterRole rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(readManifests(t, "config/rbac/role.yaml")["ClusterRole"], &clusterRole); err != nil {
		t.Fatal(err)
	}
	var role rbacv1.Role
	if err := yaml.UnmarshalStrict(readManifests(t, "config/rbac-namespaced/role.yaml")["Role"], &role); err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "patch"}}}
	equal := func(a, b rbacv1.PolicyRule) bool {
		return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) && slices.Equal(a.Verbs, b.Verbs) &&
			len(a.ResourceNames) == 0 && len(a.NonResourceURLs) == 0
	}
	if !slices.EqualFunc(clusterRole.Rules, want, equal) {
		t.Errorf("ClusterRole rules = %+v, want exactly %+v (no wildcards, nothing unused)", clusterRole.Rules, want)
	}
	if !slices.EqualFunc(role.Rules, want, equal) {
		t.Errorf("namespaced Role rules = %+v, want exactly %+v (no wildcards, nothing unused)", role.Rules, want)
	}
}
