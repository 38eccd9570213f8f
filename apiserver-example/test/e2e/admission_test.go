//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// The exercise admission-plugin: a validating admission plugin of the
// learner's own, compiled into kube-apiserver from their copy of Kubernetes'
// source (make kube-src, _output/kubernetes), swapped into the running cluster
// (make kube-restart WHAT=kube-apiserver FLAGS=--enable-admission-plugins=...),
// that refuses a Foo asking for more than maxReplicas replicas.
//
// What its checks read, by the environment make check sets (kittest's env.go):
//   - nothing set: the learner's copy and the cluster's kube-apiserver as it runs;
//   - KIT_KUBE_SOLUTION=<patch>: a fresh copy of the suite's own with the
//     reference solution applied, whose kube-apiserver setupAdmission builds and
//     runs in the cluster, with referencePlugin turned on, for the tests' time
//     (then the suite's Teardown puts back the binary and the flag that ran before);
//   - KIT_KUBE_PRISTINE=1: a fresh, unchanged copy and the pinned
//     kube-apiserver (bin/), which must fail every check of the exercise.
const (
	// admission is the exercise's name, as EXERCISE= and SOLUTION= take it.
	admission = "admission-plugin"
	// apiserver is the component the exercise swaps.
	apiserver = "kube-apiserver"
	// maxReplicas is the most replicas the exercise lets a Foo ask for.
	maxReplicas = 10
	// referencePlugin is the name the reference solution
	// (docs/solutions/06-kube-apiserver/kubernetes/admission-plugin.patch)
	// registers its plugin under.
	referencePlugin = "FooReplicasLimit"
	// pluginsFlag is the flag that turns admission plugins on.
	pluginsFlag = "--enable-admission-plugins"
	// takesOneOffLabel marks the Foos that the check's MutatingAdmissionPolicy
	// (takeOneReplicaOff) lowers by one replica.
	takesOneOffLabel = "controller-kit.dev/lesson6-takes-one-off"
)

var (
	// kubeCopy is the copy of Kubernetes' source under check, set by
	// setupAdmission, and copyDir its folder; the suite's Teardown puts back
	// what setupAdmission changed in the cluster and removes the copy it made.
	kubeCopy kittest.KubeCopy
	copyDir  string
)

// selected reports whether make check asked for exercise's checks.
func selected(exercise string) bool {
	return slices.Contains(strings.Split(os.Getenv(kittest.ExerciseEnv), ","), exercise)
}

// setupAdmission picks the copy under check and, for a solution or the
// pristine source, makes one and runs its kube-apiserver (or the pinned one),
// with the plugin turned on for a solution and off for the pristine source.
func setupAdmission() error {
	var err error
	kubeCopy, err = kittest.PrepareKubeCopy(apiserver, "kit-lesson6-")
	copyDir = kubeCopy.Dir
	if err != nil {
		return err
	}
	// The plugins that ran before, the reference's taken out (the pinned
	// binary refuses to start with a plugin it does not have), and put back
	// at the end for a solution.
	return kubeCopy.SwapIn(pluginsFlag, func(running string) string {
		var plugins []string
		for _, p := range strings.Split(running, ",") {
			if p != "" && p != referencePlugin {
				plugins = append(plugins, p)
			}
		}
		if os.Getenv(kittest.KubeSolutionEnv) != "" {
			plugins = append(plugins, referencePlugin)
		}
		return strings.Join(plugins, ",")
	})
}

// gitCopy runs git in the copy and returns its output.
func gitCopy(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", copyDir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %s in %s: %v (%s)", strings.Join(args, " "), copyDir, err, stderrOf(err))
	}
	return string(out)
}

