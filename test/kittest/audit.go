package kittest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"
)

// AuditEntry is one request that the kube-apiserver of the kit's local cluster
// recorded in its audit log: who sent it, what it asked for, how it ended. The
// cluster's audit policy (hack/cluster/audit-policy.yaml) records writes to the objects the
// kit's controllers own or record, at Metadata level: no request or response bodies.
type AuditEntry struct {
	// Received is when the API server received the request. A write that made an
	// object converge was received before anyone could see the object converged,
	// even when its response completed a moment later.
	Received time.Time
	// User is whom the request acted as: the impersonated user when the client
	// impersonated one (as the e2e suites' controllers do, see
	// ImpersonatingKubeconfig), else the user it authenticated as.
	User string
	// UserAgent is the client's User-Agent header. client-go's default starts with
	// the program's file name and a slash, such as "sample-controller/v0.0.0 (...)".
	UserAgent string
	// Verb is the API verb: create, update, patch, delete, deletecollection, get,
	// list or watch. A server-side apply is recorded as "patch".
	Verb string
	// APIGroup is the resource's API group; "" is the core group (Pods, Events, ...).
	APIGroup string
	// Resource is the resource's plural name, such as "deployments".
	Resource string
	// Subresource is the subresource the request addressed, such as "status"; ""
	// for the object itself.
	Subresource string
	// Namespace is the object's namespace; "" for a cluster-scoped object.
	Namespace string
	// Name is the object's name; "" for a create whose name the server generated,
	// and for requests on a whole collection.
	Name string
	// Code is the HTTP status code of the response, such as 201; 0 when the log
	// has none.
	Code int
	// Message is the API server's message for a refused request, such as
	// `deployments.apps "web" is forbidden: ...`; "" for one that succeeded.
	Message string
	// Causes are the reasons in the refusal's details, such as
	// "NamespaceTerminating" (corev1.NamespaceTerminatingCause); nil when it has none.
	Causes []string
	// Authorization is the authorizer's decision on the request: "allow" or
	// "forbid" ("" when the log has none). A 403 after "allow" was refused by
	// admission (a webhook or an admission plugin), not by RBAC.
	Authorization string
}

// IsWrite reports whether the request was one that changes objects: create,
// update, patch (server-side apply included), delete or deletecollection.
func (e AuditEntry) IsWrite() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// String formats the entry on one line for a test's output: when it was received
// (UTC), user, verb, resource (with its group unless core), namespace/name (with
// the subresource) and response code, such as
// "12:00:01.123456 system:serviceaccount:ns:sa patch apps/deployments ns/web/scale 200".
func (e AuditEntry) String() string {
	resource := e.Resource
	if e.APIGroup != "" {
		resource = e.APIGroup + "/" + e.Resource
	}
	object := e.Namespace + "/" + e.Name
	if e.Subresource != "" {
		object += "/" + e.Subresource
	}
	return fmt.Sprintf("%s %s %s %s %s %d",
		e.Received.UTC().Format("15:04:05.000000"), e.User, e.Verb, resource, object, e.Code)
}

// auditEvent is the part of one line of the audit log (an audit.k8s.io/v1 Event,
// one JSON object a line) that AuditEntry keeps.
type auditEvent struct {
	Stage                    string    `json:"stage"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	User                     struct {
		Username string `json:"username"`
	} `json:"user"`
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	UserAgent string `json:"userAgent"`
	Verb      string `json:"verb"`
	ObjectRef struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Details *struct {
			Causes []struct {
				Reason string `json:"reason"`
			} `json:"causes"`
		} `json:"details"`
	} `json:"responseStatus"`
	Annotations map[string]string `json:"annotations"`
}

// ReadAuditLog reads the audit log at path and returns, in the order they were
// written, its entries for the stage ResponseComplete: one per request that was
// answered (the other stages repeat a request; the policy drops RequestReceived).
// The API server writes the log as requests complete, so the file's last line may
// still be half written: a last line without its newline is left out. The error
// names the file, and the line when one is not an audit event.
func ReadAuditLog(path string) ([]AuditEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the audit log: %w", err)
	}
	defer f.Close()
	var entries []AuditEntry
	r := bufio.NewReader(f)
	for lineNo := 1; ; lineNo++ {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return entries, nil // a line without its newline is still being written
		}
		if err != nil {
			return nil, fmt.Errorf("reading the audit log %s: %w", path, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var ev auditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("%s:%d is not an audit event: %w", path, lineNo, err)
		}
		if ev.Stage != "ResponseComplete" {
			continue
		}
		e := AuditEntry{
			Received:    ev.RequestReceivedTimestamp,
			User:        ev.User.Username,
			UserAgent:   ev.UserAgent,
			Verb:        ev.Verb,
			APIGroup:    ev.ObjectRef.APIGroup,
			Resource:    ev.ObjectRef.Resource,
			Subresource: ev.ObjectRef.Subresource,
			Namespace:   ev.ObjectRef.Namespace,
			Name:        ev.ObjectRef.Name,
			Code:        ev.ResponseStatus.Code,
			Message:     ev.ResponseStatus.Message,
			// The authorizer's annotation, as the API server's audit package names it.
			Authorization: ev.Annotations["authorization.k8s.io/decision"],
		}
		if d := ev.ResponseStatus.Details; d != nil {
			for _, c := range d.Causes {
				e.Causes = append(e.Causes, c.Reason)
			}
		}
		if ev.ImpersonatedUser != nil && ev.ImpersonatedUser.Username != "" {
			e.User = ev.ImpersonatedUser.Username
		}
		entries = append(entries, e)
	}
}

// Writes returns the write requests (see AuditEntry.IsWrite) that the suites'
// cluster received at or after since and that match accepts (every write when
// match is nil), read from the cluster's audit log (see CurrentClusterInfo). Only
// the kit's local cluster has an audit log: on any other cluster, kind included,
// the test is skipped with a message that says so. It fails the test when the
// local cluster's file or log cannot be read.
//
// The API server logs a request a moment after answering it: a test that counts
// writes up to now should wait a second or two before calling Writes.
func Writes(t testing.TB, since time.Time, match func(AuditEntry) bool) []AuditEntry {
	t.Helper()
	entries, err := currentAuditLog()
	if errors.Is(err, ErrNotLocalCluster) {
		t.Skipf("this test reads the API server's audit log: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var writes []AuditEntry
	for _, e := range entries {
		if e.IsWrite() && !e.Received.Before(since) && (match == nil || match(e)) {
			writes = append(writes, e)
		}
	}
	return writes
}

// currentAuditLog reads the audit log of the cluster the suites use (see
// CurrentClusterInfo); the error wraps ErrNotLocalCluster when it has none.
func currentAuditLog() ([]AuditEntry, error) {
	info, err := CurrentClusterInfo()
	if err != nil {
		return nil, err
	}
	return ReadAuditLog(info.AuditLog)
}
