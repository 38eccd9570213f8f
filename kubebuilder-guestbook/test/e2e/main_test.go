//go:build e2e

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

// Package e2e is the Guestbook operator's conformance suite on the kit cluster
// ($KUBECONFIG): the manager runs as a real process, as the ServiceAccount bound
// to the RBAC in config/rbac (by impersonation), with webhooks off as in
// `make run`, and each test checks one behaviour a user would notice. Run it with
// `make test-e2e`; `make test-e2e RECONCILER=stub` shows what your own Reconciler
// still lacks.
//
// (test/e2e/e2e_*.go are kubebuilder's in-cluster kind suite, build tag e2e_kind.)
package e2e

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/controller-kit/controller-kit/test/kittest"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

const (
	// serviceAccount is the manager's ServiceAccount in config/rbac.
	serviceAccount = "controller-manager"
)

// lessonFile is this suite's row of the lesson table: which lesson it checks,
// the controller to build and one row per check (kittest.Lesson).
//
//go:embed lesson.yaml
var lessonFile []byte

var (
	// deadline bounds every poll: generous for a loaded 2-core machine, and only
	// reached by a test that is failing anyway. `make check` shortens it through
	// $KIT_E2E_TIMEOUT.
	deadline = kittest.Deadline(120 * time.Second)
	// suite builds the manager once for every test (suite.Bin) in this project
	// (suite.TierDir), installs the CRD; its checks are in lesson.yaml, which make check reads too.
	suite  = &kittest.Suite{File: lessonFile}
	scheme = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	// The suite's own controller-runtime client logs through klog (without a
	// logger, controller-runtime prints a warning with a stack trace).
	ctrllog.SetLogger(klog.NewKlogr())
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(webappv1.AddToScheme(scheme))
	suite.Setup = installCRD
	os.Exit(suite.Run(m))
}

// installCRD installs (or updates) the CRD server-side, as `make install` does,
// and waits until a controller can use it. A reference solution (make check
// SOLUTION=...) may replace the CRD.
func installCRD() error {
	crd, err := kittest.File(filepath.Join(suite.TierDir, "config", "crd", "bases", "webapp.controller-kit.dev_guestbooks.yaml"))
	if err != nil {
		return err
	}
	if out, err := kittest.KubectlE("apply", "--server-side", "-f", crd); err != nil {
		return fmt.Errorf("installing the CRD: %w (%s)", err, out)
	}
	return kittest.WaitForCRD("guestbooks.webapp.controller-kit.dev", "webapp.controller-kit.dev/v1", "Guestbook", 90*time.Second)
}

// newClient returns a controller-runtime client for the cluster under test, with
// the test's own (admin) identity.
func newClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(kittest.Config(t), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("creating a client: %v", err)
	}
	return c
}

// installRBAC creates the ServiceAccount and the RBAC config/rbac ships for the
// manager, in namespace ns: manager-role (ClusterRole and the directory Role)
// and the leader election Role. The ClusterRole and its binding get names of
// their own so tests and tiers never share them; they are deleted at cleanup.
func installRBAC(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: ns}}
	create := func(obj client.Object) {
		t.Helper()
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: serviceAccount, Namespace: ns}})

	for _, file := range []string{"role.yaml", "leader_election_role.yaml"} {
		for _, obj := range readObjects(t, filepath.Join(suite.TierDir, "config", "rbac", file)) {
			switch role := obj.(type) {
			case *rbacv1.ClusterRole:
				role.Name = "guestbook-e2e-" + ns
				create(role)
				binding := &rbacv1.ClusterRoleBinding{
					ObjectMeta: metav1.ObjectMeta{Name: role.Name},
					RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
					Subjects:   subject,
				}
				create(binding)
				t.Cleanup(func() {
					_ = c.Delete(context.Background(), binding)
					_ = c.Delete(context.Background(), role)
				})
			case *rbacv1.Role:
				role.Namespace = ns
				create(role)
				create(&rbacv1.RoleBinding{
					ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns},
					RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
					Subjects:   subject,
				})
			default:
				t.Fatalf("%s: unexpected %T", file, obj)
			}
		}
	}
}

// readObjects decodes every object of a multi-document YAML file.
func readObjects(t *testing.T, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	decoder := clientgoscheme.Codecs.UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []runtime.Object
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if js, _ := yaml.YAMLToJSON(doc); string(bytes.TrimSpace(js)) == "null" {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, obj)
	}
}

// startManager runs the manager as the ServiceAccount of operatorNS (see
// installRBAC), with the directory and the leader election Lease in operatorNS.
func startManager(t *testing.T, name, operatorNS string, extraArgs ...string) *kittest.Process {
	t.Helper()
	args := append([]string{
		"--kubeconfig", kittest.ImpersonatingKubeconfig(t, operatorNS, serviceAccount),
		"--enable-webhooks=false",
		"--operator-namespace", operatorNS,
		"--leader-elect", "--leader-elect-resource-namespace", operatorNS,
		"--health-probe-bind-address=0", "--metrics-bind-address=0",
		"--reconciler", kittest.Reconciler(),
	}, extraArgs...)
	return kittest.StartProcess(t, name, suite.Bin, args...)
}

// hasDirectoryEntry is a condition for kittest.Eventually: the directory
// ConfigMap in operatorNS has Guestbook ns/name's entry, with the URL of its
// frontend Service. A ConfigMap not yet created is no error, only not yet.
func hasDirectoryEntry(c client.Client, operatorNS, ns, name string) func(ctx context.Context) (bool, error) {
	want := "http://" + name + "-frontend." + ns + ".svc"
	return func(ctx context.Context) (bool, error) {
		var cm corev1.ConfigMap
		err := c.Get(ctx, client.ObjectKey{Namespace: operatorNS, Name: "guestbook-directory"}, &cm)
		return err == nil && cm.Data[ns+"."+name] == want, client.IgnoreNotFound(err)
	}
}

// getGuestbook reads a Guestbook; a NotFound error means it is gone.
func getGuestbook(ctx context.Context, c client.Client, ns, name string) (*webappv1.Guestbook, error) {
	var gb webappv1.Guestbook
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &gb)
	return &gb, err
}

func isGone(err error) (bool, error) {
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}
