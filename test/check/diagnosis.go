package main

import (
	"encoding/json"
	"fmt"
	"go/build"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// logLines is how many of the last lines of each controller log a failing check shows.
const logLines = 6

// printDiagnosis prints, under a failing check, what the suite kept for it in
// logDir (see kittest.LogDirEnv): the path and the telling lines of each
// controller's log (see tellingLines), and each request the API server refused,
// with what that refusal means. A subtest's controllers usually belong to its
// parent test, so the folders of the test and of each parent are read; a log
// that was shown already is only named. root shortens the paths it prints.
func printDiagnosis(w io.Writer, root, logDir, test string, shown *shownSoFar) {
	if logDir == "" {
		return
	}
	t := learnerTexts()
	for _, name := range testAndParents(test) {
		dir := filepath.Join(logDir, kittest.TestDirName(name))
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		loggedErrors := false
		for _, log := range logs {
			rel, _ := filepath.Rel(root, log)
			data, _ := os.ReadFile(log)
			lines, what, errs := tellingLines(string(data), t)
			loggedErrors = loggedErrors || errs
			if shown.logs[log] {
				fmt.Fprintf(w, "      %s"+t.logShownAbove+"\n", t.log, rel)
				continue
			}
			shown.logs[log] = true
			if panicked := panicSummary(string(data)); panicked != "" {
				fmt.Fprintf(w, "      %s%s (%s)\n", t.panic, panicked, rel)
			}
			if len(lines) > 0 {
				what += ":"
			}
			fmt.Fprintf(w, "      %s"+t.logWhat+"\n", t.log, rel, what)
			for _, line := range lines {
				fmt.Fprintf(w, "      |   %s\n", line)
			}
		}
		printRefusals(w, t, refusedRequests(filepath.Join(dir, kittest.APIErrorsFile)), shown.refusals, loggedErrors)
	}
}

// panicSummary returns "VALUE at FILE:LINE" for the first panic a controller log
// reports ("Observed a panic", as client-go's and controller-runtime's crash
// handlers log it): the panic's value and the first frame of its stack trace in
// the learner's own code, not in Go's standard library nor in a module from the
// module cache. The kit builds with -trimpath, so a frame names its file by
// import path (runtime/panic.go, k8s.io/apimachinery@v0.37.2/..., and the kit's
// own github.com/controller-kit/controller-kit/TIER/...), which it gives from the
// repository root (TIER/...); a build without it names folders on disk, which it
// gives as they are. "" when the log reports no panic.
func panicSummary(log string) string {
	i := strings.Index(log, "Observed a panic")
	if i < 0 {
		return ""
	}
	rest := log[i:]
	value := "a panic"
	if m := panicValue.FindStringSubmatch(rest); m != nil {
		value = m[1]
	}
	for _, m := range stackFrame.FindAllStringSubmatch(rest, -1) {
		file := m[1]
		if notTheLearners(file) {
			continue
		}
		return fmt.Sprintf("%s at %s:%s", value, strings.TrimPrefix(file, kitModule+"/"), m[2])
	}
	return value
}

// kitModule is the import path the kit's modules start with.
const kitModule = "github.com/controller-kit/controller-kit"

// notTheLearners reports whether a stack frame's file is in Go's standard
// library or in the module cache: under GOROOT or the module cache on disk, or,
// as -trimpath names them, a standard package's path (no dot in its first
// element: runtime/panic.go) or a module's path@version.
func notTheLearners(file string) bool {
	if strings.Contains(file, "/pkg/mod/") || strings.Contains(file, "@") {
		return true
	}
	if root := goroot(); root != "" && strings.HasPrefix(file, root+"/") {
		return true
	}
	first, _, _ := strings.Cut(file, "/")
	return !strings.HasPrefix(file, "/") && !strings.Contains(first, ".")
}

// goroot is Go's own folder: go/build's default, which a program built with
// -trimpath does not know, else what `go env GOROOT` prints.
var goroot = sync.OnceValue(func() string {
	if build.Default.GOROOT != "" {
		return build.Default.GOROOT
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})

var (
	// panicValue finds the panic's value in klog's panic="..." or zap's "panic": "...".
	panicValue = regexp.MustCompile(`"?panic"?[=:] ?"([^"]+)"`)
	// stackFrame finds a frame's file and line in a Go stack trace, after the
	// tab that starts it (a real one, or \t in a JSON log): a folder on disk,
	// /src/kit/internal/controller/mine.go:271, or, built with -trimpath, an
	// import path, github.com/controller-kit/controller-kit/TIER/mine.go:271.
	stackFrame = regexp.MustCompile(`(?:\t|\\t)([^\s"\\:]+\.go):(\d+)`)
)

// shownSoFar is what one report has already shown under an earlier failing
// check: controller logs by path, and kinds of refused request (printRefusals).
type shownSoFar struct {
	logs, refusals map[string]bool
}

// newShownSoFar returns an empty shownSoFar for a new report.
func newShownSoFar() *shownSoFar {
	return &shownSoFar{logs: map[string]bool{}, refusals: map[string]bool{}}
}

// printRefusals prints refused requests one line per kind of refusal (code,
// verb, resource), with how often it happened, the objects, and its hint; a kind
// already explained under an earlier check (recorded in explained) gets no hint
// again, so one mistake that fails many checks is explained once. Refusals a
// controller is expected to meet and handle (see handled) are left out unless
// loggedErrors says its log has errors, and then counted in one line.
func printRefusals(w io.Writer, t texts, refused []kittest.AuditEntry, explained map[string]bool, loggedErrors bool) {
	type kind struct{ code, verb, resource string }
	var order []kind
	count := map[kind]int{}
	objects := map[kind][]string{}
	first := map[kind]kittest.AuditEntry{}
	left := 0
	for _, e := range refused {
		if handled(e) && !loggedErrors {
			left++
			continue
		}
		k := kind{codeName(e), e.Verb, resourceOf(e)}
		if count[k] == 0 {
			order = append(order, k)
			first[k] = e
		}
		count[k]++
		if object := e.Namespace + "/" + e.Name; !slices.Contains(objects[k], object) {
			objects[k] = append(objects[k], object)
		}
	}
	for _, k := range order {
		fmt.Fprintf(w, "      "+t.api+t.apiRefused+"\n", k.code, k.verb, k.resource, count[k], strings.Join(objects[k], t.listSep))
		key := k.code + " " + k.verb + " " + k.resource
		if explained[key] {
			fmt.Fprintf(w, "              %s\n", t.explainedAbove)
			continue
		}
		explained[key] = true
		fmt.Fprintf(w, "              %s\n", refusalHint(first[k], t))
	}
	if left > 0 {
		fmt.Fprintf(w, "      "+t.api+t.apiHandled+"\n", left)
	}
}

// handled reports whether a refusal is one a correct controller meets and
// handles without an error: a conflict (409: its cache was a moment behind, or
// two writers raced) or the server's own trouble (5xx, such as a timeout).
func handled(e kittest.AuditEntry) bool {
	return e.Code == 409 || e.Code >= 500
}

// tellingLines picks what a learner should read first in a controller's log: its
// last error lines (klog's start with E and a digit, zap's carry ERROR), else its
// last lines. It returns them, the words in t that say which they are, and
// whether they are errors; for a log with nothing in it, no lines and words that
// say so.
func tellingLines(log string, t texts) ([]string, string, bool) {
	lines := nonEmptyLines(log)
	if len(lines) == 0 {
		return nil, t.logEmpty, false
	}
	errorLines := slices.DeleteFunc(slices.Clone(lines), func(l string) bool {
		klogError := len(l) > 1 && l[0] == 'E' && l[1] >= '0' && l[1] <= '9'
		return !klogError && !strings.Contains(l, "\tERROR\t") && !strings.Contains(l, " ERROR ")
	})
	if len(errorLines) > 0 {
		return errorLines[max(0, len(errorLines)-logLines):], fmt.Sprintf(t.logLastErrors, len(errorLines)), true
	}
	return lines[max(0, len(lines)-logLines):], t.logEndsWith, false
}

// testAndParents returns "A/B/C", "A/B" and "A" for test "A/B/C".
func testAndParents(test string) []string {
	names := []string{test}
	for i := strings.LastIndex(test, "/"); i > 0; i = strings.LastIndex(test[:i], "/") {
		names = append(names, test[:i])
	}
	return names
}

// nonEmptyLines returns the lines of s that hold more than white space.
func nonEmptyLines(s string) []string {
	return slices.DeleteFunc(strings.Split(s, "\n"), func(l string) bool { return strings.TrimSpace(l) == "" })
}

// refusedRequests reads an APIErrorsFile; nil when there is none.
func refusedRequests(path string) []kittest.AuditEntry {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var entries []kittest.AuditEntry
	if json.Unmarshal(data, &entries) != nil {
		return nil
	}
	return entries
}

// resourceOf is the request's resource as RBAC rules name it: group/resource/subresource.
func resourceOf(e kittest.AuditEntry) string {
	r := e.Resource
	if e.APIGroup != "" {
		r = e.APIGroup + "/" + r
	}
	if e.Subresource != "" {
		r += "/" + e.Subresource
	}
	return r
}

// codeName is the HTTP status code with the name the API gives the error.
func codeName(e kittest.AuditEntry) string {
	switch {
	case e.Code == 409 && e.Verb == "create":
		return "409 AlreadyExists"
	}
	names := map[int]string{403: "Forbidden", 404: "NotFound", 409: "Conflict", 422: "Invalid"}
	if name, ok := names[e.Code]; ok {
		return fmt.Sprintf("%d %s", e.Code, name)
	}
	return fmt.Sprint(e.Code)
}

// refusalHint says what a refused request means for the Reconciler that sent
// it, in t's language: chosen by the error the API server gave, not by the
// check that failed.
func refusalHint(e kittest.AuditEntry, t texts) string {
	switch {
	case e.Code == 403 && slices.Contains(e.Causes, "NamespaceTerminating"):
		return t.refusedTerminating
	case e.Code == 403 && e.Authorization == "allow":
		return fmt.Sprintf(t.refusedByAdmission, e.Verb, e.Message)
	case e.Code == 403:
		return fmt.Sprintf(t.refusedByRBAC, e.Verb, resourceOf(e))
	case e.Code == 404:
		return t.refusedNotFound
	case e.Code == 409 && e.Verb == "create":
		return t.refusedExists
	case e.Code == 409:
		return t.refusedConflict
	case e.Code == 422:
		return t.refusedInvalid
	}
	return t.refusedOther
}
