//go:build e2e

package kittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitsCRD is a CRD of this test's own, so that the shared cluster's other
// suites never see it.
const waitsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.crd-delete-check.kit.test
spec:
  group: crd-delete-check.kit.test
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// Deleting a CRD while an object of it carries a finalizer no running controller
// removes waits forever, leaving the CRD and the object terminating (make
// uninstall and make undeploy of kubebuilder-guestbook did). Its hack/crd-delete-check.sh,
// which those targets run first, refuses within seconds, names the object
// (namespace/name) and the commands that unblock it, and changes nothing; once
// the finalizer is gone it lets the delete go ahead.
func TestCRDDeleteCheckNamesEachFinalizedObjectAndChangesNothing(t *testing.T) {
	t.Parallel() // it mostly waits on the API server, as the other checks here do
	crd := filepath.Join(t.TempDir(), "crd.yaml")
	if err := os.WriteFile(crd, []byte(waitsCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	Kubectl(t, "apply", "-f", crd)
	t.Cleanup(func() {
		KubectlE("-n", "default", "patch", "widgets.crd-delete-check.kit.test", "w1", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
		KubectlE("delete", "--ignore-not-found", "--wait=false", "-f", crd)
	})
	Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd/widgets.crd-delete-check.kit.test")
	widget := filepath.Join(t.TempDir(), "widget.yaml")
	if err := os.WriteFile(widget, []byte("apiVersion: crd-delete-check.kit.test/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\n  finalizers: [crd-delete-check.kit.test/cleanup]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Kubectl(t, "apply", "-f", widget)

	check := func() (int, string, time.Duration) {
		cmd := exec.Command(filepath.Join(RepoRoot(), "kubebuilder-guestbook", "hack", "crd-delete-check.sh"), "make uninstall")
		cmd.Env = append(os.Environ(), "KUBECONFIG="+Kubeconfig())
		cmd.Stdin = strings.NewReader(waitsCRD)
		start := time.Now()
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out), time.Since(start)
	}
	code, out, took := check()
	t.Logf("refused in %s", took.Round(100*time.Millisecond))
	if code != 1 {
		t.Errorf("exit code %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{
		"deleting the CRD widgets.crd-delete-check.kit.test would wait",
		"default/w1 (finalizer crd-delete-check.kit.test/cleanup)",
		"kubectl -n default delete widgets.crd-delete-check.kit.test w1",
		`kubectl -n default patch widgets.crd-delete-check.kit.test w1 --type=merge -p '{"metadata":{"finalizers":null}}'`,
		"nothing was deleted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the check does not say %q:\n%s", want, out)
		}
	}
	for _, object := range []string{"crd/widgets.crd-delete-check.kit.test", "widgets.crd-delete-check.kit.test/w1"} {
		if ts := Kubectl(t, "get", "-n", "default", object, "-o", "jsonpath={.metadata.deletionTimestamp}"); ts != "" {
			t.Errorf("%s is being deleted (deletionTimestamp %s) after the check", object, ts)
		}
	}

	Kubectl(t, "-n", "default", "patch", "widgets.crd-delete-check.kit.test", "w1", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	if code, out, _ := check(); code != 0 {
		t.Errorf("with no finalizer left, the check exits %d, want 0:\n%s", code, out)
	}
}
