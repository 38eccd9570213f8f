package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// freeAddress returns a local TCP address nothing listens on.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// dial connects to addr, trying for up to 10 seconds while the server starts.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var conn net.Conn
		if conn, err = net.Dial("tcp", addr); err == nil {
			return conn
		}
	}
	t.Fatalf("nothing answers on %s: %v", addr, err)
	return nil
}

func TestRedisStandInAnswersPingInlineAndInRESP(t *testing.T) {
	addr := freeAddress(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveRedis(ctx, addr) }()

	conn := dial(t, addr)
	defer conn.Close()
	// What redis-cli ping sends, an inline command, and a command it does not know.
	fmt.Fprint(conn, "*1\r\n$4\r\nPING\r\nping\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
	r := bufio.NewReader(conn)
	for i, want := range []string{"+PONG\r\n", "+PONG\r\n", "-ERR"} {
		got, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("answer %d = %q, want it to start with %q", i, got, want)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serveRedis after its context ended = %v, want nil (a signal is a clean stop)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serveRedis did not return after its context ended")
	}
}

func TestReadRedisCommandRefusesABadArrayHeader(t *testing.T) {
	if _, err := readRedisCommand(bufio.NewReader(strings.NewReader("*x\r\n"))); err == nil {
		t.Error("readRedisCommand(*x) = nil error, want a bad RESP array header")
	}
}

func TestHTTPStandInSaysWhatItStandsFor(t *testing.T) {
	t.Setenv("KIT_STANDIN_FOR", "nginx:1.27")
	addr := freeAddress(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveHTTP(ctx, addr) }()
	dial(t, addr).Close()

	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "stand-in for nginx:1.27") {
		t.Errorf("GET /healthz = %d %q, want 200 and a body naming the stand-in for nginx:1.27", resp.StatusCode, body)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serveHTTP after its context ended = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serveHTTP did not return after its context ended")
	}
}

func TestHTTPStandInFailsOnAPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := serveHTTP(context.Background(), l.Addr().String()); err == nil {
		t.Error("serveHTTP on a port in use = nil, want an error naming the port")
	}
}
