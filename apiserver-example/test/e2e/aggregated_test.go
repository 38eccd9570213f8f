//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/controller-kit/controller-kit/test/kittest"
)

var (
	// flunders is sample-apiserver's resource, in the version kubectl prefers.
	flunders = schema.GroupVersionResource{Group: "wardle.example.com", Version: "v1beta1", Resource: "flunders"}
	// apiServices is what make run-aggregated registers and deletes when it
	// stops (apiserver-example/config/sample-apiserver-apiservices.yaml).
	apiServices  = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	apiService   = "v1beta1.wardle.example.com"
	flunderGroup = "wardle.example.com"
)

// TestAggregatedServerServesFlunders runs make run-aggregated's body
// (apiserver-example/hack/run-aggregated.sh), as lesson 6 section 11 does: once
// its APIService is Available, a user whose RBAC allows listing Flunders lists
// one through the cluster's kube-apiserver, and the aggregated server's own
// audit log names that user, not the front proxy's (kube-apiserver's
// --requestheader-* flags, hack/cluster/kwokctl.yaml). Its output then goes
// away, as when the Ctrl-C that stops `make run-aggregated 2>&1 | tee log` ends
// tee first, and SIGTERM stops it with exit status 0 all the same, its
// APIServices deleted, so that discovery no longer lists the group. (The script stops so on Ctrl-C's SIGINT too, but a shell cannot
// trap a signal that was ignored when it started, and the test binary may run
// with SIGINT ignored, as under make check: so the test sends the other signal.)
func TestAggregatedServerServesFlunders(t *testing.T) {
	t.Parallel()
	info, err := kittest.CurrentClusterInfo()
	if err != nil {
		t.Fatalf("make run-aggregated runs beside the local cluster: %v", err)
	}
	root := kittest.RepoRoot()
	// The first build takes a minute or more: not a wait bounded by the deadline.
	if out, err := exec.Command(filepath.Join(root, "hack", "build-bins.sh"), "sample-apiserver").CombinedOutput(); err != nil {
		t.Fatalf("hack/build-bins.sh sample-apiserver: %v\n%s", err, out)
	}

	dir := filepath.Join(root, "_output", "aggregated", info.Name)
	stateFile := filepath.Join(dir, "run.env")
	// The script writes into a pipe, as into tee's, read into output until
	// closeOutput closes its reading end.
	var output bytes.Buffer
	pipeOut, pipeIn, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&output, pipeOut)
	}()
	closeOutput := func() {
		_ = pipeOut.Close()
		<-copied
	}
	run := exec.Command(filepath.Join(root, "apiserver-example", "hack", "run-aggregated.sh"))
	run.Env = append(os.Environ(), "KIT_CLUSTER="+info.Name)
	run.Stdout, run.Stderr = pipeIn, pipeIn
	err = run.Start()
	_ = pipeIn.Close() // the script's copy stays open
	if err != nil {
		t.Fatalf("starting apiserver-example/hack/run-aggregated.sh: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	stopped := false
	// stop sends SIGTERM and returns the script's exit error.
	stop := func() error {
		stopped = true
		_ = run.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			return err
		case <-time.After(time.Minute):
			_ = run.Process.Kill()
			return errors.New("still running a minute after SIGTERM; killed")
		}
	}
	t.Cleanup(func() {
		if !stopped {
			_ = stop()
		}
		closeOutput()
		if t.Failed() {
			t.Logf("apiserver-example/hack/run-aggregated.sh's output:\n%s", output.String())
		}
	})

	client, err := dynamic.NewForConfig(kittest.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, deadline, "the APIService "+apiService+" to be Available (make run-aggregated registers it once sample-apiserver answers)",
		func(ctx context.Context) (bool, error) {
			select {
			case err := <-exited:
				stopped = true
				t.Fatalf("apiserver-example/hack/run-aggregated.sh exited before its APIService was Available: %v", err)
			default:
			}
			obj, err := client.Resource(apiServices).Get(ctx, apiService, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			// This run's APIService, not one an earlier, killed run left: it
			// names the port the script's state file (run.env) gives its server.
			ours, err := scriptsPort(stateFile, run.Process.Pid)
			if err != nil {
				return false, err
			}
			if port, _, _ := unstructured.NestedInt64(obj.Object, "spec", "service", "port"); port != ours {
				return false, fmt.Errorf("the APIService names port %d, not %d, the port of this run's server", port, ours)
			}
			return available(obj)
		})

	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "lesson6-aggregated")
	flunder := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": flunders.GroupVersion().String(), "kind": "Flunder",
		"metadata": map[string]any{"name": "listed"},
	}}
	if _, err := client.Resource(flunders).Namespace(ns).Create(context.Background(), flunder, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a Flunder through kube-apiserver: %v", err)
	}
	// A user of the test's own, allowed to list Flunders in its namespace.
	const reader = "lesson6-flunder-reader"
	readerClient := flunderReader(t, cs, ns, reader)
	kittest.Eventually(t, deadline, "user "+reader+" to list the Flunder through kube-apiserver", func(ctx context.Context) (bool, error) {
		list, err := readerClient.Resource(flunders).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		if len(list.Items) != 1 || list.Items[0].GetName() != "listed" {
			return false, errors.New("the list does not hold the one Flunder, listed")
		}
		return true, nil
	})

	// The aggregated server's audit log (make run-aggregated's file) says whom
	// it served the list to.
	audit := filepath.Join(dir, "audit.log")
	var seen []string
	kittest.Eventually(t, deadline, "the aggregated server's audit log ("+audit+") to record the list of Flunders in "+ns, func(context.Context) (bool, error) {
		entries, err := kittest.ReadAuditLog(audit)
		if err != nil {
			return false, err
		}
		seen = seen[:0]
		for _, e := range entries {
			if e.Verb == "list" && e.Resource == "flunders" && e.Namespace == ns && e.Code == 200 {
				seen = append(seen, e.User)
			}
		}
		return len(seen) > 0, nil
	})
	if !slices.Contains(seen, reader) {
		t.Errorf("the aggregated server served the list of Flunders to %s, not to %s, the user who asked: it did not take the user from the front proxy's X-Remote-User header. Is kube-apiserver run with --requestheader-client-ca-file and --requestheader-allowed-names (make kube-args WHAT=kube-apiserver; hack/cluster/kwokctl.yaml)?",
			strings.Join(seen, ", "), reader)
	}

	// Deleted while its server runs: once the APIService is gone, deleting the
	// namespace would leave it in etcd, since no API serves it any more.
	if err := client.Resource(flunders).Namespace(ns).Delete(context.Background(), "listed", metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting the Flunder: %v", err)
	}
	// Its output gone, the script writes into a closed pipe from now on.
	closeOutput()
	if err := stop(); err != nil {
		t.Errorf("apiserver-example/hack/run-aggregated.sh after SIGTERM, its output closed: %v; want exit status 0, its clean-up done whatever it could not print", err)
	}
	if _, err := client.Resource(apiServices).Get(context.Background(), apiService, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the APIService %s after make run-aggregated stopped: %v; want it deleted (NotFound), so that discovery does not name a group nobody serves", apiService, err)
	}
	groups, err := cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatalf("discovery after make run-aggregated stopped: %v", err)
	}
	for _, g := range groups.Groups {
		if g.Name == flunderGroup {
			t.Errorf("discovery still lists the group %s after make run-aggregated stopped", flunderGroup)
		}
	}
}

