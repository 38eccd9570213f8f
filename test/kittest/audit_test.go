package kittest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// auditLines are lines of a real audit log of the kit's local cluster (trimmed of
// fields the reader ignores): an update that failed, a create of a Deployment, a
// patch of its scale subresource by a client that impersonated a ServiceAccount,
// a Pod created under a generated name, an events.k8s.io Event, a server-side
// apply (recorded as a patch), a delete, and a RequestReceived and a get, which
// the kit's policy does not record but another policy would.
var auditLines = []string{
	`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"59ac862a-7a60-435d-98ff-52cbb237bf07","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication","verb":"update","user":{"username":"system:apiserver","groups":["system:authenticated","system:masters"]},"sourceIPs":["127.0.0.1"],"userAgent":"kube-apiserver/v1.37.2 (linux/amd64) kubernetes/$Format","objectRef":{"resource":"configmaps","namespace":"kube-system","name":"extension-apiserver-authentication","apiVersion":"v1"},"responseStatus":{"metadata":{},"status":"Failure","reason":"NotFound","code":404},"requestReceivedTimestamp":"2026-11-30T17:20:24.743211Z","stageTimestamp":"2026-11-30T17:20:24.743812Z"}`,
	`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"3c1d5162-cdea-4e94-8ebe-87ef89c49043","stage":"ResponseComplete","requestURI":"/apis/apps/v1/namespaces/audit-demo/deployments?fieldManager=kubectl-create\u0026fieldValidation=Strict","verb":"create","user":{"username":"kwok-admin","groups":["system:masters","system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"kubectl/v1.37.2 (linux/amd64) kubernetes/$Format","objectRef":{"resource":"deployments","namespace":"audit-demo","name":"web","apiGroup":"apps","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201},"requestReceivedTimestamp":"2026-11-30T17:20:35.089809Z","stageTimestamp":"2026-11-30T17:20:35.095031Z"}`,
	`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"b8ad855c-94c8-4a32-b6ed-b7bac34450e9","stage":"ResponseComplete","requestURI":"/apis/apps/v1/namespaces/audit-demo/deployments/web/scale","verb":"patch","user":{"username":"kwok-admin","groups":["system:masters","system:authenticated"]},"impersonatedUser":{"username":"system:serviceaccount:audit-demo:ctl","groups":["system:serviceaccounts","system:serviceaccounts:audit-demo","system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"kubectl/v1.37.2 (linux/amd64) kubernetes/$Format","objectRef":{"resource":"deployments","namespace":"audit-demo","name":"web","apiGroup":"apps","apiVersion":"v1","subresource":"scale"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-30T17:20:35.259236Z","stageTimestamp":"2026-11-30T17:20:35.262183Z"}`,
	`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"01ac31f6-e708-4baa-b284-98809bc45930","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/audit-demo/pods","verb":"create","user":{"username":"kwok-admin","groups":["system:masters","system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/$Format/replicaset-controller","objectRef":{"resource":"pods","namespace":"audit-demo","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201},"requestReceivedTimestamp":"2026-11-30T17:20:35.272714Z","stageTimestamp":"2026-11-30T17:20:35.276421Z"}`,
	`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"f2ace5b0-a86f-4068-89f8-315a54e1262f","stage":"ResponseComplete","requestURI":"/apis/events.k8s.io/v1/namespaces/audit-demo/events","verb":"create","user":{"username":"kwok-admin","groups":["system:masters","system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"kube-scheduler/v1.37.2 (linux/amd64) kubernetes/$Format/scheduler","objectRef":{"resource":"events","namespace":"audit-demo","name":"web-689b9bdbdd-pmp6x.18ece25bcb26b6e8","apiGroup":"events.k8s.io","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201},"requestReceivedTimestamp":"2026-11-30T17:20:35.293522Z","stageTimestamp":"2026-11-30T17:20:35.295121Z"}`,
	`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"0aa1c0de-0000-4000-8000-000000000001","stage":"RequestReceived","requestURI":"/api/v1/namespaces/audit-demo/configmaps/applied?fieldManager=kubectl\u0026force=false","verb":"patch","user":{"username":"kwok-admin","groups":["system:masters","system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"kubectl/v1.37.2 (linux/amd64) kubernetes/$Format","objectRef":{"resource":"configmaps","namespace":"audit-demo","name":"applied","apiVersion":"v1"},"requestReceivedTimestamp":"2026-11-30T17:20:35.458249Z","stageTimestamp":"2026-11-30T17:20:35.458249Z"}`,
	`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"d028b8ff-b925-40ad-978d-f857eb3d3bfa","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/audit-demo/configmaps/applied?fieldManager=kubectl\u0026fieldValidation=Strict\u0026force=false","verb":"patch","user":{"username":"kwok-admin","groups":["system:masters","system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"kubectl/v1.37.2 (linux/amd64) kubernetes/$Format","objectRef":{"resource":"configmaps","namespace":"audit-demo","name":"applied","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201},"requestReceivedTimestamp":"2026-11-30T17:20:35.458249Z","stageTimestamp":"2026-11-30T17:20:35.461896Z"}`,
	`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"0aa1c0de-0000-4000-8000-000000000002","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/audit-demo/configmaps/applied","verb":"get","user":{"username":"kwok-admin","groups":["system:masters","system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"kubectl/v1.37.2 (linux/amd64) kubernetes/$Format","objectRef":{"resource":"configmaps","namespace":"audit-demo","name":"applied","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-30T17:20:35.480000Z","stageTimestamp":"2026-11-30T17:20:35.481000Z"}`,
	`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"139b95a2-7a77-4daf-bf5f-24216c02155c","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/audit-demo/configmaps/applied","verb":"delete","user":{"username":"kwok-admin","groups":["system:masters","system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"kubectl/v1.37.2 (linux/amd64) kubernetes/$Format","objectRef":{"resource":"configmaps","namespace":"audit-demo","name":"applied","apiVersion":"v1"},"responseStatus":{"metadata":{},"status":"Success","code":200},"requestReceivedTimestamp":"2026-11-30T17:20:35.510411Z","stageTimestamp":"2026-11-30T17:20:35.513873Z"}`,
}

