package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/10xdev/gw10/harness/report"
)

// Proc is a process of the sandbox's user, as /proc shows it to anyone.
type Proc struct {
	PID     int
	State   string // R, S, Z, …
	Command string // its command line, or its name
	// Start is when it started, in clock ticks since boot: with the PID,
	// it names one process (a PID is reused, the pair is not).
	Start uint64
}

// procID names one process for as long as the machine runs.
type procID struct {
	pid   int
	start uint64
}

func (p Proc) id() procID { return procID{p.PID, p.Start} }

// String names the process on one line: its command line is the
// program's to choose (argv[0] may hold a newline and a forged verdict), so
// it is shown as report.Inline shows any value a submission chose.
func (p Proc) String() string { return fmt.Sprintf("%s (pid %d)", report.Inline(p.Command), p.PID) }

// ProcsOf lists the processes whose real user ID is uid, from /proc (a
// process that called setsid or daemonised itself is listed too).
func ProcsOf(uid int) ([]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, ruid, ok := readProc(pid)
		if ok && ruid == uid {
			out = append(out, p)
		}
	}
	return out, nil
}

// readProc reads a process's real uid, state and command line; ok is false
// when it is gone.
func readProc(pid int) (Proc, int, bool) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	f, err := os.Open(filepath.Join(dir, "status"))
	if err != nil {
		return Proc{}, 0, false
	}
	defer f.Close()
	p := Proc{PID: pid}
	ruid := -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(v)
		switch {
		case k == "Name" && len(fields) > 0:
			p.Command = fields[0]
		case k == "State" && len(fields) > 0:
			p.State = fields[0]
		case k == "Uid" && len(fields) > 0:
			ruid, _ = strconv.Atoi(fields[0])
		}
	}
	if ruid < 0 {
		return Proc{}, 0, false
	}
	if b, err := os.ReadFile(filepath.Join(dir, "stat")); err == nil {
		// "pid (comm) state ppid …": the 22nd field is the start time; comm
		// may hold spaces and parentheses, so fields count from the last ')'.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 {
			if f := strings.Fields(string(b[i+1:])); len(f) > 19 {
				p.Start, _ = strconv.ParseUint(f[19], 10, 64)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil && len(b) > 0 {
		cmd := strings.TrimSpace(string(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '})))
		if len(cmd) > procCommandMax {
			cut := procCommandMax - 3
			for cut > 0 && !utf8.RuneStart(cmd[cut]) {
				cut-- // not inside a character
			}
			cmd = cmd[:cut] + "..."
		}
		if cmd != "" {
			p.Command = cmd
		}
	}
	return p, ruid, true
}

// procCommandMax is the most bytes of a command line a report shows.
const procCommandMax = 80

// procList names at most a few processes.
func procList(ps []Proc) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.String()
	}
	return report.InlineList(names, 3)
}

// CapWriter keeps the first bytes written to it and the last (at most max
// in all) and counts the rest, which it reads and drops: a program that
// prints without bound neither blocks on a full pipe nor fills the
// grader's memory, and its last words (a fatal error) are still seen.
type CapWriter struct {
	mu      sync.Mutex
	head    bytes.Buffer
	tail    []byte // a ring once full: the oldest byte at next
	next    int
	headMax int64
	dropped int64
}

// NewCapWriter keeps at most max bytes: the first, and the last 64 KiB
// (or a quarter of max when less).
func NewCapWriter(max int64) *CapWriter {
	tail := min(64*kib, max/4)
	return &CapWriter{headMax: max - tail, tail: make([]byte, 0, tail)}
}

func (w *CapWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	if room := w.headMax - int64(w.head.Len()); room > 0 {
		k := min(int64(len(p)), room)
		w.head.Write(p[:k])
		p = p[k:]
	}
	c := cap(w.tail)
	if c == 0 {
		w.dropped += int64(len(p))
		return n, nil
	}
	if k := min(len(p), c-len(w.tail)); k > 0 {
		w.tail = append(w.tail, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	// The ring is full: each byte written evicts the oldest one.
	w.dropped += int64(len(p))
	if len(p) >= c {
		copy(w.tail, p[len(p)-c:])
		w.next = 0
		return n, nil
	}
	k := copy(w.tail[w.next:], p)
	copy(w.tail, p[k:])
	w.next = (w.next + len(p)) % c
	return n, nil
}

// Bytes is what was kept: the first bytes, a line saying how many were
// dropped when some were, and the last.
func (w *CapWriter) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := bytes.Clone(w.head.Bytes())
	if w.dropped > 0 {
		out = append(out, fmt.Sprintf("\n[... %d bytes dropped by the sandbox ...]\n", w.dropped)...)
		out = append(out, w.tail[w.next:]...)
		return append(out, w.tail[:w.next]...)
	}
	return append(out, w.tail...)
}

// Dropped is how many bytes were dropped.
func (w *CapWriter) Dropped() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dropped
}