func TestExerciseAdmissionPluginIsInTheCopy(t *testing.T) {
	kittest.Exercise(t, admission)
	kittest.RequireKubeCopy(t, copyDir)
	version := kittest.KubeCopyVersion(t, copyDir)
	// The files added since the pinned version, committed or not, and those git
	// does not track yet.
	added := strings.Fields(gitCopy(t, "diff", "--name-only", "--diff-filter=A", version))
	added = append(added, strings.Fields(gitCopy(t, "ls-files", "--others", "--exclude-standard"))...)
	var packages []string
	for _, path := range added {
		dir := filepath.ToSlash(filepath.Dir(path))
		if !strings.HasPrefix(dir, "plugin/pkg/admission/") || !strings.HasSuffix(path, ".go") ||
			strings.HasSuffix(path, "_test.go") || slices.Contains(packages, dir) {
			continue
		}
		// A package of its own: a folder the pinned version does not have.
		if exec.Command("git", "-C", copyDir, "cat-file", "-e", version+":"+dir).Run() == nil {
			continue
		}
		packages = append(packages, dir)
	}
	if len(packages) == 0 {
		t.Fatalf("the copy adds no package under plugin/pkg/admission (a new folder with a .go file); write your plugin there (git -C %s status)", copyDir)
	}
	const registry = "pkg/kubeapiserver/options/plugins.go"
	var importLine, entry, register bool
	for _, line := range strings.Split(gitCopy(t, "diff", "-U0", version, "--", registry), "\n") {
		line, ok := strings.CutPrefix(line, "+")
		if !ok || strings.HasPrefix(line, "++") {
			continue
		}
		for _, dir := range packages {
			importLine = importLine || strings.Contains(line, `"k8s.io/kubernetes/`+dir+`"`)
		}
		entry = entry || strings.Contains(line, ".PluginName")
		register = register || strings.Contains(line, ".Register(plugins)")
	}
	if !importLine || !entry || !register {
		t.Errorf("%s adds: an import of your package (%s) = %v, an entry NAME.PluginName in AllOrderedPlugins = %v, a call NAME.Register(plugins) in RegisterAllAdmissionPlugins = %v; want all three (git -C %s diff %s -- %s)",
			registry, strings.Join(packages, ", "), importLine, entry, register, copyDir, version, registry)
	}
}

