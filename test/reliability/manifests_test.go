//go:build e2e

package reliability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// manifestsTag is the tag every tier's Deployment gets, as `make deploy IMG=...`
// would set it. kwok runs no containers, so the image is never pulled or run.
const manifestsTag = "reliability"

// restricted is the Pod Security Standard the test namespaces enforce, warn
// about and audit: the strictest one, which a hardened cluster sets on every
// namespace it lets tenants deploy into.
var restricted = map[string]string{
	"pod-security.kubernetes.io/enforce": "restricted",
	"pod-security.kubernetes.io/warn":    "restricted",
	"pod-security.kubernetes.io/audit":   "restricted",
}

// shippedTier is what one tier's `make deploy` applies, and what its controller
// may and may not do once it runs.
type shippedTier struct {
	// dir is the tier's folder under the kit.
	dir string
	// render returns the YAML documents the tier's `make deploy` applies, in
	// its order, with the image set to image.
	render func(t *testing.T, root, image string) []byte
	// serviceAccount and deployment are the names the rendered manifests give
	// the controller's identity and workload.
	serviceAccount, deployment string
	// may lists what the controller calls (each must be allowed), mayNot what
	// it never needs (each must be refused).
	may, mayNot []permission
}

// permission is one `kubectl auth can-i` question.
type permission struct {
	verb, resource, subresource string
	// where is "ns" (the controller's own namespace), "elsewhere" (another
	// namespace, here default) or "cluster" (every namespace at once, -A, or a
	// cluster-scoped resource).
	where string
}

func (p permission) String() string {
	s := p.verb + " " + p.resource
	if p.subresource != "" {
		s += "/" + p.subresource
	}
	return s + " (" + p.where + ")"
}

// can builds a permission for the table of a tier: verbs separated by commas,
// all on one resource.
func can(verbs, resource, where string) []permission {
	var out []permission
	res, sub, _ := strings.Cut(resource, "/")
	for _, v := range strings.Split(verbs, ",") {
		out = append(out, permission{verb: v, resource: res, subresource: sub, where: where})
	}
	return out
}

func join(lists ...[]permission) []permission { return slices.Concat(lists...) }

