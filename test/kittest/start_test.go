package kittest

import (
	"os"
	"path/filepath"
	"strings"
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

func TestStartGivesAProgramItsKubeconfigInItsEnvironmentToo(t *testing.T) {
	t.Setenv("KUBECONFIG", "/the/tests/admin.kubeconfig")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"--kubeconfig=PATH", []string{"--kubeconfig=/its/own.kubeconfig"}, "/its/own.kubeconfig"},
		{"-kubeconfig PATH", []string{"-v=2", "-kubeconfig", "/its/own.kubeconfig"}, "/its/own.kubeconfig"},
		{"no kubeconfig flag", []string{"--v=2"}, "/the/tests/admin.kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "sh.log")
			// sh prints the KUBECONFIG of its environment; the args after its
			// name are the program's own flags, which it ignores.
			p, err := Start("sh", logPath, "/bin/sh", append([]string{"-c", `echo "$KUBECONFIG"`, "sh"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if code, err := p.Wait(10 * time.Second); err != nil || code != 0 {
				t.Fatalf("Wait = %d, %v; want 0, nil", code, err)
			}
			if b, err := os.ReadFile(logPath); err != nil || strings.TrimSpace(string(b)) != tc.want {
				t.Errorf("KUBECONFIG in the environment of a program started with %q: %q, %v; want %q", tc.args, b, err, tc.want)
			}
		})
	}
}

func TestStartOfAMissingBinaryIsAnError(t *testing.T) {
	_, err := Start("none", filepath.Join(t.TempDir(), "none.log"), filepath.Join(t.TempDir(), "no-such-binary"))

	if err == nil {
		t.Error("Start of a binary that does not exist returned no error")
	}
}

// exited runs the shell script and waits for it, for the log checks below.
func exited(t *testing.T, script string) *Process {
	t.Helper()
	p, err := Start("sh", filepath.Join(t.TempDir(), "sh.log"), "/bin/sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckNoLineNeedsTheProofLineBeforeItTrustsAnAbsence(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		wantErr      string // "" for no error
	}{
		{"started, nothing refused", `echo '"Starting"'; echo reconciled`, ""},
		{"started, then refused", `echo '"Starting"'; echo 'pods is forbidden'`, "RBAC lacks a verb"},
		{"empty log", `true`, "cannot show"},
		{"never started", `echo 'loading the kubeconfig failed'`, "cannot show"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := exited(t, tc.script).CheckNoLine(`"Starting"`, "RBAC lacks a verb", "forbidden")
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("CheckNoLine = %v, want nil", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("CheckNoLine = %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}

func TestCheckNoLineWantsEveryPartOnOneLine(t *testing.T) {
	p := exited(t, `echo '"Starting"'; echo '"Reconciler error" namespace=ns-b'`)
	if err := p.CheckNoLine(`"Starting"`, "failed in ns-a", "Reconciler error", "ns-a"); err != nil {
		t.Errorf("CheckNoLine(Reconciler error, ns-a) = %v; want nil, the only error is in ns-b", err)
	}
	if err := p.CheckNoLine(`"Starting"`, "failed in ns-b", "Reconciler error", "ns-b"); err == nil || !strings.Contains(err.Error(), "failed in ns-b") {
		t.Errorf("CheckNoLine(Reconciler error, ns-b) = %v; want an error saying it failed in ns-b", err)
	}
}
