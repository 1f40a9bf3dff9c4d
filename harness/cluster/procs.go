package cluster

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// ProcessesUnder lists the pids of processes whose command line mentions dir:
// the kube-apiserver, etcd and controller processes of a run keep their
// state there, so this finds them even after the process that started them
// was killed.
func ProcessesUnder(dir string) ([]int, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone, or not ours to read
		}
		if bytes.Contains(cmdline, []byte(abs+"/")) || bytes.HasSuffix(bytes.TrimRight(cmdline, "\x00"), []byte(abs)) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// KillProcessesUnder SIGKILLs every process ProcessesUnder finds and reports how many.
func KillProcessesUnder(dir string) (int, error) {
	pids, err := ProcessesUnder(dir)
	if err != nil {
		return 0, err
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return len(pids), nil
}

// Alive reports whether a process with this pid exists.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