// shippedTiers describes each tier's deploy target (its Makefile) and, from its
// code, the API calls its controller makes.
var shippedTiers = []shippedTier{{
	// workqueue-example/Makefile deploy: the namespace, config/rbac/, and the
	// Deployment with its image replaced by sed. The controller lists and
	// watches Pods in every namespace and patches their phase label; it records
	// no events and has no leader election.
	dir: "workqueue-example",
	render: func(t *testing.T, root, image string) []byte {
		dir := filepath.Join(root, "workqueue-example", "config")
		return concat(t,
			[]string{filepath.Join(dir, "manager", "namespace.yaml"), filepath.Join(dir, "rbac"), filepath.Join(dir, "manager", "deployment.yaml")},
			`image: controller-kit/workqueue-example:.*`, "image: "+image)
	},
	serviceAccount: "workqueue-example",
	deployment:     "workqueue-example",
	may: join(
		can("get,list,watch,patch", "pods", "cluster"),
	),
	mayNot: join(
		can("create,update,delete,deletecollection", "pods", "cluster"),
		can("update,patch", "pods/status", "cluster"),
		can("create", "pods/eviction", "cluster"),
		can("create", "pods/exec", "cluster"),
		can("get,list", "secrets", "ns"),
		can("get,list", "secrets", "cluster"),
		can("get,list", "configmaps", "cluster"),
		can("create", "events", "cluster"),
		can("get,create,update", "leases.coordination.k8s.io", "ns"),
		can("list,create", "deployments.apps", "cluster"),
		can("create", "serviceaccounts/token", "ns"),
		can("escalate,bind", "clusterroles.rbac.authorization.k8s.io", "cluster"),
	),
}, {
	// sample-controller/Makefile deploy: the Foo CRD, the namespace,
	// config/rbac/, and the Deployment with its image replaced by sed. The
	// controller lists and watches Foos and Deployments everywhere, creates and
	// scales (Update) Deployments, writes Foo status, records core/v1 events in
	// the Foos' namespaces, and holds a Lease in its own namespace.
	dir: "sample-controller",
	render: func(t *testing.T, root, image string) []byte {
		dir := filepath.Join(root, "sample-controller", "config")
		return concat(t,
			[]string{filepath.Join(dir, "crd", "samplecontroller.k8s.io_foos.yaml"), filepath.Join(dir, "manager", "namespace.yaml"),
				filepath.Join(dir, "rbac"), filepath.Join(dir, "manager", "deployment.yaml")},
			`image: controller-kit/sample-controller:.*`, "image: "+image)
	},
	serviceAccount: "sample-controller",
	deployment:     "sample-controller",
	may: join(
		can("get,list,watch", "foos.samplecontroller.k8s.io", "cluster"),
		can("update", "foos.samplecontroller.k8s.io/status", "cluster"),
		// blockOwnerDeletion on the Deployments' owner reference.
		can("update", "foos.samplecontroller.k8s.io/finalizers", "cluster"),
		can("get,list,watch,create,update", "deployments.apps", "cluster"),
		can("create,patch", "events", "cluster"),
		can("get,create,update", "leases.coordination.k8s.io", "ns"),
	),
	mayNot: join(
		// The garbage collector deletes a Foo's Deployment; the controller never does.
		can("delete,deletecollection,patch", "deployments.apps", "cluster"),
		// A Foo's spec is the user's: the controller writes only its status.
		can("create,update,patch,delete", "foos.samplecontroller.k8s.io", "cluster"),
		can("patch", "foos.samplecontroller.k8s.io/status", "cluster"),
		can("get,list", "secrets", "ns"),
		can("get,list", "secrets", "cluster"),
		can("list,create,delete", "pods", "cluster"),
		can("create", "services", "cluster"),
		can("delete", "events", "cluster"),
		// The Lease is its own namespace's, and only read and renewed.
		can("delete,list,watch,patch", "leases.coordination.k8s.io", "ns"),
		can("get,create,update", "leases.coordination.k8s.io", "elsewhere"),
		can("create", "serviceaccounts/token", "ns"),
		can("escalate,bind", "clusterroles.rbac.authorization.k8s.io", "cluster"),
	),
}, {
	// kubebuilder-guestbook/Makefile deploy: `kustomize build` of a throwaway
	// overlay over config/default that sets the image. config/default
	// includes the webhooks and the cert-manager objects that give them a
	// certificate; see renderGuestbook for what the test does with those.
	// The manager lists and watches Guestbooks, Deployments, Services and
	// Namespaces everywhere, creates and updates the children, updates
	// Guestbooks (finalizer) and their status, records events.k8s.io events,
	// keeps a directory ConfigMap in its own namespace (get, create, update
	// through the API reader; list and watch for the cache that holds that one
	// ConfigMap, to repair it), holds a Lease there (controller-runtime's
	// leader election records core/v1 events about it there), and reviews the
	// tokens of callers of its metrics endpoint.
	dir:            "kubebuilder-guestbook",
	render:         renderGuestbook,
	serviceAccount: "kubebuilder-guestbook-controller-manager",
	deployment:     "kubebuilder-guestbook-controller-manager",
	may: join(
		can("get,list,watch,update", "guestbooks.webapp.controller-kit.dev", "cluster"),
		can("update", "guestbooks.webapp.controller-kit.dev/status", "cluster"),
		can("update", "guestbooks.webapp.controller-kit.dev/finalizers", "cluster"),
		can("get,list,watch,create,update", "deployments.apps", "cluster"),
		can("get,list,watch,create,update", "services", "cluster"),
		can("get,list,watch", "namespaces", "cluster"),
		can("create,patch", "events.events.k8s.io", "cluster"),
		can("get,list,watch,create,update", "configmaps", "ns"),
		can("get,create,update", "leases.coordination.k8s.io", "ns"),
		can("create,patch", "events", "ns"),
		can("create", "tokenreviews.authentication.k8s.io", "cluster"),
		can("create", "subjectaccessreviews.authorization.k8s.io", "cluster"),
	),
	mayNot: join(
		// The garbage collector deletes a Guestbook's children.
		can("delete,deletecollection,patch", "deployments.apps", "cluster"),
		can("delete,deletecollection,patch", "services", "cluster"),
		can("create,delete,patch", "guestbooks.webapp.controller-kit.dev", "cluster"),
		can("create,update,delete", "namespaces", "cluster"),
		// The directory is one ConfigMap in its own namespace: nothing on
		// ConfigMaps anywhere else.
		can("delete,patch", "configmaps", "ns"),
		can("get,list,watch,create,update", "configmaps", "elsewhere"),
		can("list,watch,create,update", "configmaps", "cluster"),
		can("get,list", "secrets", "ns"),
		can("get,list", "secrets", "cluster"),
		can("delete,list,watch,patch", "leases.coordination.k8s.io", "ns"),
		can("get,create,update", "leases.coordination.k8s.io", "elsewhere"),
		can("create", "events", "elsewhere"),
		can("list,create,delete", "pods", "cluster"),
		can("create", "serviceaccounts/token", "ns"),
		can("escalate,bind", "clusterroles.rbac.authorization.k8s.io", "cluster"),
	),
}}

