package main

import (
	"strings"
	"testing"

	"github.com/controller-kit/controller-kit/hack/kittest"
)

func TestRefusalsArePrintedOncePerKindWithTheirHint(t *testing.T) {
	var out strings.Builder
	refused := []kittest.AuditEntry{
		{Code: 403, Verb: "update", Resource: "pods", Namespace: "ns", Name: "web-1"},
		{Code: 403, Verb: "update", Resource: "pods", Namespace: "ns", Name: "web-2"},
		{Code: 403, Verb: "update", Resource: "pods", Namespace: "ns", Name: "web-1"},
		{Code: 409, Verb: "update", APIGroup: "apps", Resource: "deployments", Namespace: "ns", Name: "web"},
	}
	printRefusals(&out, refused)
	got := out.String()
	for _, want := range []string{
		"403 Forbidden: update pods, 3 times (ns/web-1, ns/web-2)",
		`does not grant "update" on pods`,
		"409 Conflict: update apps/deployments, 1 times (ns/web)",
		"requeue",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("printRefusals printed:\n%s\nwant it to contain %q", got, want)
		}
	}
	if n := strings.Count(got, "api:"); n != 2 {
		t.Errorf("printRefusals printed %d lines for 2 kinds of refusal:\n%s", n, got)
	}
}
