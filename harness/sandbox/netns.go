package sandbox

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// A sandboxed program has a network namespace of its own: a loopback
// interface and nothing else. It reaches no port of the machine — not the
// envtest etcd behind the API server (which takes any client), not another
// grade's cluster, not the grader's proxy stand-in of another run — but the
// ones its Spec names:
//
//   - Connect: host addresses it may dial. Inside, the same address listens
//     (a kubeconfig or flag needs no change); each connection is relayed to
//     the machine's.
//   - Serve: addresses it listens on that the grader dials (the controller's
//     metrics and health probes). The machine's address listens; each
//     connection is relayed into the namespace.
//
// The relay is a process of its own, root in the machine's namespace, forked
// by the helper before it leaves that namespace; it holds sockets on both
// sides (a socket stays in the namespace it was made in) and ends with the
// program. Only loopback addresses are relayed.

// relayArg is the helper operation the relay runs as.
const relayArg = "relay"

// startRelay starts the relay for the calling thread, which must be locked
// and still in the machine's network namespace; it then moves that thread
// into a network namespace of its own, brings its loopback up and waits until
// the relay listens on both sides. The relay ends when this process (after
// exec, the program) ends.
func startRelay(connect, serve []string) error {
	for _, a := range append(append([]string{}, connect...), serve...) {
		if err := loopbackAddr(a); err != nil {
			return err
		}
	}
	if len(connect)+len(serve) == 0 {
		// Nothing to relay (the unit tests): a loopback of its own only.
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("a network namespace for the program: %w", err)
		}
		return loopbackUp()
	}
	fromHelper, toRelay, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("the relay's pipe: %w", err)
	}
	fromRelay, toHelper, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("the relay's pipe: %w", err)
	}
	args := []string{HelperArg, relayArg, "-parent", strconv.Itoa(os.Getpid())}
	for _, a := range connect {
		args = append(args, "-connect", a)
	}
	for _, a := range serve {
		args = append(args, "-serve", a)
	}
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.Env = []string{}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, os.Stderr
	cmd.ExtraFiles = []*os.File{fromHelper, toHelper} // fd 3, fd 4
	// Forked from this (locked) thread: the machine's namespace.
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the network relay: %w", err)
	}
	fromHelper.Close()
	toHelper.Close()
	defer toRelay.Close()
	defer fromRelay.Close()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("a network namespace for the program: %w", err)
	}
	if err := loopbackUp(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(toRelay, "%d\n", unix.Gettid()); err != nil {
		return fmt.Errorf("telling the network relay where to listen: %w", err)
	}
	line, err := bufio.NewReader(fromRelay).ReadString('\n')
	if line = strings.TrimSpace(line); line != "ok" {
		if line == "" && err != nil {
			line = err.Error()
		}
		return fmt.Errorf("the network relay: %s", line)
	}
	return nil
}

// loopbackAddr accepts host:port with a loopback IP.
func loopbackAddr(a string) error {
	ap, err := netip.ParseAddrPort(a)
	if err != nil {
		return fmt.Errorf("relayed address %q: %w", a, err)
	}
	if !ap.Addr().IsLoopback() {
		return fmt.Errorf("relayed address %q: only loopback addresses are relayed", a)
	}
	return nil
}

// hostAddr is the namespace's one address that is not a loopback one
// (TEST-NET-1, RFC 5737: nothing answers it anywhere). A kube-apiserver — a
// learner's unit tests may start envtest — refuses to start on a machine
// with no default route to an interface with a global address.
var hostAddr = net.IPv4(192, 0, 2, 1)

// loopbackUp brings up lo in the calling thread's network namespace, gives
// it hostAddr and routes everything else there too (nothing leaves).
func loopbackUp() error {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("the namespace's lo: %w", err)
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return fmt.Errorf("bringing lo up: %w", err)
	}
	if err := netlink.AddrAdd(lo, &netlink.Addr{IPNet: &net.IPNet{IP: hostAddr, Mask: net.CIDRMask(32, 32)}}); err != nil {
		return fmt.Errorf("an address for the namespace: %w", err)
	}
	if err := netlink.RouteAdd(&netlink.Route{LinkIndex: lo.Attrs().Index, Scope: netlink.SCOPE_LINK,
		Dst: &net.IPNet{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)}}); err != nil {
		return fmt.Errorf("a default route for the namespace: %w", err)
	}
	return nil
}

type addrList []string

func (l *addrList) String() string     { return strings.Join(*l, ",") }
func (l *addrList) Set(v string) error { *l = append(*l, v); return nil }