// available reports whether the APIService obj has the condition Available
// True; the error says what its condition says otherwise.
func available(obj *unstructured.Unstructured) (bool, error) {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		if m, _ := c.(map[string]any); m["type"] == "Available" {
			if m["status"] != "True" {
				return false, fmt.Errorf("Available is %v: %v", m["status"], m["message"])
			}
			return true, nil
		}
	}
	return false, errors.New("no Available condition yet")
}

// flunderReader gives the user reader the right to list Flunders in namespace
// ns (a Role and its RoleBinding) and returns a client that acts as reader.
func flunderReader(t *testing.T, cs kubernetes.Interface, ns, reader string) dynamic.Interface {
	t.Helper()
	if _, err := cs.RbacV1().Roles(ns).Create(context.Background(), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "flunder-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{flunderGroup}, Resources: []string{"flunders"}, Verbs: []string{"list"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "flunder-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "flunder-reader"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: reader}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	asReader := rest.CopyConfig(kittest.Config(t))
	asReader.Impersonate = rest.ImpersonationConfig{UserName: reader}
	client, err := dynamic.NewForConfig(asReader)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// scriptsPort reads make run-aggregated's state file (PID, SCRIPT, PORT, one
// NAME=value a line) and returns the port of its server, once the file is the
// one the script with pid script wrote.
func scriptsPort(path string, script int) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	values := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if name, value, ok := strings.Cut(line, "="); ok {
			values[name] = value
		}
	}
	if values["SCRIPT"] != strconv.Itoa(script) {
		return 0, fmt.Errorf("%s is not this run's (SCRIPT=%s, want %d)", path, values["SCRIPT"], script)
	}
	return strconv.ParseInt(values["PORT"], 10, 64)
}
