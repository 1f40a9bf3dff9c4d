// Package sandbox runs learner code for a grade where it can change nothing
// of the grade: as a separate unprivileged user (one of a small pool of
// system users, gw10-sandbox0…), in a session of its own, with an
// environment that holds only what it needs, in a scratch directory that
// only that user and the grader can enter, under limits on CPU time,
// address space, processes, open files, file size and output; and every
// process that user still runs is killed when a stage ends and before the
// grader writes its reports (found by uid: a daemon that called setsid is
// found too).
//
// The mechanism exists on a GitHub runner and on a Linux laptop without
// installs: useradd (passwd), and the grader's own binary re-executed as
// "sandbox-exec" (see MaybeHelper) to set the limits and drop to the user
// before it execs the learner's binary. The grader runs it directly when it
// is root, through `sudo -n` when it is not (a runner's user may); when
// neither works, Open says why and the grade is not official.
//
// The grader compiles learner code itself; only compiled binaries run here.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// UserPrefix names the pool's users: gw10-sandbox0, gw10-sandbox1, …
const UserPrefix = "gw10-sandbox"

// ErrUnavailable is wrapped by Open's error when no sandbox can be made
// here (not root, no passwordless sudo, no useradd).
var ErrUnavailable = errors.New("no sandbox can be made here")

// Limits bound one sandboxed process (and, for Processes, the user).
type Limits struct {
	CPU time.Duration // CPU time (RLIMIT_CPU)
	// Memory bounds the data a process may write, bytes (RLIMIT_DATA: its
	// heap and other private writable mappings). Not the address space
	// alone: etcd, which an envtest suite starts, maps a 10 GiB file.
	Memory uint64
	// AddressSpace bounds everything mapped, bytes (RLIMIT_AS): a backstop.
	AddressSpace uint64
	Processes    uint64 // processes and threads of the user (RLIMIT_NPROC)
	Files        uint64 // open files (RLIMIT_NOFILE)
	FileSize     uint64 // the largest file it may write, bytes (RLIMIT_FSIZE)
	Output       int64  // stdout and stderr kept, bytes; the rest is read and dropped
}

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// DefaultLimits are generous for a unit test binary or a controller on
// envtest and small for anything that runs away.
func DefaultLimits() Limits {
	return Limits{CPU: 5 * time.Minute, Memory: 4 * gib, AddressSpace: 32 * gib, Processes: 512, Files: 1024, FileSize: 64 * mib, Output: 8 * mib}
}

// Options say how to make the sandbox.
type Options struct {
	// Helper is the executable that answers HelperArg (default: this one).
	Helper string
	// Users is the pool's size (default 4): one grade holds one user, so
	// that killing by uid never reaches another grade.
	Users int
	// LockDir holds the pool's lock files (default: /run/lock/gw10-sandbox
	// as root, the user's cache dir otherwise). Every sandbox of a machine
	// must share it: the users are the machine's.
	LockDir string
	// Sudo is the command that runs the helper as root when the grader is
	// not root (default: sudo -n --).
	Sudo []string
	// Hide are directories learner code must not read (the upstream
	// checkout with its solutions/, the grader's home with its caches and
	// credentials): every program runs in a mount namespace of its own
	// where each is an empty, read-only directory. One that holds the
	// scratch directory cannot be hidden and is left out (Events says so).
	Hide []string
}

// defaultUsers is the pool's size when Options.Users is not set.
const defaultUsers = 4

// Sandbox is one grade's sandbox: a user of the pool, held until Close, and
// a scratch directory.
type Sandbox struct {
	helper string
	priv   []string // prefix that runs the helper as root; empty when root
	hide   []string // absolute, existing directories hidden from every program
	name   string
	uid    int
	dir    string
	lock   *os.File

	mu     sync.Mutex
	events []string
}

