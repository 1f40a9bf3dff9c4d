package watch_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/cluster"
	"github.com/10xdev/gw10/harness/steps"
	"github.com/10xdev/gw10/harness/steptest"
	"github.com/10xdev/gw10/harness/testenv"
)

// root is the workbook root, seen from harness/watch.
var root, _ = filepath.Abs(filepath.Join("..", ".."))

// The file the tests edit, and the edits.
const (
	conditionsFile = "internal/controller/conditions.go"
	typesFile      = "api/v1/edgeroute_types.go"
	portDoc        = "// Port is the target port on the Service."
	// programmedTrue is the ACKed case of the status contract; the defect
	// never sets Programmed=True.
	programmedTrue  = "Status: metav1.ConditionTrue, Reason: netv1.ReasonSynced"
	programmedFalse = "Status: metav1.ConditionFalse, Reason: netv1.ReasonSynced"
)

// session is gw10 watch running on a copy of the solution, as a learner
// runs it, with its output collected.
type session struct {
	t      testing.TB
	cmd    *exec.Cmd
	step   string // the copied module
	runTmp string // TMPDIR of the watch: its run directory is under it
	mu     sync.Mutex
	out    bytes.Buffer
	exited chan error
}

// startWatch builds gw10 and starts gw10 watch on a copy of the step's
// solution, with only the checks given.
func startWatch(t testing.TB, run string) *session {
	t.Helper()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "gw10")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/10xdev/gw10/harness/cmd/gw10").CombinedOutput(); err != nil {
		t.Fatalf("building gw10: %v\n%s", err, out)
	}
	s := &session{t: t, runTmp: filepath.Join(tmp, "tmp"), exited: make(chan error, 1)}
	if err := os.MkdirAll(s.runTmp, 0o755); err != nil {
		t.Fatal(err)
	}
	st := steps.Default()
	s.step = steptest.Copy(t, filepath.Join(root, st.SolutionDir))
	s.cmd = exec.Command(bin, "watch", "--root", root, "--step", s.step, "--step-name", st.Name, "--run", run)
	s.cmd.Env = append(os.Environ(), append(steptest.Workspace(t, root, s.step), "TMPDIR="+s.runTmp)...)
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = s.cmd.Stdout
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.mu.Lock()
			s.out.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
		s.exited <- s.cmd.Wait()
	}()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-s.exited:
				t.Logf("gw10 watch, stopped at the end of the test: %v", err)
			case <-time.After(2 * time.Minute):
				_ = s.cmd.Process.Kill()
			}
		}
		_, _ = cluster.KillProcessesUnder(s.runTmp)
	})
	return s
}

func (s *session) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// footer is the last line of a run: its number, its verdict, and the time
// from the save (or start) to the verdict.
var footer = regexp.MustCompile(`(?m)^\[run (\d+) · (.*) · verdict ([0-9.]+)s after the (save|start)\]`)

// waitRun waits (generously: a loaded two-core machine) for run n to end
// and returns its section of the output, its headline and its latency.
func (s *session) waitRun(n int, limit time.Duration) (section, headline string, latency float64) {
	s.t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		out := s.output()
		for _, m := range footer.FindAllStringSubmatchIndex(out, -1) {
			if out[m[2]:m[3]] != strconv.Itoa(n) {
				continue
			}
			start := strings.LastIndex(out[:m[0]], fmt.Sprintf("── run %d ·", n))
			if start < 0 {
				s.t.Fatalf("run %d ended but never began:\n%s", n, out)
			}
			latency, _ = strconv.ParseFloat(out[m[6]:m[7]], 64)
			return out[start:m[1]], out[m[4]:m[5]], latency
		}
		select {
		case err := <-s.exited:
			s.t.Fatalf("gw10 watch exited (%v) before run %d ended:\n%s", err, n, out)
		case <-time.After(200 * time.Millisecond):
		}
	}
	s.t.Fatalf("run %d did not end within %s:\n%s", n, limit, s.output())
	return "", "", 0
}

// waitFor waits until the output after offset contains text.
func (s *session) waitFor(text string, offset int, limit time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if out := s.output(); len(out) > offset && strings.Contains(out[offset:], text) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("no %q within %s:\n%s", text, limit, s.output())
}

// edit rewrites a file of the copied step, as an editor saves it.
func (s *session) edit(rel string, change func(string) string) {
	s.t.Helper()
	path := filepath.Join(s.step, rel)
	data, err := os.ReadFile(path)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(change(string(data))), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// processes are the pids of what runs from the watch's directories:
// etcd, kube-apiserver, the controller.
func (s *session) processes() map[int]string {
	pids, err := cluster.ProcessesUnder(s.runTmp)
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[int]string{}
	for _, p := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		out[p] = string(bytes.ReplaceAll(cmdline, []byte{0}, []byte(" ")))
	}
	return out
}

// alive: the pid exists and is not a zombie waiting to be reaped.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

const (
	firstRun = 15 * time.Minute // a cold build of the harness's deps and the control plane
	laterRun = 5 * time.Minute
)

