package kittest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// APIErrorsFile is the name of the file, in a test's folder under $KIT_E2E_LOG_DIR,
// that lists as JSON ([]AuditEntry) the requests of a controller that the API
// server refused while the test ran (response code 400 or more): a forbidden verb,
// a conflict, an object not found.
const APIErrorsFile = "api-errors.json"

// TestDir returns the folder for what test t keeps: <$KIT_E2E_LOG_DIR>/<test
// name, slashes and spaces made underscores>, created if needed, or t.TempDir()
// when the variable is unset. It fails the test when the folder cannot be made.
func TestDir(t testing.TB) string {
	t.Helper()
	root := os.Getenv(LogDirEnv)
	if root == "" {
		return t.TempDir()
	}
	dir := filepath.Join(root, TestDirName(t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("cannot create %s: %v", dir, err)
	}
	return dir
}

// TestDirName is the folder name TestDir gives the test called name.
func TestDirName(name string) string {
	return strings.NewReplacer("/", "_", " ", "_").Replace(name)
}

// recordAPIErrors appends to the test's APIErrorsFile the requests that a
// ServiceAccount (a controller under test, impersonated) sent to namespace since
// since and that the API server refused, as its audit log recorded them. It does
// nothing unless $KIT_E2E_LOG_DIR is set, and nothing on a cluster without an
// audit log (kind); a log it cannot read is reported in the test's output.
func recordAPIErrors(t testing.TB, namespace string, since time.Time) {
	t.Helper()
	if os.Getenv(LogDirEnv) == "" {
		return
	}
	entries, err := currentAuditLog()
	if errors.Is(err, ErrNotLocalCluster) {
		return
	}
	if err != nil {
		t.Logf("cannot read the audit log for the diagnosis: %v", err)
		return
	}
	var refused []AuditEntry
	for _, e := range entries {
		if e.Code >= 400 && e.Namespace == namespace && !e.Received.Before(since) &&
			strings.HasPrefix(e.User, "system:serviceaccount:") {
			refused = append(refused, e)
		}
	}
	if len(refused) == 0 {
		return
	}
	path := filepath.Join(TestDir(t), APIErrorsFile)
	var all []AuditEntry
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &all) // a file this function wrote
	}
	data, err := json.MarshalIndent(append(all, refused...), "", "  ")
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		t.Logf("cannot write %s: %v", path, err)
	}
}
