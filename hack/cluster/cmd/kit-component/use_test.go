package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
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
