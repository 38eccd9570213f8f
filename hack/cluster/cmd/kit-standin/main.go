// Command kit-standin is the one program inside every stand-in image of the kit's
// kind node image (hack/cluster/kind-node-image.sh): where no image can be pulled,
// the public images the lessons and e2e suites name (nginx:1.27, redis:6.0.5,
// registry.k8s.io/pause:3.10, ...) are replaced by small images of this static
// binary under the same names, so that their Pods really start and stay running.
// It imitates only what the kit's Pods need from the real image: a process that
// runs until it is told to stop, and the port its Service or probe talks to.
//
//	kit-standin pause          sleep until SIGTERM or SIGINT; as PID 1, reap orphans
//	kit-standin http [ARGS]    answer HTTP on port 80 (nginx, the guestbook frontend)
//	kit-standin redis [ARGS]   answer Redis' PING on port 6379 (redis)
//
// Each image's ENTRYPOINT is the program and its role; a Pod's args (the
// guestbook's "--replicaof HOST 6379") come after the role and are logged, not
// obeyed. PORT overrides the port of http and redis. The image's label
// dev.controller-kit.stand-in names the image it stands in for, and every answer
// says it is a stand-in, so no one mistakes it for the real one.
//
// Exit code 0 after SIGTERM or SIGINT; 2 for an unknown role; 1 when the port
// cannot be opened.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kit-standin pause|http|redis [ARGS...]")
		os.Exit(2)
	}
	role, args := os.Args[1], os.Args[2:]
	log.SetFlags(log.LstdFlags | log.LUTC)
	log.SetPrefix("kit-standin " + role + ": ")
	if len(args) > 0 {
		log.Printf("arguments %q ignored: this is the kit's stand-in, not the real image", args)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if os.Getpid() == 1 {
		go reapOrphans(ctx)
	}

	var err error
	switch role {
	case "pause":
		log.Print("running until SIGTERM")
		<-ctx.Done()
	case "http":
		err = serveHTTP(ctx, listenAddress("80"))
	case "redis":
		err = serveRedis(ctx, listenAddress("6379"))
	default:
		fmt.Fprintf(os.Stderr, "kit-standin: unknown role %q: want pause, http or redis\n", role)
		os.Exit(2)
	}
	if err != nil {
		log.Print(err)
		os.Exit(1)
	}
	log.Print("stopped by a signal")
}

// listenAddress is ":" and $PORT, or ":" and def when PORT is empty.
func listenAddress(def string) string {
	if p := os.Getenv("PORT"); p != "" {
		return ":" + p
	}
	return ":" + def
}

// reapOrphans waits for every child that exits, which is PID 1's duty in a
// container: a pod's pause container is its PID namespace's init.
func reapOrphans(ctx context.Context) {
	children := make(chan os.Signal, 8)
	signal.Notify(children, syscall.SIGCHLD)
	defer signal.Stop(children)
	for {
		select {
		case <-ctx.Done():
			return
		case <-children:
			for {
				var status syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}

// serveHTTP answers every request on addr with 200 and a line that names the
// stand-in, until ctx ends; then it shuts down within 5 seconds.
func serveHTTP(ctx context.Context, addr string) error {
	image := os.Getenv("KIT_STANDIN_FOR")
	server := &http.Server{
		Addr:              addr,
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintf(w, "controller-kit stand-in for %s: %s %s\n", image, r.Method, r.URL.Path)
		}),
	}
	errs := make(chan error, 1)
	go func() { errs <- server.ListenAndServe() }()
	log.Printf("answering HTTP on %s", addr)
	select {
	case err := <-errs:
		return fmt.Errorf("serving HTTP on %s: %w", addr, err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return server.Shutdown(shutdown)
}

// serveRedis answers Redis' PING with PONG on addr, and every other command with
// an error that names the stand-in, until ctx ends.
func serveRedis(ctx context.Context, addr string) error {
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening for Redis clients on %s: %w", addr, err)
	}
	go func() {
		<-ctx.Done()
		listener.Close()
	}()
	log.Printf("answering Redis PING on %s", addr)
	for {
		conn, err := listener.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("accepting on %s: %w", addr, err)
		}
		go answerRedis(conn)
	}
}

// answerRedis reads commands from one client, inline ("PING") or in RESP arrays
// ("*1\r\n$4\r\nPING\r\n"), and answers each.
func answerRedis(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		command, err := readRedisCommand(r)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				log.Printf("client %s: %v", conn.RemoteAddr(), err)
			}
			return
		}
		answer := "-ERR controller-kit stand-in: only PING is answered\r\n"
		if strings.EqualFold(command, "PING") {
			answer = "+PONG\r\n"
		}
		if _, err := io.WriteString(conn, answer); err != nil {
			return
		}
	}
}

// readRedisCommand returns the first word of the next command.
func readRedisCommand(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if !strings.HasPrefix(line, "*") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			return "", nil
		}
		return fields[0], nil
	}
	var n int
	if _, err := fmt.Sscanf(line, "*%d", &n); err != nil || n < 1 {
		return "", fmt.Errorf("bad RESP array header %q", line)
	}
	var words []string
	for range n {
		if _, err := r.ReadString('\n'); err != nil { // $LEN
			return "", err
		}
		word, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		words = append(words, strings.TrimRight(word, "\r\n"))
	}
	return words[0], nil
}
