package step01

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/proxy"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// causeT is a check's handle on a real proxy stand-in in namespace ns, with
// step 01's triggers; push and withdraw talk to the proxy as a controller
// would.
func causeT(t *testing.T) (ct *checks.T, do func(method, name string)) {
	t.Helper()
	srv, err := proxy.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ct = checks.NewT("x", checks.Env{Proxy: srv, Namespace: "ns", Primary: primary(), Triggers: Step().Triggers})
	do = func(method, name string) {
		req, err := http.NewRequest(method, srv.URL()+"/v1/routes/ns/"+name,
			bytes.NewBufferString(`{"hostname":"`+name+`.example.com","prefix":"/","service":"s","port":80,"generation":1}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	return ct, do
}

// TestTheFanoutCauseReadsWhatReachedEachRoute: after a Service event, a
// push of one route and none of the other is a fan-out that stopped at one
// route; with that push removed, the cause has nothing to say (the wait's
// own cause says nothing was reached).
func TestTheFanoutCauseReadsWhatReachedEachRoute(t *testing.T) {
	for _, pushed := range []bool{true, false} {
		ct, do := causeT(t)
		ct.Did(ServiceCreated, "Service ns/s", "creating Service s")
		time.Sleep(5 * time.Millisecond) // the push follows the action
		if pushed {
			do(http.MethodPut, "a")
		}
		fanoutCause(ct, "s", []*checks.Route{ct.Route("a", "s"), ct.Route("b", "s")})
		got := strings.Join(ct.Causes(), "\n")
		if want := "acted on EdgeRoute a but never on b"; pushed != strings.Contains(got, want) {
			t.Errorf("pushed=%v: causes %q, want %q only when a was pushed", pushed, got, want)
		}
	}
}

// TestTheRetryRateCauseReadsTheRefusedPushes: refused pushes far faster
// than maxRetryRate after the first second are a tight loop; without the
// late pushes there is no evidence, and no cause.
func TestTheRetryRateCauseReadsTheRefusedPushes(t *testing.T) {
	for _, late := range []bool{true, false} {
		ct, do := causeT(t)
		r := ct.Route("nacked", "s")
		ct.Proxy.SetNACK(r.Key(), "refused")
		do(http.MethodPut, "nacked")
		if late {
			time.Sleep(1100 * time.Millisecond)
			for range 20 {
				do(http.MethodPut, "nacked")
			}
		}
		onCheckGoroutine(func() { retryRate(ct, r) }) // it ends with Fatalf
		got := strings.Join(ct.Causes(), "\n")
		if want := "a tight loop, not a backoff"; late != strings.Contains(got, want) {
			t.Errorf("late pushes=%v: causes %q", late, got)
		}
	}
}

// onCheckGoroutine runs f as a check runs: Fatalf ends its goroutine.
func onCheckGoroutine(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// TestThePrimarysGoTypeIsTheModulesImport: the diagnosis's hints quote
// For(&<GoType>{}); the alias is the one the solution imports its API as.
func TestThePrimarysGoTypeIsTheModulesImport(t *testing.T) {
	alias, _, _ := strings.Cut(primary().GoType, ".")
	main, err := os.ReadFile(filepath.Join("..", "..", "..", Step().SolutionDir, "cmd", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if want := alias + ` "` + Step().SolutionModule + `/api/v1"`; !strings.Contains(string(main), want) {
		t.Errorf("the solution's main.go does not import %s", want)
	}
}

// TestTheProgrammedOverNACKCauseNeedsAStatusAndTheRefusals: a status that
// said Programmed=True while the proxy refused every push of the route is
// the cause; without that status version, or with an ACK among the pushes,
// there is none.
func TestTheProgrammedOverNACKCauseNeedsAStatusAndTheRefusals(t *testing.T) {
	for _, c := range []struct {
		name             string
		programmed, nack bool
		want             bool
	}{
		{"Programmed=True over NACKs", true, true, true},
		{"no status said Programmed=True", false, true, false},
		{"the proxy ACKed", true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ct, do := causeT(t)
			r := ct.Route("a", "s")
			if c.nack {
				ct.Proxy.SetNACK(r.Key(), "port taken")
			}
			do(http.MethodPut, "a")
			fw := watch.NewFake()
			stop := ct.FollowPrimary(context.Background(), fw)
			status := "False"
			if c.programmed {
				status = "True"
			}
			obj := &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"name": "a", "namespace": "ns", "generation": int64(1)},
				"status": map[string]any{"conditions": []any{
					map[string]any{"type": programmed, "status": status, "reason": "Synced", "observedGeneration": int64(1)},
				}},
			}}
			fw.Add(obj)
			stop()
			programmedOverNACK(ct, r)
			got := strings.Join(ct.Causes(), "\n")
			if has := strings.Contains(got, "refused every push"); has != c.want {
				t.Errorf("causes %q: a cause %v, want %v", got, has, c.want)
			}
		})
	}
}