// TestShippedManifestsRunRestricted deploys each tier's in-cluster manifests,
// rendered as its `make deploy` renders them, into a fresh namespace that
// enforces the restricted Pod Security Standard, and checks what a hardened
// cluster would: every object admitted without a single warning, the
// controller's Pods created and scheduled, and its ServiceAccount allowed
// exactly the calls the controller makes and refused the rest. kwok runs no
// containers: this proves admission and RBAC, not the image.
func TestShippedManifestsRunRestricted(t *testing.T) {
	// Parallel, so it runs after the suite's sequential scenarios (the API
	// server outage would otherwise stop it halfway).
	t.Parallel()
	scenario(t)
	root := kittest.RepoRoot()
	for _, tier := range shippedTiers {
		t.Run(tier.dir, func(t *testing.T) {
			t.Parallel()
			deployShipped(t, root, tier)
		})
	}
}

// deployShipped is one tier of TestShippedManifestsRunRestricted.
func deployShipped(t *testing.T, root string, tier shippedTier) {
	ctx := context.Background()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "manifests-"+tier.dir)
	objs := moveToNamespace(t, decodeManifests(t, tier.render(t, root, "controller-kit/"+tier.dir+":"+manifestsTag)), ns)
	checkNoWildcards(t, objs)

	// The warnings of every apply, as kubectl would print them ("Warning: ...").
	warnings := &warningRecorder{}
	cfg := kittest.Config(t)
	cfg.WarningHandler = warnings
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))

	applied, dryRun := 0, 0
	start := time.Now()
	for _, m := range objs {
		gvk := m.obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, m.obj.GetName(), err)
		}
		var client dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if m.obj.GetNamespace() != "" {
			client = dyn.Resource(mapping.Resource).Namespace(m.obj.GetNamespace())
		}
		opts := metav1.ApplyOptions{FieldManager: "kubectl"}
		if m.dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		if _, err := client.Apply(ctx, m.obj.GetName(), m.obj, opts); err != nil {
			t.Errorf("%s %s was not admitted: %v", gvk.Kind, m.obj.GetName(), err)
			continue
		}
		if m.dryRun {
			dryRun++
			continue
		}
		applied++
		if mapping.Scope.Name() == "root" && (gvk.Kind == "ClusterRole" || gvk.Kind == "ClusterRoleBinding") {
			client, name := client, m.obj.GetName()
			t.Cleanup(func() {
				if err := client.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					t.Logf("deleting %s %s: %v", gvk.Kind, name, err)
				}
			})
		}
	}
	for _, w := range warnings.all() {
		t.Errorf("the API server warned: %s", w)
	}
	record(t, tier.dir+": objects applied", float64(applied), "")
	if dryRun > 0 {
		record(t, tier.dir+": objects admitted in dry run", float64(dryRun), "")
	}
	if t.Failed() {
		t.FailNow()
	}

	waitForControllerPods(t, cs, ns, tier.deployment)
	record(t, tier.dir+": controller Pods Running after apply", time.Since(start).Seconds(), "s")

	checkPermissions(t, ns, tier)
}

// concat reads the manifests of paths (files, or folders whose YAML files are
// read in name order, as `kubectl apply -f DIR` does) into one YAML stream, and
// replaces the matches of image with imageLine, as the Makefiles' sed does.
func concat(t *testing.T, paths []string, image, imageLine string) []byte {
	t.Helper()
	var files []string
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			matches, err := filepath.Glob(filepath.Join(p, "*.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(matches)
			files = append(files, matches...)
			continue
		}
		files = append(files, p)
	}
	var out bytes.Buffer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("\n---\n")
		out.Write(b)
	}
	return regexp.MustCompile(image).ReplaceAll(out.Bytes(), []byte(imageLine))
}

