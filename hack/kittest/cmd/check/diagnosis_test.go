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
	printRefusals(&out, refused, map[string]bool{})
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

func TestTellingLinesArePreferablyErrors(t *testing.T) {
	log := "I1130 10:00:00 started\nE1130 10:00:01 \"Reconcile failed\" err=forbidden\nI1130 10:00:02 shutting down\n"
	lines, what := tellingLines(log)
	if len(lines) != 1 || !strings.Contains(lines[0], "Reconcile failed") || !strings.Contains(what, "errors") {
		t.Errorf("tellingLines = %q, %q; want the one error line", lines, what)
	}
	lines, what = tellingLines("I1 a\nI2 b\n")
	if len(lines) != 2 || !strings.Contains(what, "no error") {
		t.Errorf("tellingLines of a log without errors = %q, %q; want its last lines", lines, what)
	}
	lines, what = tellingLines("\n")
	if len(lines) != 0 || !strings.Contains(what, "empty") {
		t.Errorf("tellingLines of an empty log = %q, %q; want no lines and words saying it is empty", lines, what)
	}
}

func TestFailureLinesKeepAVerdictThatMentionsARestart(t *testing.T) {
	res := &result{output: []string{
		"    foo_test.go:10: started controller: /tmp/x --flag",
		"    foo_test.go:20: the restarted controller wrote to Foo web although nothing changed:",
	}}
	got := failureLines(res, false)
	if len(got) != 1 || !strings.Contains(got[0], "restarted controller wrote") {
		t.Errorf("failureLines = %q; want only the verdict line", got)
	}
}