// Open takes a free user of the pool (creating it if need be), kills and
// removes whatever it left from an earlier grade, and makes the scratch
// directory.
func Open(ctx context.Context, opts Options) (*Sandbox, error) {
	if opts.Users <= 0 {
		opts.Users = defaultUsers
	}
	if opts.Sudo == nil {
		opts.Sudo = []string{"sudo", "-n", "--"}
	}
	helper := opts.Helper
	if helper == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("%w: the grader's own binary: %v", ErrUnavailable, err)
		}
		helper = exe
	}
	helper, err := filepath.EvalSymlinks(helper)
	if err != nil {
		return nil, fmt.Errorf("%w: the helper %s: %v", ErrUnavailable, opts.Helper, err)
	}
	s := &Sandbox{helper: helper}
	if os.Geteuid() != 0 {
		if err := exec.CommandContext(ctx, opts.Sudo[0], append(opts.Sudo[1:], "true")...).Run(); err != nil {
			return nil, fmt.Errorf("%w: the grader is not root and %q cannot run as root without a password (%v)",
				ErrUnavailable, strings.Join(opts.Sudo, " "), err)
		}
		s.priv = opts.Sudo
	}
	if err := s.takeUser(ctx, opts); err != nil {
		return nil, err
	}
	if err := s.makeDir(ctx); err != nil {
		s.unlock()
		return nil, err
	}
	s.hide = s.hidden(opts.Hide)
	return s, nil
}

// hidden keeps the directories of hide that exist and do not hold the
// scratch directory, and records why it left any other out.
func (s *Sandbox) hidden(hide []string) []string {
	var out []string
	for _, h := range hide {
		abs, err := filepath.Abs(h)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			continue // nothing there to read
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			continue
		}
		if rel, err := filepath.Rel(abs, s.dir); abs == "/" || err == nil && !strings.HasPrefix(rel, "..") {
			s.record(fmt.Sprintf("%s is not hidden from learner code: it holds the sandbox's directory", abs))
			continue
		}
		out = append(out, abs)
	}
	// A directory under another hidden one is hidden with it (and could not
	// be mounted on once its parent reads empty).
	var top []string
	for _, d := range out {
		nested := false
		for _, o := range out {
			if rel, err := filepath.Rel(o, d); o != d && err == nil && !strings.HasPrefix(rel, "..") {
				nested = true
			}
		}
		if !nested && !slices.Contains(top, d) {
			top = append(top, d)
		}
	}
	return top
}

// Hidden are the directories every program of the sandbox sees empty.
func (s *Sandbox) Hidden() []string { return slices.Clone(s.hide) }

// lockDir is where the pool's lock files live: one place per machine for
// root (the users are the machine's, so every grader and test on it must
// share the locks), the grader's cache otherwise.
func lockDir(opts Options) (string, error) {
	dir := opts.LockDir
	if dir == "" && os.Geteuid() == 0 {
		dir = "/run/lock/gw10-sandbox"
	}
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		dir = filepath.Join(cache, "gw10", "sandbox-locks")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("the sandbox's lock directory: %w", err)
	}
	return dir, nil
}

