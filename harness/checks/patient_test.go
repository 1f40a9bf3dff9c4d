package checks

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/10xdev/gw10/harness/ctrlproc"
	"github.com/10xdev/gw10/harness/proxy"
)

// idleController is a controller that reconciled three times once and does
// nothing since, and logs nothing.
type idleController struct{ Controller }

func (idleController) Metrics(context.Context) (ctrlproc.Metrics, error) {
	return ctrlproc.Metrics{ReconcileTotal: 3, ByResult: map[string]float64{"success": 3}, MaxWorkers: 1}, nil
}

func (idleController) LogSince(time.Time) []ctrlproc.Line              { return nil }
func (idleController) StartIn(context.Context, []string) (bool, error) { return false, nil }
func (idleController) Work() (ctrlproc.Work, error)                    { return ctrlproc.Work{}, nil }

// patientT is a check's T on an idle controller and a proxy stand-in, with
// short waits.
func patientT(t *testing.T) (*T, *proxy.Server) {
	t.Helper()
	to := DefaultTimeouts()
	to.Scrape, to.Poll, to.PatientSettle = 20*time.Millisecond, 20*time.Millisecond, 1500*time.Millisecond
	return scrapedT(t, "patient", idleController{}, to)
}

// scrapedT is check id's T on controller c and a proxy stand-in of its
// own, c's metrics scraped as a check's are.
func scrapedT(t *testing.T, id string, c Controller, to Timeouts) (*T, *proxy.Server) {
	t.Helper()
	p, err := proxy.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	ct := NewT(id, Env{Controller: c, Proxy: p, Namespace: "ns", Timeouts: to, Primary: edgeRoutes})
	stop := ct.activity.run(context.Background())
	t.Cleanup(stop)
	return ct, p
}

// A patient wait (work a controller may do off its queue: a start-up sweep
// on a timer of its own) ends once the controller reconciles nothing and
// sends the proxy nothing for PatientSettle, and goes on while the proxy
// hears from it — a listing retried, a request held in flight — however
// idle its queue.
func TestAPatientWaitEndsWhenNothingIsAtWork(t *testing.T) {
	never := func() error { return errors.New("the route is still there") }
	const within = 8 * time.Second

	t.Run("nothing at work", func(t *testing.T) {
		t.Parallel()
		ct, _ := patientT(t)
		// The proof, not the bound, ends it: a wait run to its bound says
		// "not reached within".
		err := ct.converges(context.Background(), within, "the route to be withdrawn", never, nil, true)
		if err == nil || !strings.Contains(err.Error(), "sent the proxy no request") {
			t.Fatalf("the wait ended with %v, want the proof that nothing is at work", err)
		}
	})

	t.Run("a sweep listing the proxy's routes", func(t *testing.T) {
		t.Parallel()
		ct, p := patientT(t)
		listEvery(t, p, 100*time.Millisecond)
		waitUntil(t, func() bool { return len(p.Listings()) > 0 }) // the sweep is at work before the wait starts
		err := ct.converges(context.Background(), within, "the route to be withdrawn", never, nil, true)
		if err == nil || !strings.Contains(err.Error(), "not reached within") {
			t.Fatalf("the wait ended with %v, want it to run to its bound while the proxy is listed", err)
		}
	})

	t.Run("a withdraw held in flight", func(t *testing.T) {
		t.Parallel()
		ct, p := patientT(t)
		key := proxy.Key{Namespace: "ns", Name: "r"}
		p.HoldWithdraw(key)
		defer p.ReleaseWithdraw(key)
		go func() {
			req, _ := http.NewRequest(http.MethodDelete, p.URL()+"/v1/routes/ns/r", nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		waitUntil(t, func() bool { _, held := p.WithdrawHeld(key); return held }) // in flight before the wait starts
		err := ct.converges(context.Background(), within, "the route to be withdrawn", never, nil, true)
		if err == nil || !strings.Contains(err.Error(), "not reached within") {
			t.Fatalf("the wait ended with %v, want it to run to its bound while a withdraw is in flight", err)
		}
	})
}

// waitUntil polls cond for up to a minute (generous: a loaded machine) and
// fails the test if it never holds.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the test's setup did not happen within a minute")
		}
	}
}
