package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/kwok/pkg/apis/internalversion"
)

// What "healthy" means for kube-apiserver after a swap. Its /healthz and
// /readyz stay ok when a compiled-in admission plugin refuses every create, or
// panics on each (the handler chain recovers the panic and fails that one
// request), yet such a server stores nothing: controllers fail, kubectl apply
// fails, and make kube-restart would have said all is well. So, once /readyz is
// ok (admission's informers have synced, which /healthz does not wait for), the
// server must also admit a server-side dry-run create of an object the cluster
// itself stores, a ConfigMap in kube-system: dry-run runs every admission
// plugin and stores nothing. A plugin that judges only its own kind (a Foo, say)
// is not seen by this; the learner's first create of that kind is.

// probeConfigMap is the dry-run create's body: generateName, so that it never
// meets a ConfigMap of that name.
const probeConfigMap = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"kit-component-probe-","namespace":"kube-system"},"data":{"why":"kit-component use: does kube-apiserver admit a create?"}}`

// probeTries is how many times the dry-run create is sent before its failure
// counts: a passing failure (a connection reset while the server settles) is
// not the plugin's, whose refusal or panic comes every time.
const probeTries = 3

// admissionError is admitsACreate's error: kube-apiserver answers its health
// checks but did not admit the dry-run create; why says what it answered, or the
// panic its log shows.
type admissionError struct{ why string }

func (e admissionError) Error() string {
	return "it answers /healthz and /readyz but admits no create: a server-side dry-run create of a ConfigMap in kube-system " + e.why
}

// admitsACreate waits up to timeout for the kube-apiserver c describes to answer
// /readyz ok, then sends it the dry-run create; it returns nil once one is
// admitted (201), and after probeTries failures an admissionError: the
// refusal's code and message, or, when the server answered with no status (a
// panic ends the request so) or a 500, the panic the server logged into log
// after offset, with the frame it happened in.
func admitsACreate(ctx context.Context, c internalversion.Component, log string, offset int64, timeout time.Duration) error {
	client, err := componentClient(c)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(componentURL(c, "/"), "/")
	deadline := time.Now().Add(timeout)
	for {
		code, err := get(ctx, client, base+"/readyz")
		if err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s/readyz answered no ok within %s (last: %d, %v)", base, timeout, code, err)
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	url := base + "/api/v1/namespaces/kube-system/configmaps?dryRun=All&fieldManager=kit-component"
	var last error
	for try := 1; try <= probeTries; try++ {
		if try > 1 {
			if err := sleep(ctx, time.Second); err != nil {
				return err
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(probeConfigMap))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			last = admissionError{why: "got no answer (" + err.Error() + ")" + panicIn(log, offset)}
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode == http.StatusCreated {
			return nil
		}
		why := fmt.Sprintf("was answered %d %s", resp.StatusCode, statusMessage(body))
		if resp.StatusCode >= 500 {
			why += panicIn(log, offset)
		}
		last = admissionError{why: why}
	}
	return last
}

// statusMessage returns the message of the Status a refused request is
// answered with, or the body itself when it is none.
func statusMessage(body []byte) string {
	var status struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &status) == nil && status.Message != "" {
		return fmt.Sprintf("%q", status.Message)
	}
	return fmt.Sprintf("%q", strings.TrimSpace(string(body)))
}

// panicIn returns, as the end of an error message, the first panic
// kube-apiserver logged into log after offset: its value and the frame it
// happened in (the function and its file:line, as the build names them), or ""
// when the log shows none. A panic in a request's handling is logged as
// "Observed a panic" with the value on the next line and the stack after it;
// the frame after the stack's first panic( line is where it happened.
func panicIn(log string, offset int64) string {
	f, err := os.Open(log)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	// A frame is two lines, the function and its file:line; after panic('s
	// own come the panicking function's.
	var value, function string
	inPanic, linesAfterPanic := false, 0
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		switch {
		case !inPanic:
			inPanic = strings.Contains(line, `"Observed a panic"`)
		case value == "":
			value = line
		case line == ">":
			// The block ended without a frame after panic(: look at the next one.
			inPanic, value, linesAfterPanic = false, "", 0
		case linesAfterPanic == 0 && strings.HasPrefix(line, "panic("):
			linesAfterPanic = 1
		case linesAfterPanic == 1:
			linesAfterPanic = 2 // panic('s file:line
		case linesAfterPanic == 2:
			function, linesAfterPanic = withoutArguments(line), 3
		case linesAfterPanic == 3:
			file, _, _ := strings.Cut(line, " +0x")
			return fmt.Sprintf("; the server panicked: %s, in %s at %s (its log: %s)", value, function, file, log)
		}
	}
	if value != "" {
		return fmt.Sprintf("; the server panicked: %s (its log: %s)", value, log)
	}
	return ""
}

// get sends a GET and returns the answer's status code.
func get(ctx context.Context, client *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// sleep waits d, or less when ctx ends (its error).
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// withoutArguments returns a stack frame's function line without its
// arguments, the last parenthesised group: "pkg.(*T).Validate(0x1?, {0x2?})"
// is "pkg.(*T).Validate".
func withoutArguments(frame string) string {
	if !strings.HasSuffix(frame, ")") {
		return frame
	}
	depth := 0
	for i := len(frame) - 1; i >= 0; i-- {
		switch frame[i] {
		case ')':
			depth++
		case '(':
			if depth--; depth == 0 {
				return frame[:i]
			}
		}
	}
	return frame
}
