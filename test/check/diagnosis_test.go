package main

import (
	"strings"
	"testing"

	"github.com/controller-kit/controller-kit/test/kittest"
)

func TestRefusalsArePrintedOncePerKindWithTheirHint(t *testing.T) {
	var out strings.Builder
	refused := []kittest.AuditEntry{
		{Code: 403, Verb: "update", Resource: "pods", Namespace: "ns", Name: "web-1"},
		{Code: 403, Verb: "update", Resource: "pods", Namespace: "ns", Name: "web-2"},
		{Code: 403, Verb: "update", Resource: "pods", Namespace: "ns", Name: "web-1"},
		{Code: 409, Verb: "update", APIGroup: "apps", Resource: "deployments", Namespace: "ns", Name: "web"},
	}
	printRefusals(&out, english, refused, map[string]bool{}, true)
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

func TestHandledRefusalsAreLeftOutWhenTheLogHasNoError(t *testing.T) {
	var out strings.Builder
	refused := []kittest.AuditEntry{
		{Code: 409, Verb: "update", Resource: "configmaps", Namespace: "ops", Name: "directory"},
		{Code: 504, Verb: "create", Resource: "events", Namespace: "ops", Name: "lease.1"},
		{Code: 403, Verb: "update", Resource: "pods", Namespace: "ns", Name: "web-1", Authorization: "forbid"},
	}
	printRefusals(&out, english, refused, map[string]bool{}, false)
	got := out.String()
	if strings.Contains(got, "409") || strings.Contains(got, "504") {
		t.Errorf("printRefusals printed handled refusals although the log has no error:\n%s", got)
	}
	for _, want := range []string{"403 Forbidden: update pods", "2 more refused requests"} {
		if !strings.Contains(got, want) {
			t.Errorf("printRefusals printed:\n%s\nwant it to contain %q", got, want)
		}
	}
}

func TestRefusalHintFollowsWhoRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    kittest.AuditEntry
		want string
	}{
		{"RBAC", kittest.AuditEntry{Code: 403, Verb: "update", Resource: "pods", Authorization: "forbid"}, `does not grant "update" on pods`},
		{"admission", kittest.AuditEntry{Code: 403, Verb: "update", APIGroup: "apps", Resource: "deployments", Authorization: "allow",
			Message: `deployments.apps "web" is forbidden: cannot set an ownerRef on a resource you can't delete`}, "admission refused it"},
		{"terminating namespace", kittest.AuditEntry{Code: 403, Verb: "create", Resource: "services", Authorization: "allow",
			Causes: []string{"NamespaceTerminating"}}, "namespace is being deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := refusalHint(tc.e, english); !strings.Contains(got, tc.want) {
				t.Errorf("refusalHint = %q; want it to contain %q", got, tc.want)
			}
		})
	}
}

func TestPanicSummaryNamesTheValueAndTheLearnersFrame(t *testing.T) {
	zap := "2026-11-30T10:00:00Z\tERROR\tObserved a panic\t{\"panic\": \"runtime error: invalid memory address or nil pointer dereference\", " +
		"\"stacktrace\": \"goroutine 7 [running]:\\nk8s.io/apimachinery/pkg/util/runtime.logPanic(...)\\n\\t/root/go/pkg/mod/k8s.io/apimachinery@v0.37.2/pkg/util/runtime/runtime.go:142 +0x1\\n" +
		"panic(...)\\n\\t" + goroot() + "/src/runtime/panic.go:783 +0x2\\n" +
		"example/internal/controller.(*MyReconciler).writeStatus(...)\\n\\t/src/kit/kubebuilder-guestbook/internal/controller/mine.go:271 +0x3\"}"
	want := "runtime error: invalid memory address or nil pointer dereference at /src/kit/kubebuilder-guestbook/internal/controller/mine.go:271"
	if got := panicSummary("I1 started\n" + zap + "\n"); got != want {
		t.Errorf("panicSummary = %q; want %q", got, want)
	}
	// Built with -trimpath, as the kit builds: frames name files by import path.
	trimmed := "E1130 10:00:00 \"Observed a panic\" panic=\"assignment to entry in nil map\"\n" +
		"goroutine 7 [running]:\nk8s.io/apimachinery/pkg/util/runtime.logPanic(...)\n\tk8s.io/apimachinery@v0.37.2/pkg/util/runtime/runtime.go:142 +0x1\n" +
		"panic(...)\n\truntime/panic.go:783 +0x2\n" +
		"example/internal/controller.(*MyReconciler).writeStatus(...)\n\tgithub.com/controller-kit/controller-kit/kubebuilder-guestbook/internal/controller/mine.go:271 +0x3\n"
	if got, want := panicSummary(trimmed), "assignment to entry in nil map at kubebuilder-guestbook/internal/controller/mine.go:271"; got != want {
		t.Errorf("panicSummary of a -trimpath stack = %q; want %q", got, want)
	}
	if got := panicSummary("I1 started\nE2 \"Reconcile failed\"\n"); got != "" {
		t.Errorf("panicSummary of a log without a panic = %q; want \"\"", got)
	}
}

func TestTellingLinesArePreferablyErrors(t *testing.T) {
	log := "I1130 10:00:00 started\nE1130 10:00:01 \"Reconcile failed\" err=forbidden\nI1130 10:00:02 shutting down\n"
	lines, what, _ := tellingLines(log, english)
	if len(lines) != 1 || !strings.Contains(lines[0], "Reconcile failed") || !strings.Contains(what, "errors") {
		t.Errorf("tellingLines = %q, %q; want the one error line", lines, what)
	}
	lines, what, _ = tellingLines("I1 a\nI2 b\n", english)
	if len(lines) != 2 || !strings.Contains(what, "no error") {
		t.Errorf("tellingLines of a log without errors = %q, %q; want its last lines", lines, what)
	}
	lines, what, _ = tellingLines("\n", english)
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
