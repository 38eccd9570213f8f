package kittest

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// probeUser is the user WaitForCRD impersonates: it may create ConfigMaps in the
// default namespace and nothing else, so the admission check below cannot be
// skipped the way it is for an admin, who may set finalizers on anything.
const probeUser = "kittest:crd-probe"

// WaitForCRD waits up to timeout until a freshly applied CRD can be used the way a
// controller running with its own RBAC uses it: the CRD named crdName is
// Established, and the API server's admission chain can resolve apiVersion/kind
// as an owner. The second part matters on the kit's cluster, whose
// OwnerReferencesPermissionEnforcement plugin looks up the owner's kind when a
// non-admin creates a child with blockOwnerDeletion: until the plugin's discovery
// cache has caught up with the new CRD (it is reset every 30 s), such a create is
// refused as "forbidden ... cannot find RESTMapping", which a suite would wrongly
// blame on the controller's RBAC. It probes with a dry-run create, as probeUser, of
// a ConfigMap owned by a made-up object of that kind, and waits for any answer but
// that one. It returns an error naming what did not happen.
func WaitForCRD(crdName, apiVersion, kind string, timeout time.Duration) error {
	if out, err := KubectlE("wait", "--for=condition=Established", "--timeout="+timeout.String(), "crd/"+crdName); err != nil {
		return fmt.Errorf("CRD %s is not Established: %w (%s)", crdName, err, out)
	}
	raw, _, err := LoadKubeconfig()
	if err != nil {
		return err
	}
	cfg, err := clientcmd.NewDefaultClientConfig(raw, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return err
	}
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "kittest-crd-probe", Namespace: metav1.NamespaceDefault},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: role.ObjectMeta,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: probeUser}},
	}
	if _, err := admin.RbacV1().Roles(role.Namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the probe's Role: %w", err)
	}
	if _, err := admin.RbacV1().RoleBindings(binding.Namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the probe's RoleBinding: %w", err)
	}
	probeCfg := rest.CopyConfig(cfg)
	probeCfg.Impersonate = rest.ImpersonationConfig{UserName: probeUser}
	probe, err := kubernetes.NewForConfig(probeCfg)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "kittest-crd-probe-",
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: apiVersion, Kind: kind, Name: "kittest-probe",
			UID: "00000000-0000-0000-0000-000000000000", BlockOwnerDeletion: ptr.To(true),
		}},
	}}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true,
		func(ctx context.Context) (bool, error) {
			_, last = probe.CoreV1().ConfigMaps(metav1.NamespaceDefault).Create(ctx, cm,
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			// Refused for lacking finalizer rights is the answer we want: the
			// plugin found the kind. Only a failed lookup means "not yet".
			return last == nil || !strings.Contains(last.Error(), "cannot find RESTMapping"), nil
		})
	if err != nil {
		return fmt.Errorf("the API server's admission still cannot resolve %s %s as an owner after %s: %v", apiVersion, kind, timeout, last)
	}
	return nil
}
