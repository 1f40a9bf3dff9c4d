package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/10xdev/gw10/harness/testenv"
)

// TestMain makes this test binary the sandbox's helper too, and a program
// to run in it (SANDBOX_TEST_PROG).
func TestMain(m *testing.M) {
	MaybeHelper()
	if prog := os.Getenv("SANDBOX_TEST_PROG"); prog != "" {
		os.Exit(testProg(prog))
	}
	os.Exit(m.Run())
}

func testProg(prog string) int {
	switch prog {
	case "alloc": // without bound
		var keep [][]byte
		for {
			b := make([]byte, 64<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
			_ = keep[len(keep)-1] // kept, so the collector cannot free it
		}
	case "net":
		return netProg()
	case "fds": // the descriptors it was given (the listing's own excepted)
		d, err := os.Open("/proc/self/fd")
		if err != nil {
			fmt.Println(err)
			return 1
		}
		names, _ := d.Readdirnames(-1)
		for _, n := range names {
			if n != strconv.Itoa(int(d.Fd())) {
				target, _ := os.Readlink("/proc/self/fd/" + n)
				fmt.Printf("fd %s -> %s\n", n, target)
			}
		}
		return 0
	case "keyadd":
		if _, err := unix.AddKey("user", "gw10-test", []byte("left by an earlier grade"), unix.KEY_SPEC_USER_KEYRING); err != nil {
			fmt.Println("add_key:", err)
			return 1
		}
		return 0
	case "keyfind":
		if _, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", "gw10-test", 0); err == nil {
			fmt.Println("FOUND a key left by an earlier program")
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "no such program", prog)
	return 2
}

// open opens a sandbox or skips loudly: only where no sandbox can be made
// (not root, no passwordless sudo). In CI and as root it must run.
func open(t *testing.T, opts ...Options) *Sandbox {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	testenv.Needs(t, testenv.Sandbox)
	s, err := Open(context.Background(), o)
	if errors.Is(err, ErrUnavailable) {
		testenv.Missing(t, testenv.Sandbox, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

// installSelf installs this test binary in s: a program of testProg's.
func installSelf(t *testing.T, s *Sandbox) string {
	t.Helper()
	testBin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prog, err := s.Install(testBin, "bin/prog")
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// live are the user's processes that are not zombies (which wait for
// their parent, or init, to reap them).
func live(t *testing.T, s *Sandbox) []Proc {
	t.Helper()
	ps, err := ProcsOf(s.UID())
	if err != nil {
		t.Fatal(err)
	}
	var out []Proc
	for _, p := range ps {
		if p.State != "Z" {
			out = append(out, p)
		}
	}
	return out
}

func sh(script string) Spec {
	return Spec{Path: "/bin/sh", Args: []string{"-c", script}}
}

// waitExeced is a shell fragment that waits (at most 20 s) until a process
// runs each of the command lines: a child forked with & shows its parent
// shell's command line until it has exec'd, and on a busy machine the
// script can end before that.
func waitExeced(cmdlines ...string) string {
	var b strings.Builder
	b.WriteString("i=0\nwhile [ $i -lt 200 ]; do\n  all='|'\n" +
		"  for f in /proc/[0-9]*/cmdline; do all=\"$all$(tr '\\000' ' ' <\"$f\" 2>/dev/null)|\"; done\n  ok=1\n")
	for _, c := range cmdlines {
		fmt.Fprintf(&b, "  case \"$all\" in *'|%s |'*) ;; *) ok=0 ;; esac\n", c)
	}
	b.WriteString("  [ $ok = 1 ] && break\n  i=$((i+1)); sleep 0.1\ndone")
	return b.String()
}

func run(t *testing.T, s *Sandbox, spec Spec, wall time.Duration) Result {
	t.Helper()
	res, err := s.Run(context.Background(), spec, wall, "test")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestTheProgramRunsAsTheUserWithNothingOfTheGrader: its own user and no
// other group, its own session, only the sandbox's environment (the
// grader's token is not in it, nor readable through /proc), the limits set
// hard, and no signal reaches the grader.
func TestTheProgramRunsAsTheUserWithNothingOfTheGrader(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghs_grader_secret")
	s := open(t)
	res := run(t, s, sh(`echo "uid $(id -u) groups $(id -G)"
read -r pid _ _ _ _ sid _ < /proc/$$/stat; echo "pid $pid sid $sid"
env | sort
grep -E 'Max (cpu time|address space|data size|processes|open files|file size)' /proc/self/limits
cat /proc/`+strconv.Itoa(os.Getpid())+`/environ >/dev/null 2>&1 && echo "READ THE GRADER'S ENVIRONMENT"
kill -0 `+strconv.Itoa(os.Getpid())+` 2>/dev/null && echo "SIGNALLED THE GRADER"
exit 0`), 30*time.Second)
	out := string(res.Output)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d:\n%s", res.ExitCode, out)
	}
	want := fmt.Sprintf("uid %d groups ", s.UID())
	if !strings.Contains(out, want) || strings.Contains(out, " 0\n") && strings.Contains(out, "groups 0") {
		t.Errorf("want %q:\n%s", want, out)
	}
	for _, bad := range []string{"ghs_grader_secret", "GITHUB_TOKEN", "READ THE GRADER", "SIGNALLED THE GRADER"} {
		if strings.Contains(out, bad) {
			t.Errorf("the program saw %q:\n%s", bad, out)
		}
	}
	var pid, sid int
	for _, l := range strings.Split(out, "\n") {
		if _, err := fmt.Sscanf(l, "pid %d sid %d", &pid, &sid); err == nil {
			break
		}
	}
	if pid == 0 || pid != sid {
		t.Errorf("not a session of its own (pid %d, session %d):\n%s", pid, sid, out)
	}
	for _, l := range []string{"HOME=" + s.Home(), "TMPDIR=" + s.Tmp(), "USER=" + s.User()} {
		if !strings.Contains(out, l+"\n") {
			t.Errorf("environment lacks %s:\n%s", l, out)
		}
	}
	d := DefaultLimits()
	for _, l := range []string{
		fmt.Sprintf("Max address space         %d                 %d", d.AddressSpace, d.AddressSpace),
		fmt.Sprintf("Max data size             %d                 %d", d.Memory, d.Memory),
		fmt.Sprintf("Max processes             %d                  %d", d.Processes, d.Processes),
		fmt.Sprintf("Max open files            %d                 %d", d.Files, d.Files),
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(l), " ")) {
			t.Errorf("limits lack %q:\n%s", l, out)
		}
	}
}

// TestTheProgramChangesNothingOfTheGraders: files and directories the grader
// owns, the binaries installed for it and the helper itself refuse writes.
func TestTheProgramChangesNothingOfTheGraders(t *testing.T) {
	s := open(t)
	shared := filepath.Join(os.TempDir(), "gw10-sandbox-test-"+strconv.Itoa(os.Getpid()))
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(shared) })
	report := filepath.Join(shared, "grade.json")
	if err := os.WriteFile(report, []byte(`{"points": 0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, err := s.Install("/bin/true", "bin/manager")
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, s, sh(fmt.Sprintf(`for f in %[1]s %[2]s %[3]s %[4]s/manager; do
  echo '{"points": 110}' > "$f" 2>/dev/null && echo "WROTE $f"
done
touch %[5]s/new 2>/dev/null && echo "CREATED IN THE GRADER'S DIRECTORY"
touch %[6]s/new 2>/dev/null && echo "CREATED IN THE SANDBOX'S DIRECTORY"
touch "$HOME/mine" && echo "home is writable"
exit 0`, report, bin, s.helper, filepath.Dir(bin), shared, s.Dir())), 30*time.Second)
	out := string(res.Output)
	if strings.Contains(out, "WROTE") || strings.Contains(out, "CREATED") || !strings.Contains(out, "home is writable") {
		t.Fatalf("writes:\n%s", out)
	}
	if b, _ := os.ReadFile(report); string(b) != `{"points": 0}` {
		t.Errorf("the report changed: %s", b)
	}
}

// TestWhatItLeavesIsKilledAndRemoved: a daemon (setsid), an orphan, and
// files in the world-writable directories are gone once the run ends and
// the sandbox closes; the result names the processes.
func TestWhatItLeavesIsKilledAndRemoved(t *testing.T) {
	s := open(t)
	res := run(t, s, sh(`setsid sleep 1000 </dev/null >/dev/null 2>&1 &
(sleep 1001 </dev/null >/dev/null 2>&1 &)
touch /tmp/gw10-sandbox-leftover /dev/shm/gw10-sandbox-leftover
`+waitExeced("sleep 1000", "sleep 1001")+`
exit 0`), 30*time.Second)
	// The names are checked, not the order.
	cut := strings.Join(res.CutOff, "\n")
	if len(res.Left) != 2 || !strings.Contains(cut, "killed 2 processes left behind: ") ||
		!strings.Contains(cut, "sleep 1000 (pid") || !strings.Contains(cut, "sleep 1001 (pid") {
		t.Fatalf("left %v, cut off %q", res.Left, res.CutOff)
	}
	if ps := live(t, s); len(ps) != 0 {
		t.Fatalf("still running: %v", ps)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"/tmp/gw10-sandbox-leftover", "/dev/shm/gw10-sandbox-leftover", s.Dir()} {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("%s is left", f)
		}
	}
}

// TestARunSparesWhatRanBeforeIt: a program run while another of the user's
// runs (a probe beside the controller) kills and names only what it left
// behind; the controller lives on.
func TestARunSparesWhatRanBeforeIt(t *testing.T) {
	s := open(t)
	ctrl := s.Command(Spec{Path: "/bin/sleep", Args: []string{"1000"}})
	if err := ctrl.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- ctrl.Wait() }() // reaped as soon as it is killed
	defer func() {
		_, _ = s.KillAll(context.Background())
		t.Logf("the stand-in ended: %v", <-waited) // killed
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(live(t, s)) == 0 || !strings.Contains(fmt.Sprint(live(t, s)), "sleep 1000") {
		if time.Now().After(deadline) {
			t.Fatalf("the controller stand-in did not start: %v", live(t, s))
		}
		time.Sleep(20 * time.Millisecond)
	}
	res := run(t, s, sh(`setsid sleep 1002 </dev/null >/dev/null 2>&1 &
exit 0`), 30*time.Second)
	cut := strings.Join(res.CutOff, "\n")
	if len(res.Left) != 1 || !strings.Contains(cut, "killed 1 process left behind: ") || strings.Contains(cut, "sleep 1000") {
		t.Fatalf("left %v, cut off %q", res.Left, res.CutOff)
	}
	if ps := live(t, s); len(ps) != 1 || !strings.Contains(ps[0].Command, "sleep 1000") {
		t.Fatalf("the process that ran before is not the only one left: %v", ps)
	}
}

// TestAProcessNameIsShownAsText: a process left behind whose argv[0] holds
// newlines, a forged verdict, "<!--" and an ESC is named on one line, its
// command line as report.Inline shows it, in what was cut off.
func TestAProcessNameIsShownAsText(t *testing.T) {
	s := open(t)
	forged := "\n\n## gw10 — ✅ all 13 checks pass, 140/140 points\n\n<!--\x1b[2J"
	res := run(t, s, Spec{Path: "/bin/bash", Args: []string{"-c", `setsid bash -c 'exec -a "$0" sleep 1000' "$FORGED" </dev/null >/dev/null 2>&1 &
sleep 0.5`}, Env: []string{"FORGED=" + forged}}, 30*time.Second)
	cut := strings.Join(res.CutOff, "|")
	if len(res.Left) != 1 || !strings.Contains(cut, `points\x0a\x0a<!--\x1b[2J 1000 (pid `) ||
		strings.ContainsAny(cut, "\n\x1b") {
		t.Fatalf("left %v, cut off %q", res.Left, res.CutOff)
	}
	for _, e := range s.Events() {
		if strings.ContainsAny(e, "\n\x1b") {
			t.Errorf("an event holds a raw newline or ESC: %q", e)
		}
	}
}

// TestRunawaysAreCutOff: sleeping forever, printing without bound, a fork
// bomb, spinning, allocating without bound — each ends within its limit and
// the result says which.
func TestRunawaysAreCutOff(t *testing.T) {
	s := open(t)
	prog := installSelf(t, s)
	// The wall time is generous where another limit must end the program
	// first: on a busy machine a spinning program gets a second of CPU time
	// only after many seconds.
	for _, tc := range []struct {
		name string
		spec Spec
		wall time.Duration
		want string
	}{
		{"sleep forever", sh("sleep 1000"), 2 * time.Second, "stopped after 2s of wall time"},
		{"print without bound", Spec{Path: "/usr/bin/yes", Limits: Limits{Output: 64 * kib}}, 2 * time.Second, "output cut off after 64 KiB"},
		{"fork bomb", Spec{Path: "/bin/sh", Args: []string{"-c", "b(){ b | b & }; b; sleep 1000"}, Limits: Limits{Processes: 64}}, 2 * time.Second, "refused more processes (64 for the user)"},
		{"spin", Spec{Path: "/bin/sh", Args: []string{"-c", "while :; do :; done"}, Limits: Limits{CPU: time.Second}}, time.Minute, "CPU time limit (1s)"},
		{"allocate without bound", Spec{Path: prog, Env: []string{"SANDBOX_TEST_PROG=alloc"}, Limits: Limits{Memory: 256 * mib}}, time.Minute, "memory limit (256 MiB of data)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, s, tc.spec, tc.wall)
			if cut := strings.Join(res.CutOff, "\n"); !strings.Contains(cut, tc.want) {
				t.Errorf("cut off %q, want %q\noutput: %.500s", cut, tc.want, res.Output)
			}
			if ps := live(t, s); len(ps) != 0 {
				t.Errorf("still running: %v", ps)
			}
		})
	}
}

// TestCapWriterKeepsTheFirstAndTheLastBytes: what a runaway printed first
// and its last words (a fatal error) are kept; what is between is counted.
func TestCapWriterKeepsTheFirstAndTheLastBytes(t *testing.T) {
	w := NewCapWriter(16)
	for _, chunk := range []string{"first", "-0123456789", "abcdefghij", "-last"} {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	// 12 bytes of head, a 4-byte ring holding the last 4.
	if got, want := string(w.Bytes()), "first-012345\n[... 15 bytes dropped by the sandbox ...]\nlast"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	small := NewCapWriter(16)
	if _, err := small.Write([]byte("short")); err != nil {
		t.Fatal(err)
	}
	if got := string(small.Bytes()); got != "short" || small.Dropped() != 0 {
		t.Errorf("got %q, dropped %d", got, small.Dropped())
	}
}

// TestHiddenDirectoriesReadEmpty: world-readable files outside the system's
// directories (an upstream checkout with its solutions/, this workbook)
// read empty to the program and to what it starts, and cannot be written;
// the grader's command line is not in its /proc; the grader still sees
// everything whole; Hide's bookkeeping keeps the outermost directories and
// refuses one that holds the scratch directory, and says so.
func TestHiddenDirectoriesReadEmpty(t *testing.T) {
	// Not under a world-writable directory: each program sees those empty.
	secret, err := os.MkdirTemp("/run", "gw10-upstream-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(secret) })
	if err := os.Chmod(secret, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(secret, "solutions"), 0o755); err != nil {
		t.Fatal(err)
	}
	answer := filepath.Join(secret, "solutions", "answer.go")
	if err := os.WriteFile(answer, []byte("package answer // THE SOLUTION\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// World-readable all the way down, so only the sandbox keeps it out.
	for _, p := range []string{secret, filepath.Dir(answer), answer} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o004 == 0 {
			t.Fatalf("%s is not world-readable, so the test proves nothing: %v", p, err)
		}
	}
	wd, err := os.Getwd() // the workbook's checkout
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, Options{Hide: []string{secret, filepath.Join(secret, "solutions"), os.TempDir()}})
	if got := s.Hidden(); len(got) != 1 || got[0] != secret {
		t.Errorf("hidden %v, want only %s", got, secret)
	}
	if ev := strings.Join(s.Events(), "\n"); !strings.Contains(ev, "is not hidden from learner code: it holds the sandbox's directory") {
		t.Errorf("events do not say the temporary directory was left visible: %q", ev)
	}
	res := run(t, s, sh(fmt.Sprintf(`cat %[1]s 2>/dev/null
sh -c 'cat %[1]s' 2>/dev/null
ls -A %[2]s 2>/dev/null | sed 's/^/listed: /'
ls -A %[3]s 2>/dev/null | sed 's/^/listed: /'
touch %[2]s/planted 2>/dev/null && echo "WROTE IN THE HIDDEN DIRECTORY"
tr '\0' ' ' < /proc/%[4]d/cmdline 2>/dev/null && echo " READ THE GRADER'S COMMAND LINE"
echo done`, answer, secret, wd, os.Getpid())), 30*time.Second)
	out := string(res.Output)
	if res.ExitCode != 0 || !strings.Contains(out, "done") {
		t.Fatalf("exit %d:\n%s", res.ExitCode, out)
	}
	for _, bad := range []string{"THE SOLUTION", "listed:", "WROTE", "READ THE GRADER"} {
		if strings.Contains(out, bad) {
			t.Errorf("the program saw %q in the hidden directory:\n%s", bad, out)
		}
	}
	if b, err := os.ReadFile(answer); err != nil || !strings.Contains(string(b), "THE SOLUTION") {
		t.Errorf("the grader no longer reads %s: %v", answer, err)
	}
}

// TestNothingOutlivesTheProgram: what a program leaves in the world-writable
// directories (/run/lock, /tmp, /dev/shm) or as System V IPC is gone when it
// ends: the next program of the same user — the next grade's — finds none of
// it (a controller left a binary in /run/lock that the next submission ran),
// and neither does the machine.
func TestNothingOutlivesTheProgram(t *testing.T) {
	s := open(t)
	name := "gw10-persist-test-" + strconv.Itoa(os.Getpid())
	var ipc string
	if _, err := exec.LookPath("ipcmk"); err == nil {
		ipc = "ipcmk -M 4096 >/dev/null && echo made shm\n"
	}
	res := run(t, s, sh(fmt.Sprintf(`for d in /run/lock /tmp /var/tmp /dev/shm; do
  [ -d $d ] || continue
  echo leftover > $d/%[1]s && echo wrote $d
done
%[2]s`, name, ipc)), 30*time.Second)
	if out := string(res.Output); !strings.Contains(out, "wrote /run/lock") && !strings.Contains(out, "wrote /tmp") {
		t.Fatalf("the program could write nothing, so the test proves nothing:\n%s", out)
	}
	for _, d := range []string{"/run/lock", "/tmp", "/var/tmp", "/dev/shm"} {
		if _, err := os.Lstat(filepath.Join(d, name)); err == nil {
			t.Errorf("%s/%s outlives the program", d, name)
			_ = os.Remove(filepath.Join(d, name))
		}
	}
	next := run(t, s, sh(fmt.Sprintf(`cat /run/lock/%[1]s /tmp/%[1]s /dev/shm/%[1]s 2>/dev/null
ipcs -m 2>/dev/null | awk 'NR>3 && $3=="%[2]s"' | sed 's/^/shm: /'
echo done`, name, s.User())), 30*time.Second)
	if out := string(next.Output); strings.Contains(out, "leftover") || strings.Contains(out, "shm: ") || !strings.Contains(out, "done") {
		t.Errorf("the next program finds what the first left:\n%s", out)
	}
}

// TestNothingButStdioAndNoKeyReachTheProgram: a descriptor the grader
// inherited (a shell's 7</work/main) is closed before the program runs,
// and a key one program leaves in the user's keyrings is gone for the next.
func TestNothingButStdioAndNoKeyReachTheProgram(t *testing.T) {
	s := open(t)
	prog := installSelf(t, s)
	// An inherited descriptor: not close-on-exec, as a shell's would be.
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	res := run(t, s, Spec{Path: prog, Env: []string{"SANDBOX_TEST_PROG=fds"}}, time.Minute)
	if !strings.Contains(string(res.Output), "fd 0 -> ") {
		t.Fatalf("the program listed no descriptors: %s", res.Output)
	}
	for _, l := range strings.Split(string(res.Output), "\n") {
		if strings.HasSuffix(l, " -> /") {
			t.Errorf("the program holds the grader's descriptor %d (open on /): %s\n%s", fd, l, res.Output)
		}
	}
	if res := run(t, s, Spec{Path: prog, Env: []string{"SANDBOX_TEST_PROG=keyadd"}}, time.Minute); res.ExitCode != 0 {
		t.Fatalf("adding a key: %s", res.Output)
	}
	if res := run(t, s, Spec{Path: prog, Env: []string{"SANDBOX_TEST_PROG=keyfind"}}, time.Minute); res.ExitCode != 0 {
		t.Errorf("the next program: %s", res.Output)
	}
}
