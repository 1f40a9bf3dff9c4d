package ctrlproc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/10xdev/gw10/harness/sandbox"
)

// Work is what a controller's processes did, as the kernel counts it: read
// by the harness from /proc, not from anything the controller serves or
// prints. A controller that keeps working while it has nothing to do (a
// timer that wakes it every 100 ms, pushing and writing nothing) shows here
// and nowhere else.
type Work struct {
	// CPU is the user and system time of every process: its threads,
	// those that exited included, and its children it waited for
	// (/proc/<pid>/stat utime, stime, cutime, cstime: clock ticks, 10 ms).
	CPU time.Duration
	// Wakeups are the times a thread slept (a timer, a read, a lock) and
	// was woken: its voluntary context switches, summed over every thread
	// (/proc/<pid>/task/<tid>/status). A thread that exited takes its count
	// with it.
	Wakeups int64
	// Preempted are the times a running thread was taken off its CPU for
	// another (involuntary context switches): a measure of the machine's
	// load more than of the controller's work, so no verdict rests on it.
	Preempted int64
	// Ran is the time the live threads ran on a CPU, in nanoseconds
	// (/proc/<pid>/task/<tid>/schedstat): finer than CPU, without the
	// threads that exited.
	Ran time.Duration
	// Processes and Threads are how many were read.
	Processes, Threads int
}

// Sub is the work done between an earlier reading and this one. A process
// that ended in between takes its counts with it, so a figure can go down:
// it is then 0, not negative.
func (w Work) Sub(earlier Work) Work {
	return Work{
		CPU:       max(w.CPU-earlier.CPU, 0),
		Ran:       max(w.Ran-earlier.Ran, 0),
		Wakeups:   max(w.Wakeups-earlier.Wakeups, 0),
		Preempted: max(w.Preempted-earlier.Preempted, 0),
		Processes: w.Processes,
		Threads:   w.Threads,
	}
}

// Plus is the work of this span and a later one together: the counts
// added, the processes and threads of the later reading.
func (w Work) Plus(later Work) Work {
	return Work{
		CPU:       w.CPU + later.CPU,
		Ran:       w.Ran + later.Ran,
		Wakeups:   w.Wakeups + later.Wakeups,
		Preempted: w.Preempted + later.Preempted,
		Processes: later.Processes,
		Threads:   later.Threads,
	}
}

// String reads "240 wakeups and 180 ms of CPU".
func (w Work) String() string {
	noun := "wakeups"
	if w.Wakeups == 1 {
		noun = "wakeup"
	}
	return fmt.Sprintf("%d %s and %d ms of CPU", w.Wakeups, noun, w.CPU.Milliseconds())
}

// procRoot is where the kernel's process table is mounted.
const procRoot = "/proc"

// ReadWork sums the work of processes pids. A pid that is gone is skipped
// (a process may end between the listing and the read); an error says that a
// process could not be read at all (another user's without the right to),
// and none of pids is readable.
func ReadWork(pids []int) (Work, error) {
	return readWork(procRoot, pids)
}

func readWork(root string, pids []int) (Work, error) {
	var total Work
	var errs []error
	for _, pid := range pids {
		w, err := processWork(root, pid)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		}
		total.CPU += w.CPU
		total.Wakeups += w.Wakeups
		total.Preempted += w.Preempted
		total.Ran += w.Ran
		total.Processes++
		total.Threads += w.Threads
	}
	if total.Processes == 0 && len(errs) > 0 {
		return Work{}, errors.Join(errs...)
	}
	if total.Processes == 0 {
		return Work{}, fmt.Errorf("reading the controller's work: none of its processes (%v) is running: %w", pids, fs.ErrNotExist)
	}
	return total, nil
}

// processWork reads one process: its times from its stat, its threads'
// context switches from their status.
func processWork(root string, pid int) (Work, error) {
	dir := filepath.Join(root, strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return Work{}, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	fields, err := statFields(stat)
	if err != nil {
		return Work{}, fmt.Errorf("parsing %s/stat: %w", dir, err)
	}
	// Fields 14-17 of the line (utime stime cutime cstime) are 11-14 after
	// the command name.
	var ticks int64
	for _, f := range fields[11:15] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return Work{}, fmt.Errorf("parsing %s/stat: %w", dir, err)
		}
		ticks += n
	}
	w := Work{CPU: time.Duration(ticks) * time.Second / clockTicks}
	tasks, err := os.ReadDir(filepath.Join(dir, "task"))
	if err != nil {
		return Work{}, fmt.Errorf("listing the threads of process %d: %w", pid, err)
	}
	for _, task := range tasks {
		vol, invol, err := switches(filepath.Join(dir, "task", task.Name(), "status"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // the thread ended
		}
		if err != nil {
			return Work{}, err
		}
		w.Wakeups += vol
		w.Preempted += invol
		w.Threads++
		if b, err := os.ReadFile(filepath.Join(dir, "task", task.Name(), "schedstat")); err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					w.Ran += time.Duration(ns)
				}
			}
		}
	}
	return w, nil
}

// statFields are the fields of a /proc stat line after the command name,
// which may hold spaces and parentheses.
func statFields(stat []byte) ([]string, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, errors.New("no command name")
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 15 {
		return nil, fmt.Errorf("%d fields after the command name", len(fields))
	}
	return fields, nil
}

// switches reads voluntary_ctxt_switches and nonvoluntary_ctxt_switches
// from a thread's status.
func switches(path string) (vol, invol int64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, fmt.Errorf("reading %s: %w", path, err)
	}
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "voluntary_ctxt_switches" && k != "nonvoluntary_ctxt_switches") {
			continue
		}
		c, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parsing %s in %s: %w", k, path, err)
		}
		if k == "voluntary_ctxt_switches" {
			vol = c
		} else {
			invol = c
		}
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("%s has no context switch counts", path)
	}
	return vol, invol, nil
}

// Family lists pid and the processes descended from it (parent by parent,
// from /proc/<pid>/stat): what a controller started, however it detached
// itself from its process group. A process reparented away from it (its
// parent exited) is not found; a sandbox counts its user's processes instead.
func Family(pid int) ([]int, error) {
	return family(procRoot, pid)
}

func family(root string, pid int) ([]int, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(root, e.Name(), "stat"))
		if err != nil {
			continue // ended meanwhile
		}
		fields, err := statFields(stat)
		if err != nil {
			continue
		}
		ppid, err := strconv.Atoi(fields[1]) // field 4 of the line
		if err != nil {
			continue
		}
		children[ppid] = append(children[ppid], p)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out, nil
}

// Work reads what the controller's processes have done so far: in a
// sandbox every process of its user (whatever the controller started,
// detached or not), otherwise the process and its descendants.
func (p *Process) Work() (Work, error) {
	var pids []int
	if sb := p.cfg.Sandbox; sb != nil {
		procs, err := sandbox.ProcsOf(sb.UID())
		if err != nil {
			return Work{}, fmt.Errorf("reading the controller's work: %w", err)
		}
		for _, pr := range procs {
			pids = append(pids, pr.PID)
		}
	} else {
		var err error
		if pids, err = Family(p.PID()); err != nil {
			return Work{}, fmt.Errorf("reading the controller's work: %w", err)
		}
	}
	return ReadWork(pids)
}
