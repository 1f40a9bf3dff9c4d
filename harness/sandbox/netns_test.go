package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// netProg is the program of TestTheProgramReachesOnlyWhatItIsGiven: it
// dials NET_ALLOWED and NET_FORBIDDEN, says what answered, then serves one
// request on NET_SERVE.
func netProg() int {
	get := func(addr string) string {
		c := &http.Client{Timeout: 3 * time.Second}
		resp, err := c.Get("http://" + addr + "/")
		if err != nil {
			return "unreachable"
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	fmt.Printf("allowed: %s\n", get(os.Getenv("NET_ALLOWED")))
	fmt.Printf("forbidden: %s\n", get(os.Getenv("NET_FORBIDDEN")))
	l, err := net.Listen("tcp", os.Getenv("NET_SERVE"))
	if err != nil {
		fmt.Println("serve:", err)
		return 1
	}
	served := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "served from inside")
		close(served)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	select {
	case <-served:
		time.Sleep(200 * time.Millisecond) // the answer gets out
		return 0
	case <-time.After(time.Minute):
		fmt.Println("serve: nobody came")
		return 1
	}
}

func answering(t *testing.T, body string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }),
		ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// TestTheProgramReachesOnlyWhatItIsGiven: a sandboxed program has a
// network of its own. It reaches the addresses its Spec lets it connect
// to, no other port of the machine (here: a server on loopback, as the
// cluster's etcd is), and the grader reaches what it serves.
func TestTheProgramReachesOnlyWhatItIsGiven(t *testing.T) {
	s := open(t)
	prog := installSelf(t, s)
	allowed, forbidden := answering(t, "the API server"), answering(t, "etcd")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve := l.Addr().String()
	l.Close()
	spec := Spec{Path: prog, Env: []string{"SANDBOX_TEST_PROG=net", "NET_ALLOWED=" + allowed, "NET_FORBIDDEN=" + forbidden, "NET_SERVE=" + serve},
		Connect: []string{allowed}, Serve: []string{serve}}
	type ran struct {
		res Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := s.Run(context.Background(), spec, 2*time.Minute, "net")
		done <- ran{res, err}
	}()
	var got string
	var r ran
	c := &http.Client{Timeout: 2 * time.Second}
	for ended := false; !ended; {
		if resp, err := c.Get("http://" + serve + "/"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got = string(b)
			r, ended = <-done, true
			continue
		}
		select {
		case r = <-done: // it ended, or failed to start
			ended = true
		case <-time.After(100 * time.Millisecond):
		}
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	out := string(r.res.Output)
	if got != "served from inside" {
		t.Errorf("the grader read %q from the program's address %s, want what it serves\n%s", got, serve, out)
	}
	for _, want := range []string{"allowed: the API server", "forbidden: unreachable"} {
		if !strings.Contains(out, want) {
			t.Errorf("the program did not say %q:\n%s", want, out)
		}
	}
	if r.res.ExitCode != 0 {
		t.Errorf("exit %d\n%s", r.res.ExitCode, out)
	}
}

func TestOnlyLoopbackIsRelayed(t *testing.T) {
	for _, a := range []string{"10.0.0.1:80", "example.com:80", "127.0.0.1"} {
		if err := loopbackAddr(a); err == nil {
			t.Errorf("%s accepted", a)
		}
	}
	for _, a := range []string{"127.0.0.1:6443", "[::1]:6443"} {
		if err := loopbackAddr(a); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}