// TestWatchRerunsOnEverySave is the learner's loop end to end: the first
// verdict, a compile error, a behavioural defect, its fix, and Ctrl-C.
func TestWatchRerunsOnEverySave(t *testing.T) {
	testenv.Needs(t, testenv.Cluster)
	s := startWatch(t, "crd-schema,missing-service,self-heal")

	section, headline, _ := s.waitRun(1, firstRun)
	if headline != "the 3 selected checks pass" {
		t.Fatalf("run 1 on the solution: %q, want every check to pass:\n%s", headline, section)
	}

	// A compile error: shown with its file:line, and no cluster work.
	var brokenLine int
	s.edit(conditionsFile, func(src string) string {
		brokenLine = strings.Count(src, "\n") + 2
		return src + "\nvar _ = notDeclaredAnywhere\n"
	})
	section, _, latency := s.waitRun(2, laterRun)
	t.Logf("save to the build error: %.1fs", latency)
	if want := fmt.Sprintf("%s:%d", conditionsFile, brokenLine); !strings.Contains(section, want) ||
		!strings.Contains(section, "notDeclaredAnywhere") {
		t.Errorf("run 2 does not show the compile error at %s:\n%s", want, section)
	}
	for _, cluster := range []string{"install CRD", "start controller", "PASS ", "  FAIL crd-schema"} {
		if strings.Contains(section, cluster) {
			t.Errorf("run 2 failed to compile but went on to %q:\n%s", cluster, section)
		}
	}

	// The fix, with a defect in behaviour: Programmed never True.
	s.edit(conditionsFile, func(src string) string {
		src = strings.TrimSuffix(src, "\nvar _ = notDeclaredAnywhere\n")
		return strings.Replace(src, programmedTrue, programmedFalse, 1)
	})
	section, headline, _ = s.waitRun(3, laterRun)
	if !strings.Contains(section, "FAIL self-heal") || !strings.HasPrefix(headline, "2/3 checks pass") {
		t.Errorf("run 3 with Programmed never True: %q, want self-heal to fail:\n%s", headline, section)
	}
	if !strings.Contains(section, "Fix self-heal first, then save again;") {
		t.Errorf("run 3 does not say to fix self-heal and save:\n%s", section)
	}

	// Fixed back: the check that failed runs first, and all pass.
	s.edit(conditionsFile, func(src string) string { return strings.Replace(src, programmedFalse, programmedTrue, 1) })
	section, headline, latency = s.waitRun(4, laterRun)
	t.Logf("save to the verdict of 3 checks: %.1fs", latency)
	if headline != "the 3 selected checks pass" {
		t.Errorf("run 4, fixed: %q, want every check to pass:\n%s", headline, section)
	}
	if i, j := strings.Index(section, "PASS self-heal"), strings.Index(section, "PASS crd-schema"); i < 0 || j < 0 || i > j {
		t.Errorf("run 4 did not run self-heal, the check that failed last, first:\n%s", section)
	}
	if !generateSkipped.MatchString(section) {
		t.Errorf("run 4 changed no marker and nothing in api/, yet generated again:\n%s", section)
	}

	// A save while a run's checks run: that run stops, a new one starts.
	offset := len(s.output())
	s.edit(conditionsFile, func(src string) string { return src + "\n// saved again\n" })
	s.waitFor("start controller ...", offset, laterRun) // a whole line: the checks begin
	// This save is in api/: the CRD's description of port changes.
	s.edit(typesFile, func(src string) string { return strings.Replace(src, portDoc, portDoc+" (edited while watching)", 1) })
	s.waitFor(fmt.Sprintf("(run 5 stopped: %s changed)", typesFile), offset, laterRun)
	if section, headline, _ = s.waitRun(6, laterRun); headline != "the 3 selected checks pass" {
		t.Errorf("run 6, after a stopped run: %q:\n%s", headline, section)
	}
	if generateSkipped.MatchString(section) || !strings.Contains(section, "install CRD ...") {
		t.Errorf("run 6 changed api/ but did not generate and install the CRD:\n%s", section)
	}
	if crds, _ := filepath.Glob(filepath.Join(s.step, "config", "crd", "bases", "*.yaml")); len(crds) != 1 || !fileHas(crds[0], "(edited") {
		t.Errorf("the CRD %v was not generated again from api/", crds)
	}

	// A save, and Ctrl-C while its checks run: nothing may stay behind.
	offset = len(s.output())
	s.edit(conditionsFile, func(src string) string { return src + "\n// saved once more\n" })
	s.waitFor("start controller ...", offset, laterRun) // a whole line: the controller is up
	procs := s.processes()
	t.Logf("running before Ctrl-C: %v", procs)
	if len(procs) < 3 {
		t.Errorf("want etcd, kube-apiserver and the controller running, got %v", procs)
	}
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.exited:
		if err != nil {
			t.Errorf("gw10 watch after Ctrl-C: %v, want exit status 0", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("gw10 watch did not stop within 2 minutes of Ctrl-C:\n%s", s.output())
	}
	out := s.output()
	if last := lastLine(out); !strings.HasPrefix(last, "gw10 watch: stopped") {
		t.Errorf("the last line after Ctrl-C is %q, want the goodbye", last)
	}
	for pid, cmdline := range procs {
		if alive(pid) {
			t.Errorf("left behind: pid %d %s", pid, cmdline)
		}
	}
	if left := s.processes(); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if dirs, _ := filepath.Glob(filepath.Join(s.runTmp, "gw10-run-*")); len(dirs) > 0 {
		t.Errorf("run directories left behind: %v", dirs)
	}
	if t.Failed() {
		t.Log(out)
	}
}

// generateSkipped is the generate stage's line when nothing it reads changed.
var generateSkipped = regexp.MustCompile(`generate \.\.\.\s+skipped`)

func fileHas(path, text string) bool {
	data, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(data), text)
}

func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[len(lines)-1]
}
