package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
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
