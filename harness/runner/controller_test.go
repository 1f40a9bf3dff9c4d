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

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

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
// exits 1 every time; "leader-election" is a manager with leader election on
// and its namespace from POD_NAMESPACE: without it, it prints main's lone
// error line and exits 1, as controller-runtime's manager does out of a
// cluster; with it, it writes the value to the directory's "pod-namespace".
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
	case string(mode) == "leader-election" && os.Getenv("POD_NAMESPACE") == "":
		fmt.Fprintln(os.Stderr, "manager: creating manager: unable to find leader election namespace: not running in-cluster, please specify LeaderElectionNamespace")
		os.Exit(1)
	case string(mode) == "leader-election":
		_ = os.WriteFile(filepath.Join(dir, "pod-namespace"), []byte(os.Getenv("POD_NAMESPACE")), 0o644)
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

// A manager with leader election on and no namespace for its Lease exits
// out of a cluster with one line of its own: the start's error shows that
// line (never folded as a stack frame) and the diagnosis names the cause.
// Given the namespace (Config.LeaseNamespace, as POD_NAMESPACE), it starts.
func TestLeaderElectionGetsANamespaceOrNamesTheCause(t *testing.T) {
	c, _ := fakeController(t, "leader-election")
	t.Setenv("POD_NAMESPACE", "") // the harness's own environment gives it none
	err := c.Start(context.Background())
	if err == nil {
		t.Fatal("the start succeeded without a namespace for the Lease")
	}
	if !strings.Contains(err.Error(), "unable to find leader election namespace") || strings.Contains(err.Error(), "stack frame") {
		t.Errorf("the error does not show the controller's own line:\n%v", err)
	}
	var found bool
	for _, f := range ctrlproc.Diagnose(ctrlproc.Snapshot{Exited: true, ExitText: "before ready", Log: c.log.Last(20)}) {
		found = found || strings.Contains(f.Cause, "leader election out of a cluster needs a namespace")
	}
	if !found {
		t.Errorf("the diagnosis does not name the cause; the log:\n%s", strings.Join(c.log.Last(20), "\n"))
	}

	c, dir := fakeController(t, "leader-election")
	c.cfg.LeaseNamespace = "gw10-lease-x"
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("the start failed with a namespace for the Lease: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "pod-namespace")); string(got) != "gw10-lease-x" {
		t.Errorf("the controller got POD_NAMESPACE=%q, want gw10-lease-x", got)
	}
}

// A Lease left by a process the harness killed is released before the next
// process starts (which would wait out its duration before leading); a
// running process's Lease is never touched.
func TestAKilledControllersLeaseIsReleasedBeforeTheNextStart(t *testing.T) {
	c, _ := fakeController(t, "leader-election")
	c.cfg.LeaseNamespace = "gw10-lease-x"
	holder := "vm_dead"
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "gw10-lease-x", Name: "edgeroute.net.10xdev.io"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	c.leases = fake.NewClientBuilder().WithObjects(lease).Build()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c.releaseLeases(ctx)
	if err := c.leases.Get(ctx, client.ObjectKeyFromObject(lease), &coordinationv1.Lease{}); err != nil {
		t.Fatalf("the running process's Lease was released: %v", err)
	}
	if err := c.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.leases.Get(ctx, client.ObjectKeyFromObject(lease), &coordinationv1.Lease{}); !apierrors.IsNotFound(err) {
		t.Errorf("the killed process's Lease is still there (%v)", err)
	}
	if log := strings.Join(c.log.Last(20), "\n"); !strings.Contains(log, "released Lease gw10-lease-x/edgeroute.net.10xdev.io, held by the stopped controller (vm_dead)") {
		t.Errorf("the log does not mark the release:\n%s", log)
	}
}
