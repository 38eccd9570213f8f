package kittest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStartLogsToTheFileAndReportsHowTheProcessEnded(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "sh.log")

	p, err := Start("sh", logPath, "/bin/sh", "-c", "echo started; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	code, err := p.Wait(10 * time.Second)

	if err != nil || code != 3 {
		t.Errorf("Wait = %d, %v; want 3, nil", code, err)
	}
	if state := p.State(); state == nil || state.ExitCode() != 3 {
		t.Errorf("State() = %v; want the state of a process that exited with 3", state)
	}
	if b, err := os.ReadFile(logPath); err != nil || string(b) != "started\n" {
		t.Errorf("log file holds %q, %v; want %q", b, err, "started\n")
	}
}

func TestStartOfAMissingBinaryIsAnError(t *testing.T) {
	_, err := Start("none", filepath.Join(t.TempDir(), "none.log"), filepath.Join(t.TempDir(), "no-such-binary"))

	if err == nil {
		t.Error("Start of a binary that does not exist returned no error")
	}
}