func TestExerciseAdmissionRunningAPIServerRefusesTheFoo(t *testing.T) {
	kittest.Exercise(t, admission)
	kittest.RequireKubeCopy(t, copyDir)
	installFooCRD(t)
	cs := kittest.Clientset(t)
	client, err := dynamic.NewForConfig(kittest.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	ns := kittest.Namespace(t, cs, "lesson6-admission")
	foos := client.Resource(kittest.FooGVR).Namespace(ns)
	// The Foos are deleted before the namespace is (cleanups run last
	// first), not left to the namespace controller: the lesson's next step
	// restarts the API server, and a namespace deleted while the restarted
	// server does not serve Foos yet keeps them, for lesson 2's controller
	// to fail on in a namespace that is gone.
	t.Cleanup(func() {
		if err := foos.DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Logf("deleting the test's Foos: %v", err)
		}
	})
	ctx := t.Context()

	// The Foo to refuse, asking for one replica more than the limit.
	big := kittest.NewFoo(ns, 0, maxReplicas+1)
	_, err = foos.Create(ctx, big, metav1.CreateOptions{})
	requireRefused(t, err, fmt.Sprintf("the create of Foo %s with spec.replicas %d", big.GetName(), maxReplicas+1))

	// The Foos and the Deployment to admit.
	atLimit := kittest.NewFoo(ns, 1, maxReplicas)
	unset := kittest.NewFoo(ns, 2, 0)
	unstructured.RemoveNestedField(unset.Object, "spec", "replicas")
	for _, foo := range []*unstructured.Unstructured{atLimit, unset} {
		if _, err := foos.Create(ctx, foo, metav1.CreateOptions{}); err != nil {
			replicas, found, _ := unstructured.NestedInt64(foo.Object, "spec", "replicas")
			t.Errorf("creating Foo %s (spec.replicas %d, set: %v): %v; want it admitted: only a Foo above %d replicas is refused", foo.GetName(), replicas, found, err, maxReplicas)
		}
	}
	deployment := newDeployment(ns, "eleven", maxReplicas+1)
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment, metav1.CreateOptions{}); err != nil {
		t.Errorf("creating Deployment %s with spec.replicas %d: %v; want it admitted: the plugin judges Foos only", deployment.Name, maxReplicas+1, err)
	}

	// An update above the limit is refused too.
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, maxReplicas+1))
	_, err = foos.Patch(ctx, atLimit.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
	requireRefused(t, err, fmt.Sprintf("the update of Foo %s to spec.replicas %d", atLimit.GetName(), maxReplicas+1))

	// What the API server holds: the Foos it admitted, at the replicas they were
	// admitted with, and no Foo it refused.
	if _, err := foos.Get(ctx, big.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("getting Foo %s: %v; want NotFound: it was refused", big.GetName(), err)
	}
	for name, want := range map[string]int64{atLimit.GetName(): maxReplicas, unset.GetName(): 1} {
		got, err := foos.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("getting Foo %s: %v; want it stored", name, err)
			continue
		}
		if replicas, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); replicas != want {
			t.Errorf("Foo %s has spec.replicas %d; want %d (the CRD's default is 1)", name, replicas, want)
		}
	}
	if _, err := cs.AppsV1().Deployments(ns).Get(ctx, deployment.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("getting Deployment %s: %v; want it stored", deployment.Name, err)
	}

	// A Foo sent with 11 replicas that a MutatingAdmissionPolicy lowers to 10
	// is admitted: a validating plugin judges the object as it will be stored.
	// A plugin that refuses in the mutating phase (Admit) sees the 11 the
	// client sent, as the mutating plugins of AllOrderedPlugins run before the
	// policies, and refuses it. (The other way, a policy raising 10 to 11, could
	// not tell the two apart: a policy that changes the object has the whole
	// mutating chain run again, and Admit then sees the 11 too.)
	policy := takeOneReplicaOff(t, cs, foos, ns)
	lowered := kittest.NewFoo(ns, 3, maxReplicas+1)
	lowered.SetLabels(map[string]string{takesOneOffLabel: "true"})
	stored, err := foos.Create(ctx, lowered, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the create of Foo %s with spec.replicas %d, labelled %s, which the MutatingAdmissionPolicy %s lowers to %d before validation, failed with %v; want it admitted: refuse in Validate, on the object as it will be stored, not in Admit, which the chain calls before the policy has run (a plugin that is an admission.MutationInterface is one)",
			lowered.GetName(), maxReplicas+1, takesOneOffLabel, policy, maxReplicas, err)
	}
	if replicas, _, _ := unstructured.NestedInt64(stored.Object, "spec", "replicas"); replicas != maxReplicas {
		t.Errorf("Foo %s, labelled %s, was stored with spec.replicas %d; want %d, lowered by the MutatingAdmissionPolicy %s", lowered.GetName(), takesOneOffLabel, replicas, maxReplicas, policy)
	}
}

