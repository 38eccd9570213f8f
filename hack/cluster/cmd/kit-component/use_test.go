package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kwok/pkg/apis/internalversion"
)

// A component's health check answered by another process on its port (a plain
// HTTP server where the component serves HTTPS) ends at once with an error that
// names the port and says the fix is a rerun or another cluster, not the
// learner's code; on Linux it names the process, here the test's own.
func TestHealthCheckAnsweredByAnotherProcessNamesThePortAndTheProcess(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })}
	go func() { _ = server.Serve(ln) }()
	t.Cleanup(func() { _ = server.Close() })

	c := internalversion.Component{Name: "kube-controller-manager", Metric: &internalversion.ComponentMetric{Scheme: "https", Host: ln.Addr().String(), InsecureSkipVerify: true}}
	start := time.Now()
	err = waitHealthy(context.Background(), "no-such-cluster", c, 20*time.Second)
	if err == nil {
		t.Fatal("the health check passed; want an error that another process answers the port")
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("the health check waited %s for a port another process answers; want it to stop at the first answer", waited.Round(time.Second))
	}
	want := []string{"port " + ln.Addr().String() + " is answered by another process", "not your code", "Run the same command again", "KIT_CLUSTER=NAME make local-up"}
	if runtime.GOOS == "linux" {
		want = append(want, fmt.Sprintf("held by pid %d (", os.Getpid()))
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not say %q:\n%v", w, err)
		}
	}
}

// A port that another process still holds after the component stopped (another
// cluster that started meanwhile took it, say) ends the restart with an error that
// names the port and the process, says the component is not running now, and gives
// both fixes: stop a leftover of this cluster and rerun, or start this cluster again
// on free ports (or use another cluster), since a port another cluster holds never
// comes back; "stop it, then try again" alone sends the learner after a process
// that is not theirs.
func TestPortStillHeldAfterTheStopNamesTheProcessAndBothFixes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()

	c := internalversion.Component{Name: "kube-controller-manager", Metric: &internalversion.ComponentMetric{Scheme: "https", Host: ln.Addr().String()}}
	err = waitPortFree("mine", c, time.Second)
	if err == nil {
		t.Fatal("the wait for a free port passed; want an error that another process holds it")
	}
	want := []string{
		ln.Addr().String(),
		"kube-controller-manager is not running now",
		"stop it and run the same command again",
		"not your code",
		"KIT_CLUSTER=mine make local-down, then KIT_CLUSTER=mine make local-up",
		"KIT_CLUSTER=NAME make local-up",
	}
	if runtime.GOOS == "linux" {
		want = append(want, fmt.Sprintf("pid %d (", os.Getpid()))
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not say %q:\n%v", w, err)
		}
	}
}

func TestSetFlagsReplacesByNameAndAddsTheRest(t *testing.T) {
	args := []string{"--etcd-prefix=/registry", "--enable-admission-plugins=OwnerReferencesPermissionEnforcement", "--v=2"}
	got, err := setFlags(args, []string{"--enable-admission-plugins=OwnerReferencesPermissionEnforcement,FooPolicy", "--audit-log-maxsize=10", "--profiling"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--etcd-prefix=/registry", "--enable-admission-plugins=OwnerReferencesPermissionEnforcement,FooPolicy", "--v=2", "--audit-log-maxsize=10", "--profiling"}
	if !slices.Equal(got, want) {
		t.Errorf("setFlags = %q, want %q", got, want)
	}
	if args[1] != "--enable-admission-plugins=OwnerReferencesPermissionEnforcement" {
		t.Errorf("setFlags changed its input: %q", args)
	}
}

func TestSetFlagsNamesAFlagWrittenWrongAndTheForm(t *testing.T) {
	for _, bad := range []string{"enable-admission-plugins=X", "-v=4", "--=x", "--enable admission=X"} {
		_, err := setFlags(nil, []string{bad})
		if err == nil {
			t.Errorf("setFlags(%q) = nil error, want one naming it", bad)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) || !strings.Contains(err.Error(), "--name=value") {
			t.Errorf("setFlags(%q) error %q: want the flag quoted and the form --name=value", bad, err)
		}
	}
}

func TestLastLinesIndentsTheEndOfTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kube-apiserver.log")
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\nE run.go:72] \"command failed\" err=\"plugin X is unknown\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "    two\n    three\n    E run.go:72] \"command failed\" err=\"plugin X is unknown\""
	if got := lastLines(path, 3); got != want {
		t.Errorf("lastLines = %q, want %q", got, want)
	}
	if got := lastLines(filepath.Join(t.TempDir(), "missing.log"), 3); got != "" {
		t.Errorf("lastLines of a missing file = %q, want \"\"", got)
	}
}

