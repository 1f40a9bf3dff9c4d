package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/ctrlproc"
)

// fakeControllerEnv makes this test binary a stand-in controller (see
// maybeFakeController), its value the directory it keeps its starts in.
const fakeControllerEnv = "GW10_TEST_FAKE_CONTROLLER"

// maybeFakeController runs this binary as a stand-in controller when
// fakeControllerEnv is set: it serves /readyz and an empty /metrics on the
// flags' addresses until SIGTERM. Its first start behaves as the directory's
// "mode" file says: "port-taken" prints the manager's error for a metrics
// port another process took and exits 1; "exit" prints a setup error and
// exits 1 every time.
func maybeFakeController() {
	dir := os.Getenv(fakeControllerEnv)
	if dir == "" {
		return
	}
	fs := flag.NewFlagSet("fake", flag.ContinueOnError)
	metrics := fs.String("metrics-bind-address", "", "")
	probe := fs.String("health-probe-bind-address", "", "")
	fs.String("dataplane-url", "", "")
	_ = fs.Parse(os.Args[1:])
	mode, _ := os.ReadFile(filepath.Join(dir, "mode"))
	starts, _ := os.ReadFile(filepath.Join(dir, "starts"))
	_ = os.WriteFile(filepath.Join(dir, "starts"), append(starts, 'x'), 0o644)
	stamp := time.Now().UTC().Format("2006-01-02T15:04:05Z")
	switch {
	case string(mode) == "port-taken" && len(starts) == 0:
		fmt.Printf("%s\tERROR\tsetup\tproblem running manager\t{\"error\": \"failed to start metrics server: failed to create listener: listen tcp %s: bind: address already in use\"}\n", stamp, *metrics)
		os.Exit(1)
	case string(mode) == "exit":
		fmt.Printf("%s\tINFO\tsetup\tstarting manager\n", stamp)
		fmt.Printf("%s\tERROR\tsetup\tunable to create controller\t{\"error\": \"no kind is registered for the type v1.EdgeRoute\"}\n", stamp)
		os.Exit(1)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, a := range []string{*metrics, *probe} {
		l, err := net.Listen("tcp", a)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		go func() { _ = http.Serve(l, h) }()
	}
	fmt.Printf("%s\tINFO\tStarting workers\n", stamp)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	<-sig
	os.Exit(0)
}

func fakeController(t *testing.T, mode string) (*controller, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mode"), []byte(mode), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeControllerEnv, dir)
	log, err := ctrlproc.NewLog(filepath.Join(dir, "controller.log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = log.Close() })
	c := &controller{cfg: ctrlproc.Config{Binary: self}, log: log, ready: 30 * time.Second}
	t.Cleanup(func() {
		if p := c.current(); p != nil {
			p.Stop(5 * time.Second)
		}
	})
	return c, dir
}

// A port the harness picked and another process took before the controller
// bound it is the harness's doing: the start is retried on other ports.
func TestAStartWhosePortWasTakenIsStartedAgain(t *testing.T) {
	c, dir := fakeController(t, "port-taken")
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("the start failed: %v", err)
	}
	starts, _ := os.ReadFile(filepath.Join(dir, "starts"))
	if len(starts) != 2 {
		t.Errorf("%d starts, want 2 (the one that lost its port, then one that listened)", len(starts))
	}
	if c.crashed() {
		t.Error("the running process counts as crashed")
	}
	var marked bool
	for _, l := range c.log.Last(50) {
		marked = marked || strings.Contains(l, "starting it again on other ports")
	}
	if !marked {
		t.Errorf("the log does not say why the controller was started again:\n%s", strings.Join(c.log.Last(50), "\n"))
	}
}

// A controller that exits before it is ready for a reason of its own is
// not started again, and the error carries its last lines: a start in the
// middle of a check (restart-reconverge) shows them nowhere else.
func TestAControllerThatExitsBeforeReadyShowsItsLastLines(t *testing.T) {
	c, dir := fakeController(t, "exit")
	err := c.Start(context.Background())
	if err == nil {
		t.Fatal("the start succeeded")
	}
	starts, _ := os.ReadFile(filepath.Join(dir, "starts"))
	if len(starts) != 1 {
		t.Errorf("%d starts, want 1: only a taken port is the harness's doing", len(starts))
	}
	for _, want := range []string{"exited before it was ready (exit status 1)", "no kind is registered for the type v1.EdgeRoute"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	if _, ok := errors.AsType[*exitedEarly](err); !ok {
		t.Errorf("the error is a %T, want *exitedEarly (startController unwraps it)", err)
	}
}