// tryLock takes the lock of the pool's user i without waiting; nil when
// another grade holds it.
func tryLock(dir string, i int) (*os.File, string, error) {
	name := UserPrefix + strconv.Itoa(i)
	f, err := os.OpenFile(filepath.Join(dir, name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, name, fmt.Errorf("the sandbox's lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, name, nil
	}
	return f, name, nil
}

// takeUser locks a free user of the pool and makes sure it exists and runs
// nothing.
func (s *Sandbox) takeUser(ctx context.Context, opts Options) error {
	dir, err := lockDir(opts)
	if err != nil {
		return err
	}
	for {
		for i := range opts.Users {
			f, name, err := tryLock(dir, i)
			if err != nil {
				return err
			}
			if f == nil {
				continue
			}
			s.lock, s.name = f, name
			if err := s.ensureUser(ctx); err != nil {
				s.unlock()
				return err
			}
			// An earlier grade that died may have left processes or files.
			if _, err := s.KillAll(ctx); err != nil {
				s.unlock()
				return err
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for a free sandbox user: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// LeftBehind lists the live processes of the pool's users that no grade
// holds (what a grade failed to kill); users in use are not looked at.
func LeftBehind(opts Options) ([]Proc, error) {
	if opts.Users <= 0 {
		opts.Users = defaultUsers
	}
	dir, err := lockDir(opts)
	if err != nil {
		return nil, err
	}
	var out []Proc
	for i := range opts.Users {
		f, name, err := tryLock(dir, i)
		if err != nil || f == nil {
			if err != nil {
				return out, err
			}
			continue
		}
		u, err := user.Lookup(name)
		if err != nil {
			f.Close()
			continue // never made
		}
		uid, _ := strconv.Atoi(u.Uid)
		ps, err := ProcsOf(uid)
		f.Close()
		if err != nil {
			return out, err
		}
		for _, p := range ps {
			if p.State != "Z" {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func (s *Sandbox) ensureUser(ctx context.Context) error {
	if _, err := user.Lookup(s.name); err != nil {
		if err := s.helperOp(ctx, "useradd", s.name); err != nil {
			return fmt.Errorf("%w: creating the sandbox user %s: %v", ErrUnavailable, s.name, err)
		}
	}
	u, err := user.Lookup(s.name)
	if err != nil {
		return fmt.Errorf("%w: the sandbox user %s: %v", ErrUnavailable, s.name, err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil || uid <= 0 || uid == os.Getuid() {
		return fmt.Errorf("%w: the sandbox user %s has uid %s: not a user of its own", ErrUnavailable, s.name, u.Uid)
	}
	s.uid = uid
	return nil
}

func (s *Sandbox) makeDir(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "gw10-sandbox-")
	if err != nil {
		return fmt.Errorf("the sandbox's directory: %w", err)
	}
	if err := s.helperOp(ctx, "prepare", "-user", s.name, dir); err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("preparing the sandbox's directory: %w", err)
	}
	s.dir = dir
	return nil
}

// helperOp runs one helper operation as root and waits for it.
func (s *Sandbox) helperOp(ctx context.Context, op string, args ...string) error {
	cmd := s.helperCmd(ctx, op, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", HelperArg, op, err, strings.TrimSpace(out.String()))
	}
	return nil
}

func (s *Sandbox) helperCmd(ctx context.Context, op string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, s.priv...), s.helper, HelperArg, op), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// The helper needs nothing of the grader's environment.
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	return cmd
}

// User is the sandbox's user name.
func (s *Sandbox) User() string { return s.name }

// UID is the sandbox's user ID.
func (s *Sandbox) UID() int { return s.uid }

// Dir is the scratch directory: the grader writes into it (binaries, the
// module's copy), the user reads it; only Home and Tmp are the user's.
func (s *Sandbox) Dir() string { return s.dir }

// Home is the user's scratch HOME.
func (s *Sandbox) Home() string { return filepath.Join(s.dir, "home") }

// Tmp is the user's scratch TMPDIR.
func (s *Sandbox) Tmp() string { return filepath.Join(s.dir, "tmp") }

// Path is a path in the scratch directory.
func (s *Sandbox) Path(elem ...string) string {
	return filepath.Join(append([]string{s.dir}, elem...)...)
}

// Install copies the file src into the scratch directory as name (an
// executable the user can run and not change) and returns its path.
func (s *Sandbox) Install(src, name string) (string, error) { return s.place(src, name, 0o755, false) }

// Share makes the executable src (a large one: the envtest binaries) runnable
// in the scratch directory as name: a hard link when src is on the same
// file system and no one but its owner may write it, else a copy.
func (s *Sandbox) Share(src, name string) (string, error) { return s.place(src, name, 0o755, true) }

// Put copies the file src into the scratch directory as name, readable by
// the user (a kubeconfig, data) and not writable, and returns its path.
func (s *Sandbox) Put(src, name string) (string, error) { return s.place(src, name, 0o644, false) }

func (s *Sandbox) place(src, name string, mode os.FileMode, link bool) (string, error) {
	dst := s.Path(name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	if link {
		if fi, err := os.Stat(src); err == nil && fi.Mode().Perm()&0o022 == 0 && fi.Mode().Perm()&0o005 == 0o005 && os.Link(src, dst) == nil {
			return dst, nil
		}
	}
	if err := copyFile(src, dst, mode); err != nil {
		return "", fmt.Errorf("copying %s into the sandbox: %w", filepath.Base(src), err)
	}
	return dst, nil
}

// CopyTree copies the regular files and directories under src into the
// scratch directory as name, readable by the user and writable by the
// grader only (what learner code there writes fails; nothing it could
// change is read back). Symbolic links and special files are left out.
func (s *Sandbox) CopyTree(src, name string) (string, error) {
	dst := s.Path(name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return copyFile(p, target, 0o644|fi.Mode().Perm()&0o111)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("copying %s into the sandbox: %w", src, err)
	}
	return dst, nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode) // whatever the umask
}

// Env is the whole environment of a sandboxed process: nothing of the
// grader's (no tokens, no GITHUB_*), a scratch HOME and TMPDIR, and extra.
func (s *Sandbox) Env(extra ...string) []string {
	home := s.Home()
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"USER=" + s.name,
		"LOGNAME=" + s.name,
		"TMPDIR=" + s.Tmp(),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GOCACHE=" + filepath.Join(home, ".cache", "go-build"),
		"GOPATH=" + filepath.Join(home, "go"),
		"LANG=C.UTF-8",
	}
	return append(env, extra...)
}

// Spec is one program to run in the sandbox.
type Spec struct {
	Path   string   // an absolute path the user can execute (see Install)
	Args   []string // without the program's name
	Dir    string   // working directory (default: Home)
	Env    []string // added to Env()
	Limits Limits   // zero fields: DefaultLimits'
	// The program's network is a loopback of its own (see netns.go):
	// Connect are the machine's loopback host:port addresses it may dial,
	// at the same address; Serve are those it listens on that the grader
	// dials at the same address on the machine. Nothing else is reachable
	// either way.
	Connect, Serve []string
}

func (sp Spec) limits() Limits {
	d, l := DefaultLimits(), sp.Limits
	orDefault(&l.CPU, d.CPU)
	orDefault(&l.Memory, d.Memory)
	orDefault(&l.AddressSpace, d.AddressSpace)
	orDefault(&l.Processes, d.Processes)
	orDefault(&l.Files, d.Files)
	orDefault(&l.FileSize, d.FileSize)
	orDefault(&l.Output, d.Output)
	return l
}

func orDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// Command is an unstarted command that runs spec in the sandbox: the helper
// sets the limits, starts a session, drops to the user and execs. The
// caller connects its output (see CapWriter) and starts it; Command's
// process is the helper's (or sudo's), so stop it with KillAll.
func (s *Sandbox) Command(spec Spec) *exec.Cmd {
	l := spec.limits()
	dir := spec.Dir
	if dir == "" {
		dir = s.Home()
	}
	args := []string{"-user", s.name, "-scratch", s.dir, "-cwd", dir,
		"-cpu", l.CPU.String(),
		"-data", strconv.FormatUint(l.Memory, 10),
		"-as", strconv.FormatUint(l.AddressSpace, 10),
		"-nproc", strconv.FormatUint(l.Processes, 10),
		"-nofile", strconv.FormatUint(l.Files, 10),
		"-fsize", strconv.FormatUint(l.FileSize, 10),
	}
	for _, e := range s.Env(spec.Env...) {
		args = append(args, "-env", e)
	}
	for _, h := range s.hide {
		args = append(args, "-hide", h)
	}
	for _, a := range spec.Connect {
		args = append(args, "-connect", a)
	}
	for _, a := range spec.Serve {
		args = append(args, "-serve", a)
	}
	args = append(args, "--", spec.Path)
	args = append(args, spec.Args...)
	cmd := s.helperCmd(context.Background(), "run", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// Result is how a sandboxed run ended.
type Result struct {
	Output   []byte // at most Limits.Output bytes
	ExitCode int    // -1 when killed by a signal
	Signal   syscall.Signal
	// CutOff says what the sandbox stopped: the output beyond its limit, the
	// wall time, the CPU time, the processes left behind.
	CutOff []string
	// Left are the processes that outlived the program, killed.
	Left []Proc
}

// Run runs spec, waits at most wall, then kills every process of the user
// that started since (what the program left behind; not the controller
// that runs beside a probe) and says what was cut off. The
// error is the grader's (the helper failed, ctx ended); the program's own
// failure is in Result.
func (s *Sandbox) Run(ctx context.Context, spec Spec, wall time.Duration, label string) (Result, error) {
	l := spec.limits()
	cmd := s.Command(spec)
	out := NewCapWriter(l.Output)
	cmd.Stdout, cmd.Stderr = out, out
	// The helper's and the program's output share the pipe: wait returns
	// when the program has ended, whatever its children still hold open.
	cmd.WaitDelay = time.Second
	// What runs as the user already (the controller, while a probe runs)
	// is not this program's: it is neither killed nor named with it.
	before, err := s.live()
	if err != nil {
		return Result{}, err
	}
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("starting %s in the sandbox: %w", label, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var res Result
	var waitErr error
	select {
	case waitErr = <-done:
	case <-time.After(wall):
		killed, err := s.killSince(context.WithoutCancel(ctx), before)
		if err != nil {
			return Result{}, err
		}
		res.Left = killed
		res.CutOff = append(res.CutOff, fmt.Sprintf("%s: stopped after %s of wall time (killed %s: %s)",
			label, wall, plural(len(killed), "process", "processes"), procList(killed)))
		waitErr = <-done
	case <-ctx.Done():
		_, _ = s.killSince(context.WithoutCancel(ctx), before)
		// The helper's exit is moot once the grade is cancelled.
		return Result{}, errors.Join(ctx.Err(), ignore(<-done))
	}
	left, err := s.killSince(context.WithoutCancel(ctx), before)
	if err != nil {
		return Result{}, err
	}
	res.Left = append(res.Left, left...)
	if len(left) > 0 {
		res.CutOff = append(res.CutOff, KilledNote(label, left))
	}
	res.Output = out.Bytes()
	if out.Dropped() > 0 {
		res.CutOff = append(res.CutOff, fmt.Sprintf("%s: output cut off after %s (%s more dropped)", label, bytesText(uint64(l.Output)), bytesText(uint64(out.Dropped()))))
	}
	res.ExitCode, res.Signal = exitOf(cmd.ProcessState)
	for _, why := range limitsHit(res, l, cmd.ProcessState) {
		res.CutOff = append(res.CutOff, label+": "+why)
	}
	if waitErr != nil && cmd.ProcessState == nil {
		return res, fmt.Errorf("%s in the sandbox: %w", label, waitErr)
	}
	if strings.Contains(string(res.Output), "sandbox-exec: ") && res.ExitCode == 125 {
		return res, fmt.Errorf("%s in the sandbox: %s", label, strings.TrimSpace(string(res.Output)))
	}
	s.record(res.CutOff...)
	return res, nil
}

// limitsHit name the limits a program most likely hit, from how it ended
// and what it printed last.
func limitsHit(res Result, l Limits, ps *os.ProcessState) []string {
	out := string(res.Output)
	var hit []string
	switch {
	case res.Signal == syscall.SIGXCPU || strings.Contains(out, "SIGXCPU"):
		hit = append(hit, fmt.Sprintf("stopped at its CPU time limit (%s)", l.CPU))
	case res.Signal == syscall.SIGKILL && ps != nil && cpuOf(ps) >= l.CPU:
		hit = append(hit, fmt.Sprintf("killed at its CPU time limit (%s)", l.CPU))
	}
	if strings.Contains(out, "out of memory") || strings.Contains(out, "cannot allocate memory") || strings.Contains(out, "memory exhausted") {
		hit = append(hit, fmt.Sprintf("ran out of its memory limit (%s of data)", bytesText(l.Memory)))
	}
	if strings.Contains(out, "Cannot fork") || strings.Contains(out, "resource temporarily unavailable") ||
		strings.Contains(out, "Resource temporarily unavailable") || strings.Contains(out, "pthread_create failed") {
		hit = append(hit, fmt.Sprintf("refused more processes (%d for the user)", l.Processes))
	}
	if strings.Contains(out, "file too large") || res.Signal == syscall.SIGXFSZ {
		hit = append(hit, fmt.Sprintf("refused a file larger than %s", bytesText(l.FileSize)))
	}
	return hit
}

func cpuOf(ps *os.ProcessState) time.Duration { return ps.UserTime() + ps.SystemTime() }

func exitOf(ps *os.ProcessState) (int, syscall.Signal) {
	if ps == nil {
		return -1, 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal()
	}
	return ps.ExitCode(), 0
}

// KillAll SIGKILLs every process of the sandbox's user until none is left,
// and returns those it found. It also waits a little for the zombies to be
// reaped: they count against the user's process limit, which the next
// program needs whole.
func (s *Sandbox) KillAll(ctx context.Context) ([]Proc, error) { return s.killSince(ctx, nil) }

// live are the user's processes that are not zombies.
func (s *Sandbox) live() (map[procID]bool, error) {
	procs, err := ProcsOf(s.uid)
	if err != nil {
		return nil, err
	}
	out := map[procID]bool{}
	for _, p := range procs {
		if p.State != "Z" {
			out[p.id()] = true
		}
	}
	return out, nil
}

// killSince is KillAll sparing the processes of spare (nil: none).
func (s *Sandbox) killSince(ctx context.Context, spare map[procID]bool) ([]Proc, error) {
	var found []Proc
	seen := map[int]bool{}
	deadline := time.Now().Add(30 * time.Second)
	var reaped time.Time // when no live process was left
	for {
		procs, err := ProcsOf(s.uid)
		if err != nil {
			return found, err
		}
		live, zombies := 0, 0
		var pids []string
		for _, p := range procs {
			switch {
			case spare[p.id()]:
				continue
			case p.State == "Z":
				zombies++
				continue
			}
			live++
			pids = append(pids, strconv.Itoa(p.PID))
			if !seen[p.PID] {
				seen[p.PID] = true
				found = append(found, p)
			}
		}
		switch {
		case live+zombies == 0:
			return found, nil
		case live == 0 && reaped.IsZero():
			reaped = time.Now()
		case live == 0 && time.Since(reaped) > zombieGrace:
			return found, nil // their parent, or init, reaps them in its time
		case live > 0 && time.Now().After(deadline):
			return found, fmt.Errorf("%d processes of %s survive SIGKILL", live, s.name)
		case live > 0 && spare == nil:
			if err := s.helperOp(context.WithoutCancel(ctx), "kill", "-user", s.name); err != nil {
				return found, err
			}
		case live > 0:
			if err := s.helperOp(context.WithoutCancel(ctx), "kill", "-user", s.name, "-pids", strings.Join(pids, ",")); err != nil {
				return found, err
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// KilledNote is the note that when (a program's label, "at the end") left
// the processes ps behind, which were killed: how many, and which, each on
// one line.
func KilledNote(when string, ps []Proc) string {
	return fmt.Sprintf("%s: killed %s left behind: %s", when, plural(len(ps), "process", "processes"), procList(ps))
}

// ignore drops an error the caller has no use for, and says so.
func ignore(error) error { return nil }

// zombieGrace is how long KillAll waits for killed processes to be reaped.
const zombieGrace = 10 * time.Second

// record keeps what the sandbox cut off, for the report.
func (s *Sandbox) record(events ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, events...)
}

// Record adds an event for the report (what a caller's own stage cut off).
func (s *Sandbox) Record(events ...string) { s.record(events...) }

// Events are what the sandbox refused or cut off so far, in order.
func (s *Sandbox) Events() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...)
}

// Close kills every process of the user, removes its files (the scratch
// directory and what it left in the world-writable directories) and frees
// the user for the next grade. Call it before writing reports.
func (s *Sandbox) Close(ctx context.Context) error {
	if s.lock == nil {
		return nil
	}
	defer s.unlock()
	left, err := s.KillAll(ctx)
	if len(left) > 0 {
		s.record(KilledNote("at the end", left))
	}
	if err != nil {
		return err
	}
	if s.dir == "" {
		return nil
	}
	if err := s.helperOp(context.WithoutCancel(ctx), "clean", "-user", s.name, s.dir); err != nil {
		return err
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("removing the sandbox's directory: %w", err)
	}
	return nil
}

func (s *Sandbox) unlock() {
	if s.lock != nil {
		_ = s.lock.Close()
		s.lock = nil
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func bytesText(n uint64) string {
	switch {
	case n >= gib && n%gib == 0:
		return fmt.Sprintf("%d GiB", n/gib)
	case n >= mib:
		return fmt.Sprintf("%d MiB", n/mib)
	case n >= kib:
		return fmt.Sprintf("%d KiB", n/kib)
	}
	return fmt.Sprintf("%d bytes", n)
}