// apiServer is a stand-in for kube-apiserver on TLS loopback: /readyz ok, and
// the dry-run create answered by create.
func apiServer(t *testing.T, create http.HandlerFunc) internalversion.Component {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	mux.HandleFunc("/api/v1/namespaces/kube-system/configmaps", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Query().Get("dryRun") != "All" {
			t.Errorf("the probe sent %s %s; want a POST with dryRun=All, which stores nothing", r.Method, r.URL)
		}
		create(w, r)
	})
	server := httptest.NewTLSServer(mux)
	t.Cleanup(server.Close)
	return internalversion.Component{Name: "kube-apiserver", Metric: &internalversion.ComponentMetric{Scheme: "https", Host: server.Listener.Addr().String(), InsecureSkipVerify: true}}
}

// A kube-apiserver whose admission plugin refuses every create answers its
// health checks; the swap's probe is refused, and its error quotes the refusal.
func TestAdmitsACreateQuotesAPluginsRefusal(t *testing.T) {
	c := apiServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"configmaps \"kit-component-probe-x\" is forbidden: FooPolicy refuses every create","reason":"Forbidden","code":403}`)
	})
	err := admitsACreate(context.Background(), c, filepath.Join(t.TempDir(), "no.log"), 0, 10*time.Second)
	var refused admissionError
	if !errors.As(err, &refused) {
		t.Fatalf("admitsACreate = %v; want an admissionError", err)
	}
	for _, w := range []string{"admits no create", "403", `FooPolicy refuses every create`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not say %q:\n%v", w, err)
		}
	}
}

// A kube-apiserver whose plugin panics ends the probe's request without an
// answer; the error names the panic and the frame it happened in, from the
// lines the server logged after the swap (offset), not an older panic's.
func TestAdmitsACreateNamesThePanicFromTheLog(t *testing.T) {
	c := apiServer(t, func(w http.ResponseWriter, _ *http.Request) { panic(http.ErrAbortHandler) })
	log := filepath.Join(t.TempDir(), "kube-apiserver.log")
	old := "E1205 19:00:00.000000 1 timeout.go:121] \"Observed a panic\" panic=<\n\tan older panic\n\tgoroutine 1 [running]:\n\tpanic({0x1?, 0x2?})\n\t\truntime/panic.go:860 +0x13a\n\tk8s.io/old.F()\n\t\tk8s.io/old/f.go:1 +0x1\n >\n"
	now := "E1205 20:00:00.000000 1 timeout.go:121] \"Observed a panic\" panic=<\n" +
		"\truntime error: invalid memory address or nil pointer dereference\n" +
		"\tgoroutine 4613 [running]:\n" +
		"\tk8s.io/apiserver/pkg/endpoints/handlers/finisher.finishRequest.func1.1()\n" +
		"\t\tk8s.io/apiserver@v0.37.2/pkg/endpoints/handlers/finisher/finisher.go:105 +0xa5\n" +
		"\tpanic({0x3d962a0?, 0x757c2d0?})\n" +
		"\t\truntime/panic.go:860 +0x13a\n" +
		"\tk8s.io/kubernetes/plugin/pkg/admission/foopolicy.(*Plugin).Validate(0x7592870?, {0x3fbb160?, 0x9?}, {0x0?, 0x0?})\n" +
		"\t\tk8s.io/kubernetes@v1.37.2/plugin/pkg/admission/foopolicy/admission.go:44 +0x12\n" +
		"\tk8s.io/apiserver/pkg/admission/metrics.pluginHandlerWithMetrics.Validate(...)\n" +
		" >\n"
	if err := os.WriteFile(log, []byte(old+now), 0o644); err != nil {
		t.Fatal(err)
	}
	err := admitsACreate(context.Background(), c, log, int64(len(old)), 10*time.Second)
	if !errors.As(err, new(admissionError)) {
		t.Fatalf("admitsACreate = %v; want an admissionError", err)
	}
	for _, w := range []string{
		"got no answer",
		"the server panicked: runtime error: invalid memory address or nil pointer dereference",
		"in k8s.io/kubernetes/plugin/pkg/admission/foopolicy.(*Plugin).Validate at k8s.io/kubernetes@v1.37.2/plugin/pkg/admission/foopolicy/admission.go:44",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not say %q:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "older panic") {
		t.Errorf("the error names a panic logged before the swap:\n%v", err)
	}
}

// A kube-apiserver that admits the dry-run create is healthy.
func TestAdmitsACreatePassesAnAdmittingServer(t *testing.T) {
	c := apiServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"kind":"ConfigMap","apiVersion":"v1"}`)
	})
	if err := admitsACreate(context.Background(), c, filepath.Join(t.TempDir(), "no.log"), 0, 10*time.Second); err != nil {
		t.Errorf("admitsACreate = %v; want nil for a server that admits the create", err)
	}
}
