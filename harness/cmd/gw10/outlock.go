package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// outLockName is the lock file a grade holds in its reports' directory.
const outLockName = ".gw10-grade.lock"

// lockOut makes dir (the grade's --out) this grade's alone until release:
// two grades writing grade.json, junit.xml and summary.md into one
// directory would leave reports of both, each looking whole. A second grade
// fails at once and says which process holds the directory. The lock is
// the kernel's (flock): a grade that dies releases it.
func lockOut(dir string) (release func(), err error) {
	if err = os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("the reports' directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, outLockName)
	var f *os.File
	for f == nil {
		if f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
			return nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			holder, _ := os.ReadFile(path)
			f.Close()
			who := "another grade"
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(holder))); perr == nil {
				who = fmt.Sprintf("another grade (pid %d)", pid)
			}
			return nil, fmt.Errorf("%s is writing its reports to %s: give each grade a directory of its own (make grade GRADE_OUT=…, gw10 grade --out …)", who, dir)
		}
		// The file is removed on release: the lock counts only if it is
		// still the file at path (not one its last holder just removed).
		var held, now unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) != nil || unix.Stat(path, &now) != nil || held.Ino != now.Ino || held.Dev != now.Dev {
			f.Close()
			f = nil
		}
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		// Nothing of the lock is left among the reports.
		_ = os.Remove(path)
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
