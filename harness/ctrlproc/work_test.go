package ctrlproc

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// fakeProc writes a /proc of processes: pid -> parent, its four times in
// clock ticks, and its threads' voluntary and involuntary switches and run
// times (ns).
type fakeTask struct {
	vol, invol, ranNS int64
}

type fakeProcess struct {
	ppid  int
	ticks [4]int64 // utime stime cutime cstime
	tasks []fakeTask
}

func fakeProc(t *testing.T, procs map[int]fakeProcess) string {
	t.Helper()
	root := t.TempDir()
	for pid, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		// The command name holds a space and a parenthesis, as a learner's
		// binary may: the fields are counted after the last ')'.
		stat := strconv.Itoa(pid) + " (my (ctrl) x) S " + strconv.Itoa(p.ppid) + " 1 1 0 -1 4194560 100 0 0 0 " +
			strconv.FormatInt(p.ticks[0], 10) + " " + strconv.FormatInt(p.ticks[1], 10) + " " +
			strconv.FormatInt(p.ticks[2], 10) + " " + strconv.FormatInt(p.ticks[3], 10) + " 20 0 8 0 100 0 0\n"
		write(t, filepath.Join(dir, "stat"), stat)
		for i, task := range p.tasks {
			tdir := filepath.Join(dir, "task", strconv.Itoa(pid+i))
			write(t, filepath.Join(tdir, "status"), "Name:\tctrl\nState:\tS (sleeping)\n"+
				"voluntary_ctxt_switches:\t"+strconv.FormatInt(task.vol, 10)+"\n"+
				"nonvoluntary_ctxt_switches:\t"+strconv.FormatInt(task.invol, 10)+"\n")
			write(t, filepath.Join(tdir, "schedstat"), strconv.FormatInt(task.ranNS, 10)+" 1000 42\n")
		}
	}
	return root
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWorkSumsEveryThreadOfEveryProcess: CPU is each process's own and its
// reaped children's ticks, wakeups (voluntary switches), preemptions
// (involuntary ones) and run time are every thread's.
func TestWorkSumsEveryThreadOfEveryProcess(t *testing.T) {
	root := fakeProc(t, map[int]fakeProcess{
		100: {ppid: 1, ticks: [4]int64{3, 2, 1, 0}, tasks: []fakeTask{{vol: 10, invol: 2, ranNS: 1e6}, {vol: 5, invol: 0, ranNS: 5e5}}},
		200: {ppid: 100, ticks: [4]int64{0, 1, 0, 0}, tasks: []fakeTask{{vol: 7, invol: 1, ranNS: 2e6}}},
	})
	w, err := readWork(root, []int{100, 200, 999}) // 999 has ended: skipped
	if err != nil {
		t.Fatal(err)
	}
	want := Work{CPU: 70 * time.Millisecond, Wakeups: 22, Preempted: 3, Ran: 3500 * time.Microsecond, Processes: 2, Threads: 3}
	if w != want {
		t.Fatalf("work %+v, want %+v", w, want)
	}
	if s := w.String(); s != "22 wakeups and 70 ms of CPU" {
		t.Errorf("String() = %q", s)
	}
}

// TestWorkOfProcessesThatAreGoneSaysSo: no process left to read is an
// error, not an idle controller.
func TestWorkOfProcessesThatAreGoneSaysSo(t *testing.T) {
	_, err := readWork(fakeProc(t, nil), []int{4242})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err %v, want one that says the processes are gone", err)
	}
}

// TestWorkSubNeverGoesNegative: a process that ended between two readings
// takes its counts with it; the difference is then 0, not negative.
func TestWorkSubNeverGoesNegative(t *testing.T) {
	later := Work{CPU: 10 * time.Millisecond, Wakeups: 5, Ran: time.Millisecond, Processes: 1, Threads: 4}
	earlier := Work{CPU: 20 * time.Millisecond, Wakeups: 3, Ran: 2 * time.Millisecond}
	got := later.Sub(earlier)
	if got.CPU != 0 || got.Ran != 0 || got.Wakeups != 2 || got.Threads != 4 {
		t.Fatalf("Sub = %+v", got)
	}
}

// TestFamilyFollowsParents: a controller's children and theirs are its
// family, whatever their process group; another process is not.
func TestFamilyFollowsParents(t *testing.T) {
	root := fakeProc(t, map[int]fakeProcess{
		100: {ppid: 1},
		200: {ppid: 100},
		300: {ppid: 200},
		400: {ppid: 1},
	})
	got, err := family(root, 100)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int{100, 200, 300}) {
		t.Fatalf("family of 100 = %v, want [100 200 300]", got)
	}
}

// TestWorkOfThisProcessCountsItsWork: the reader reads the real /proc:
// spinning shows as run time and CPU (the ticks follow the run time to
// within a tick per thread), and the spinning thread as a thread.
func TestWorkOfThisProcessCountsItsWork(t *testing.T) {
	pids, err := Family(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	before, err := ReadWork(pids)
	if err != nil {
		t.Fatal(err)
	}
	var d Work
	for deadline := time.Now().Add(10 * time.Second); d.Ran < 200*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatalf("10 s of spinning read as %+v", d)
		}
		for end := time.Now().Add(10 * time.Millisecond); time.Now().Before(end); {
		}
		after, err := ReadWork(pids)
		if err != nil {
			t.Fatal(err)
		}
		d = after.Sub(before)
	}
	if d.CPU < 100*time.Millisecond || d.Threads < 1 {
		t.Fatalf("%s of run time read as %+v", d.Ran, d)
	}
}

// TestPlusAddsTheCountsAndKeepsTheLaterReading: two spans' work together is
// their counts added, with the later reading's processes and threads.
func TestPlusAddsTheCountsAndKeepsTheLaterReading(t *testing.T) {
	a := Work{CPU: 10 * time.Millisecond, Ran: time.Millisecond, Wakeups: 3, Preempted: 1, Processes: 1, Threads: 5}
	b := Work{CPU: 20 * time.Millisecond, Ran: 2 * time.Millisecond, Wakeups: 4, Preempted: 2, Processes: 2, Threads: 7}
	want := Work{CPU: 30 * time.Millisecond, Ran: 3 * time.Millisecond, Wakeups: 7, Preempted: 3, Processes: 2, Threads: 7}
	if got := a.Plus(b); got != want {
		t.Fatalf("%+v.Plus(%+v) = %+v, want %+v", a, b, got, want)
	}
}