// helperRelay is the relay process: fd 3 reads the thread whose namespace
// is the program's, fd 4 answers "ok" once every listener is up.
func helperRelay(args []string) error {
	fs := flag.NewFlagSet(relayArg, flag.ContinueOnError)
	parent := fs.Int("parent", 0, "the helper's pid: the relay ends with it")
	var connect, serve addrList
	fs.Var(&connect, "connect", "host:port the program may dial, repeated")
	fs.Var(&serve, "serve", "host:port the program listens on, repeated")
	if err := fs.Parse(args); err != nil {
		return err
	}
	in, out := os.NewFile(3, "from-helper"), os.NewFile(4, "to-helper")
	if in == nil || out == nil {
		return errors.New("the relay runs only as the helper's child")
	}
	// Gone with the program: its pid's descriptor reads ready when it ends.
	pidfd, err := unix.PidfdOpen(*parent, 0)
	if err != nil || os.Getppid() != *parent {
		return fmt.Errorf("watching the program (pid %d): %v", *parent, err)
	}
	r, err := newRelay(in, out, *parent, connect, serve)
	if err != nil {
		fmt.Fprintf(out, "%v\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return err
	}
	fmt.Fprintln(out, "ok")
	out.Close()
	in.Close()
	for {
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("watching the program: %w", err)
		}
		if fds[0].Revents != 0 {
			r.close()
			return nil
		}
	}
}

// relay holds the listeners of both sides.
type relay struct {
	dial      chan dialReq // served by a goroutine in the program's namespace
	listeners []net.Listener
}

type dialReq struct {
	addr  string
	reply chan dialRes
}

type dialRes struct {
	c   net.Conn
	err error
}

func newRelay(in io.Reader, out io.Writer, parent int, connect, serve []string) (*relay, error) {
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("reading the program's thread: %w", err)
	}
	tid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return nil, fmt.Errorf("the program's thread %q: %w", line, err)
	}
	ns, err := unix.Open(fmt.Sprintf("/proc/%d/task/%d/ns/net", parent, tid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the program's network namespace: %w", err)
	}
	r := &relay{dial: make(chan dialReq)}
	inside := make(chan []net.Listener, 1)
	insideErr := make(chan error, 1)
	// One thread enters the program's namespace for good (a locked
	// goroutine that never unlocks: its thread ends with it, and the
	// runtime starts no thread from it). Every socket it makes is the
	// namespace's: the listeners the program dials, the connections to
	// what the program serves.
	go func() {
		runtime.LockOSThread()
		defer unix.Close(ns)
		if err := unix.Setns(ns, unix.CLONE_NEWNET); err != nil {
			insideErr <- fmt.Errorf("entering the program's network namespace: %w", err)
			return
		}
		var ls []net.Listener
		for _, a := range connect {
			l, err := net.Listen("tcp", a)
			if err != nil {
				for _, l := range ls {
					l.Close()
				}
				insideErr <- fmt.Errorf("listening on %s for the program: %w", a, err)
				return
			}
			ls = append(ls, l)
		}
		inside <- ls
		for req := range r.dial {
			c, err := net.DialTimeout("tcp", req.addr, 5*time.Second)
			req.reply <- dialRes{c, err}
		}
	}()
	var ls []net.Listener
	select {
	case ls = <-inside:
	case err := <-insideErr:
		return nil, err
	}
	for i, l := range ls {
		r.serve(l, connect[i], func(a string) (net.Conn, error) { return net.DialTimeout("tcp", a, 5*time.Second) })
	}
	for _, a := range serve {
		l, err := net.Listen("tcp", a)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("listening on %s for what the program serves there: %w", a, err)
		}
		r.serve(l, a, r.dialInside)
	}
	return r, nil
}

// dialInside dials addr in the program's namespace.
func (r *relay) dialInside(addr string) (net.Conn, error) {
	reply := make(chan dialRes, 1)
	r.dial <- dialReq{addr, reply}
	res := <-reply
	return res.c, res.err
}

// serve accepts on l and joins each connection to a new one to addr.
func (r *relay) serve(l net.Listener, addr string, dial func(string) (net.Conn, error)) {
	r.listeners = append(r.listeners, l)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return // closed
			}
			go func() {
				d, err := dial(addr)
				if err != nil {
					c.Close() // the caller sees the refusal as a reset
					return
				}
				join(c, d)
			}()
		}
	}()
}

// join copies both ways until both sides have finished, passing on each
// side's end of writing.
func join(a, b net.Conn) {
	var wg sync.WaitGroup
	pass := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			dst.Close()
		}
	}
	wg.Add(2)
	go pass(a, b)
	go pass(b, a)
	wg.Wait()
	a.Close()
	b.Close()
}

func (r *relay) close() {
	for _, l := range r.listeners {
		l.Close()
	}
}