// renderGuestbook renders kubebuilder-guestbook/config/default through an
// overlay that sets the image, as the Makefile's with-image does.
//
// config/default is the tier's only in-cluster deployment, and it needs
// cert-manager: its Certificate and Issuer give the webhook server its
// certificate (the Secret webhook-server-cert, mounted by the Deployment) and
// the webhook configurations their CA bundle. The kit's local cluster has no
// cert-manager (its CRDs and controller are not part of the kit), so the test
// handles the webhook pieces this way, and docs/reliability.md says so:
//   - the cert-manager objects (group cert-manager.io) are left out: there is
//     no API to admit them, and nothing here to act on them;
//   - the Mutating- and ValidatingWebhookConfiguration are applied in server-side
//     dry run: admitted (and warned about) as any object, but never stored, since
//     with failurePolicy Fail and no webhook server running they would refuse
//     every Guestbook of the cluster, the other scenarios' too;
//   - everything else is applied as rendered, the Deployment with its webhook
//     certificate volume included: kwok schedules the Pod and marks it Running
//     without mounting anything, where a real kubelet would wait for the Secret.
func renderGuestbook(t *testing.T, root, image string) []byte {
	t.Helper()
	overlay := t.TempDir()
	base, err := filepath.Rel(overlay, filepath.Join(root, "kubebuilder-guestbook", "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	repo, tag, _ := strings.Cut(image, ":")
	kustomization := fmt.Sprintf("resources:\n- %s\nimages:\n- name: controller\n  newName: %s\n  newTag: %s\n", base, repo, tag)
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := kittest.Kustomize(overlay)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// manifest is one object to apply.
type manifest struct {
	obj *unstructured.Unstructured
	// dryRun: admitted but not stored (renderGuestbook says why).
	dryRun bool
}

// decodeManifests splits a YAML stream into its objects, empty documents left out.
func decodeManifests(t *testing.T, stream []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("decoding the rendered manifests: %v", err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// moveToNamespace rewrites the rendered objects for the test namespace ns: the
// tier's Namespace becomes ns with the restricted labels (and is applied first,
// so the Pod Security labels are in force before the Deployment arrives);
// namespaced objects and the ServiceAccount subjects of bindings move to ns;
// cluster-scoped RBAC and webhook names get ns as a suffix so the tiers and
// parallel runs never share one. The cert-manager objects are left out and the
// webhook configurations applied in dry run (see renderGuestbook).
func moveToNamespace(t *testing.T, objs []*unstructured.Unstructured, ns string) []manifest {
	t.Helper()
	suffix := func(name string) string { return name + "-" + ns }
	var first, rest []manifest
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		if gvk.Group == "cert-manager.io" {
			t.Logf("left out %s %s: the kit's cluster has no cert-manager", gvk.Kind, obj.GetName())
			continue
		}
		if obj.GetNamespace() != "" {
			obj.SetNamespace(ns)
		}
		dryRun := false
		switch gvk.Kind {
		case "Namespace":
			obj.SetName(ns)
			l := obj.GetLabels()
			if l == nil {
				l = map[string]string{}
			}
			for k, v := range restricted {
				l[k] = v
			}
			obj.SetLabels(l)
			first = append(first, manifest{obj: obj})
			continue
		case "ClusterRole":
			obj.SetName(suffix(obj.GetName()))
		case "ClusterRoleBinding", "RoleBinding":
			if gvk.Kind == "ClusterRoleBinding" {
				obj.SetName(suffix(obj.GetName()))
			}
			if kind, _, _ := unstructured.NestedString(obj.Object, "roleRef", "kind"); kind == "ClusterRole" {
				name, _, _ := unstructured.NestedString(obj.Object, "roleRef", "name")
				must(t, unstructured.SetNestedField(obj.Object, suffix(name), "roleRef", "name"))
			}
			subjects, _, _ := unstructured.NestedSlice(obj.Object, "subjects")
			for _, s := range subjects {
				if s := s.(map[string]any); s["kind"] == "ServiceAccount" {
					s["namespace"] = ns
				}
			}
			must(t, unstructured.SetNestedSlice(obj.Object, subjects, "subjects"))
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			obj.SetName(suffix(obj.GetName()))
			hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
			for _, h := range hooks {
				must(t, unstructured.SetNestedField(h.(map[string]any), ns, "clientConfig", "service", "namespace"))
			}
			must(t, unstructured.SetNestedSlice(obj.Object, hooks, "webhooks"))
			dryRun = true
		}
		rest = append(rest, manifest{obj: obj, dryRun: dryRun})
	}
	if len(first) != 1 {
		t.Fatalf("the rendered manifests hold %d Namespaces; want the tier's one", len(first))
	}
	return append(first, rest...)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// checkNoWildcards fails on a '*' in the verbs, resources or API groups of any
// rendered Role or ClusterRole: a wildcard grants what the next Kubernetes
// release adds, unread.
func checkNoWildcards(t *testing.T, objs []manifest) {
	t.Helper()
	for _, m := range objs {
		if k := m.obj.GetKind(); k != "Role" && k != "ClusterRole" {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(m.obj.Object, "rules")
		for i, r := range rules {
			for _, field := range []string{"verbs", "resources", "apiGroups"} {
				list, _, _ := unstructured.NestedStringSlice(r.(map[string]any), field)
				if slices.Contains(list, "*") {
					t.Errorf("%s %s rule %d: '*' in %s %v", m.obj.GetKind(), m.obj.GetName(), i, field, list)
				}
			}
		}
	}
}

// waitForControllerPods waits until every replica of the Deployment name has
// a Pod bound to a kwok node and Running, failing at once on a FailedCreate
// event (the Pod Security admission refusing the Pod template).
func waitForControllerPods(t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	var refused string
	kittest.Eventually(t, deadline, fmt.Sprintf("the Pods of Deployment %s/%s to run on kwok nodes", ns, name), func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Reason == "FailedCreate" {
				refused = fmt.Sprintf("%s %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
				return true, nil
			}
		}
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			return false, err
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
		if err != nil {
			return false, err
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		running := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running >= int(want), nil
	})
	if refused != "" {
		t.Fatalf("the controller's Pod was not created: %s", refused)
	}
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		node, err := cs.CoreV1().Nodes().Get(context.Background(), p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if node.Annotations["kwok.x-k8s.io/node"] != "fake" {
			t.Errorf("Pod %s runs on node %s, which is not a kwok node (annotations %v)", p.Name, node.Name, node.Annotations)
		}
		t.Logf("Pod %s: Running on kwok node %s", p.Name, p.Spec.NodeName)
	}
}

// checkPermissions asks `kubectl auth can-i`, as the tier's ServiceAccount,
// every question of the tier's tables, and reads only kubectl's exit code (0
// yes, 1 no).
func checkPermissions(t *testing.T, ns string, tier shippedTier) {
	t.Helper()
	as := "--as=system:serviceaccount:" + ns + ":" + tier.serviceAccount
	ask := func(p permission) bool {
		args := []string{"auth", "can-i", as, p.verb, p.resource}
		if p.subresource != "" {
			args = append(args, "--subresource="+p.subresource)
		}
		switch p.where {
		case "ns":
			args = append(args, "-n", ns)
		case "elsewhere":
			args = append(args, "-n", metav1.NamespaceDefault)
		case "cluster":
			args = append(args, "--all-namespaces")
		default:
			t.Fatalf("%s: where is %q", p, p.where)
		}
		out, err := kittest.KubectlE(args...)
		var exit *exec.ExitError
		switch {
		case err == nil:
			return true
		case errors.As(err, &exit) && exit.ExitCode() == 1:
			return false
		default:
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
			return false
		}
	}
	for _, p := range tier.may {
		if !ask(p) {
			t.Errorf("%s cannot %s, which the controller calls", tier.serviceAccount, p)
		}
	}
	for _, p := range tier.mayNot {
		if ask(p) {
			t.Errorf("%s can %s, which the controller never needs", tier.serviceAccount, p)
		}
	}
	record(t, tier.dir+": permissions checked, allowed", float64(len(tier.may)), "")
	record(t, tier.dir+": permissions checked, refused", float64(len(tier.mayNot)), "")
}

// warningRecorder is a rest.WarningHandler that keeps every warning the API
// server sends.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningRecorder) HandleWarningHeader(code int, agent, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

func (w *warningRecorder) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.warnings)
}