// writeAuditLog writes lines to a new audit log file, each ending with a newline
// like the API server's, then tail as it is (a line the server is still writing).
func writeAuditLog(t *testing.T, lines []string, tail string) string {
	t.Helper()
	var b []byte
	for _, l := range lines {
		b = append(b, l...)
		b = append(b, '\n')
	}
	b = append(b, tail...)
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// at parses an audit log timestamp.
func at(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestReadAuditLogReturnsEveryAnsweredRequest(t *testing.T) {
	path := writeAuditLog(t, auditLines, "")

	got, err := ReadAuditLog(path)

	if err != nil {
		t.Fatalf("ReadAuditLog: %v", err)
	}
	kubectl := "kubectl/v1.37.2 (linux/amd64) kubernetes/$Format"
	want := []AuditEntry{
		{Received: at(t, "2026-11-30T17:20:24.743211Z"), User: "system:apiserver", UserAgent: "kube-apiserver/v1.37.2 (linux/amd64) kubernetes/$Format",
			Verb: "update", Resource: "configmaps", Namespace: "kube-system", Name: "extension-apiserver-authentication", Code: 404},
		{Received: at(t, "2026-11-30T17:20:35.089809Z"), User: "kwok-admin", UserAgent: kubectl,
			Verb: "create", APIGroup: "apps", Resource: "deployments", Namespace: "audit-demo", Name: "web", Code: 201},
		{Received: at(t, "2026-11-30T17:20:35.259236Z"), User: "system:serviceaccount:audit-demo:ctl", UserAgent: kubectl,
			Verb: "patch", APIGroup: "apps", Resource: "deployments", Subresource: "scale", Namespace: "audit-demo", Name: "web", Code: 200},
		{Received: at(t, "2026-11-30T17:20:35.272714Z"), User: "kwok-admin", UserAgent: "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/$Format/replicaset-controller",
			Verb: "create", Resource: "pods", Namespace: "audit-demo", Code: 201},
		{Received: at(t, "2026-11-30T17:20:35.293522Z"), User: "kwok-admin", UserAgent: "kube-scheduler/v1.37.2 (linux/amd64) kubernetes/$Format/scheduler",
			Verb: "create", APIGroup: "events.k8s.io", Resource: "events", Namespace: "audit-demo", Name: "web-689b9bdbdd-pmp6x.18ece25bcb26b6e8", Code: 201},
		{Received: at(t, "2026-11-30T17:20:35.458249Z"), User: "kwok-admin", UserAgent: kubectl,
			Verb: "patch", Resource: "configmaps", Namespace: "audit-demo", Name: "applied", Code: 201},
		{Received: at(t, "2026-11-30T17:20:35.48Z"), User: "kwok-admin", UserAgent: kubectl,
			Verb: "get", Resource: "configmaps", Namespace: "audit-demo", Name: "applied", Code: 200},
		{Received: at(t, "2026-11-30T17:20:35.510411Z"), User: "kwok-admin", UserAgent: kubectl,
			Verb: "delete", Resource: "configmaps", Namespace: "audit-demo", Name: "applied", Code: 200},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadAuditLog returned %d entries:\n%s\nwant %d:\n%s", len(got), entryLines(got), len(want), entryLines(want))
	}
}

// entryLines formats entries one a line, for a failure message.
func entryLines(entries []AuditEntry) string {
	var s string
	for _, e := range entries {
		s += "  " + e.String() + " " + e.UserAgent + "\n"
	}
	return s
}

func TestReadAuditLogKeepsWhyARequestWasRefused(t *testing.T) {
	// A create refused in a namespace being deleted, as the kit's API server logs it.
	line := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","verb":"create",` +
		`"user":{"username":"kwok-admin"},"objectRef":{"resource":"events","namespace":"gone","name":"web.1","apiVersion":"v1"},` +
		`"responseStatus":{"metadata":{},"status":"Failure","message":"events \"web.1\" is forbidden: unable to create new content in namespace gone because it is being terminated",` +
		`"reason":"Forbidden","details":{"name":"web.1","kind":"events","causes":[{"reason":"NamespaceTerminating","message":"namespace gone is being terminated","field":"metadata.namespace"}]},"code":403},` +
		`"requestReceivedTimestamp":"2026-11-30T21:05:20.911783Z","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":""}}`
	got, err := ReadAuditLog(writeAuditLog(t, []string{line}, ""))
	if err != nil || len(got) != 1 {
		t.Fatalf("ReadAuditLog = %d entries, %v; want 1", len(got), err)
	}
	e := got[0]
	if e.Code != 403 || !strings.Contains(e.Message, "being terminated") || !reflect.DeepEqual(e.Causes, []string{"NamespaceTerminating"}) || e.Authorization != "allow" {
		t.Errorf("entry = %+v; want code 403, the message, cause NamespaceTerminating and authorization allow", e)
	}
}

func TestReadAuditLogLeavesOutALineStillBeingWritten(t *testing.T) {
	half := auditLines[1][:len(auditLines[1])/2]
	path := writeAuditLog(t, auditLines[:1], half)

	got, err := ReadAuditLog(path)

	if err != nil || len(got) != 1 {
		t.Errorf("ReadAuditLog = %d entries, %v; want the 1 complete line and no error", len(got), err)
	}
}

func TestReadAuditLogRejectsALineThatIsNotAnEvent(t *testing.T) {
	path := writeAuditLog(t, []string{auditLines[0], "not json"}, "")

	_, err := ReadAuditLog(path)

	if err == nil {
		t.Error("ReadAuditLog of a file with a line that is not JSON returned no error")
	}
}

func TestReadAuditLogOfAMissingFileIsNotExist(t *testing.T) {
	_, err := ReadAuditLog(filepath.Join(t.TempDir(), "audit.log"))

	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadAuditLog of a missing file: %v; want an error wrapping fs.ErrNotExist", err)
	}
}

func TestIsWrite(t *testing.T) {
	for verb, want := range map[string]bool{
		"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true,
		"get": false, "list": false, "watch": false,
	} {
		if got := (AuditEntry{Verb: verb}).IsWrite(); got != want {
			t.Errorf("AuditEntry{Verb: %q}.IsWrite() = %v, want %v", verb, got, want)
		}
	}
}

func TestWritesSkipsOnAClusterWithoutAnAuditLog(t *testing.T) {
	t.Setenv("KUBECONFIG", kubeconfigWithContext(t, "kind-controller-kit"))
	skipped := false

	t.Run("kind", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Writes(t, time.Time{}, nil)
	})

	if !skipped {
		t.Error("Writes on a kind cluster did not skip the test")
	}
}