// takeOneReplicaOff creates a MutatingAdmissionPolicy, and its binding to
// namespace, that takes one replica off each Foo labelled takesOneOffLabel
// created there, waits until the API server applies it (a server-side dry-run
// create through foos, which stores nothing, comes back lowered) and returns
// its name. Both are deleted when the test ends. The policy plugin is on by
// default (GA since 1.36), so no flag of the API server changes.
func takeOneReplicaOff(t *testing.T, cs kubernetes.Interface, foos dynamic.ResourceInterface, namespace string) string {
	t.Helper()
	ctx := t.Context()
	name := namespace + "-takes-one-off"
	policies := cs.AdmissionregistrationV1().MutatingAdmissionPolicies()
	policy := &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule: admissionregistrationv1.Rule{
							APIGroups:   []string{kittest.FooGVR.Group},
							APIVersions: []string{kittest.FooGVR.Version},
							Resources:   []string{kittest.FooGVR.Resource},
						},
					},
				}},
			},
			FailurePolicy:      ptr.To(admissionregistrationv1.Fail),
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			Mutations: []admissionregistrationv1.Mutation{{
				PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
					Expression: "Object{spec: Object.spec{replicas: object.spec.replicas - 1}}",
				},
			}},
		},
	}
	if _, err := policies.Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the MutatingAdmissionPolicy %s (admissionregistration.k8s.io/v1, served since 1.36): %v", name, err)
	}
	t.Cleanup(func() {
		if err := policies.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting the MutatingAdmissionPolicy %s: %v", name, err)
		}
	})
	bindings := cs.AdmissionregistrationV1().MutatingAdmissionPolicyBindings()
	binding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{
			PolicyName: name,
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}},
				ObjectSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{takesOneOffLabel: "true"}},
			},
		},
	}
	if _, err := bindings.Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the MutatingAdmissionPolicyBinding %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := bindings.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting the MutatingAdmissionPolicyBinding %s: %v", name, err)
		}
	})
	// The API server learns of the policy and its binding through a watch:
	// until then a create passes unchanged. The probe asks for few enough
	// replicas that any plugin admits it.
	const probeReplicas = 5
	probe := kittest.NewFoo(namespace, 99, probeReplicas)
	probe.SetLabels(map[string]string{takesOneOffLabel: "true"})
	kittest.Eventually(t, deadline, "the MutatingAdmissionPolicy "+name+" to lower a labelled Foo", func(ctx context.Context) (bool, error) {
		got, err := foos.Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, fmt.Errorf("the server-side dry-run create of Foo %s with spec.replicas %d: %w", probe.GetName(), probeReplicas, err)
		}
		replicas, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas")
		return replicas == probeReplicas-1, nil
	})
	return name
}

// requireRefused fails the test unless err is the refusal of what: 403
// Forbidden, from admission, with a message naming spec.replicas and the limit.
func requireRefused(t *testing.T, err error, what string) {
	t.Helper()
	var status apierrors.APIStatus
	switch {
	case err == nil:
		runYours := fmt.Sprintf("make kube-build WHAT=%s && make kube-restart WHAT=%s FLAGS=%s=OwnerReferencesPermissionEnforcement,YourPlugin", apiserver, apiserver, pluginsFlag)
		if pinned := filepath.Join(kittest.RepoRoot(), "bin", apiserver); runningBinary(apiserver) == pinned {
			t.Fatalf("%s was admitted; want it refused, 403 Forbidden: the cluster's %s runs the pinned binary, %s, not your build (the exercise's last step puts the pinned one back; check before it). Run yours again: %s",
				what, apiserver, pinned, runYours)
		}
		t.Fatalf("%s was admitted; want it refused, 403 Forbidden: does the running kube-apiserver have your plugin, turned on? (%s; make kube-args WHAT=%s | grep admission)",
			what, runYours, apiserver)
	case !errors.As(err, &status) || status.Status().Code != http.StatusForbidden:
		t.Fatalf("%s failed with %v; want 403 Forbidden (admission.NewForbidden)", what, err)
	}
	message := status.Status().Message
	if !strings.Contains(message, "spec.replicas") || !strings.Contains(message, fmt.Sprint(maxReplicas)) {
		t.Errorf("%s was refused with %q; want a message that names the field, spec.replicas, and the limit, %d", what, message, maxReplicas)
	}
}

// runningBinary returns the binary the kit's local cluster runs the component
// name on, or "" when it cannot tell (another kind of cluster).
func runningBinary(name string) string {
	info, err := kittest.CurrentClusterInfo()
	if err != nil {
		return ""
	}
	binary, err := kittest.RunningBinary(info.Name, name)
	if err != nil {
		return ""
	}
	return binary
}

// newDeployment returns the Deployment name in namespace with replicas of
// pause, its Pods labelled app=name.
func newDeployment(namespace, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}
