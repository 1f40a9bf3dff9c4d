package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func do(t *testing.T, method, url string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(bytes.TrimSpace(b))
}

func TestProtocol(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := Key{"shop", "web"}
	route := Route{Hostname: "shop.example.com", Prefix: "/api", Service: "web", Port: 8080, Generation: 1}

	if code, _ := do(t, http.MethodPut, s.URL()+"/v1/routes/shop/web", route); code != http.StatusNoContent {
		t.Fatalf("PUT = %d, want 204", code)
	}
	if got, ok := s.Route(key); !ok || got != route {
		t.Fatalf("table holds %+v %v, want %+v", got, ok, route)
	}
	code, body := do(t, http.MethodGet, s.URL()+"/v1/routes", nil)
	if code != 200 || !bytes.Contains([]byte(body), []byte(`"shop/web"`)) {
		t.Fatalf("GET = %d %s", code, body)
	}

	s.SetNACK(key, "port 8080 is reserved")
	code, body = do(t, http.MethodPut, s.URL()+"/v1/routes/shop/web", Route{Hostname: "x", Prefix: "/", Service: "web", Port: 9090})
	if code != http.StatusUnprocessableEntity || body != `{"reason":"port 8080 is reserved"}` {
		t.Fatalf("NACKed PUT = %d %q", code, body)
	}
	if got, _ := s.Route(key); got.Port != 8080 {
		t.Fatalf("a NACKed push changed the table: %+v", got)
	}
	s.SetNACK(key, "")

	if code, _ := do(t, http.MethodPut, s.URL()+"/v1/routes/shop/web", Route{Hostname: "x", Prefix: "api", Port: 1}); code != http.StatusUnprocessableEntity {
		t.Fatalf("invalid route PUT = %d, want 422", code)
	}
	if code, _ := do(t, http.MethodDelete, s.URL()+"/v1/routes/shop/web", nil); code != http.StatusNoContent {
		t.Fatalf("DELETE = %d, want 204", code)
	}
	if code, _ := do(t, http.MethodDelete, s.URL()+"/v1/routes/shop/web", nil); code != http.StatusNotFound {
		t.Fatalf("second DELETE = %d, want 404", code)
	}
	evs := s.Events(key)
	if len(evs) != 5 || !evs[0].ACKed() || evs[1].ACKed() || evs[1].Reason != "port 8080 is reserved" {
		t.Fatalf("events: %+v", evs)
	}
}

func TestACKDelayHoldsTheAnswer(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetACKDelay(200 * time.Millisecond)
	do(t, http.MethodPut, s.URL()+"/v1/routes/a/b", Route{Hostname: "h", Prefix: "/", Port: 1})
	ev := s.Events(Key{"a", "b"})[0]
	if ev.Answered.Sub(ev.Received) < 200*time.Millisecond {
		t.Fatalf("answered after %s, want at least the 200ms delay", ev.Answered.Sub(ev.Received))
	}
	s.Clear()
	if len(s.Keys("a")) != 0 {
		t.Fatal("Clear left routes")
	}
}

func TestPushesInFlightAreThoseTheDelayHolds(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := Key{"a", "b"}
	route := Route{Hostname: "h", Prefix: "/", Port: 1, Generation: 2}
	s.SetACKDelay(time.Second)
	done := make(chan struct{})
	go func() {
		defer close(done)
		do(t, http.MethodPut, s.URL()+"/v1/routes/a/b", route)
	}()
	deadline := time.Now().Add(time.Minute)
	for len(s.PushesInFlight(key)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the delayed push never showed in flight")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := s.PushesInFlight(key); len(got) != 1 || got[0] != route {
		t.Fatalf("PushesInFlight = %+v, want the one push held", got)
	}
	<-done
	if got := s.PushesInFlight(key); len(got) != 0 {
		t.Fatalf("PushesInFlight after its request ended = %+v", got)
	}

	// HoldPushes: unapplied until ReleasePushes.
	s.SetACKDelay(0)
	s.HoldPushes(key)
	held := Route{Hostname: "h", Prefix: "/", Port: 2, Generation: 3}
	done = make(chan struct{})
	go func() {
		defer close(done)
		do(t, http.MethodPut, s.URL()+"/v1/routes/a/b", held)
	}()
	for len(s.PushesInFlight(key)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the held push never showed in flight")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got, _ := s.Route(key); got.Generation == 3 {
		t.Fatal("a held push was applied before its release")
	}
	s.ReleasePushes(key)
	<-done
	if got, _ := s.Route(key); got.Generation != 3 {
		t.Fatalf("after the release the proxy holds %+v, want generation 3", got)
	}
}

func TestDownClosesTheConnectionAndRecordsTheAttempt(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	route := Route{Hostname: "shop.example.com", Prefix: "/", Service: "web", Port: 8080, Generation: 1}
	s.SetDown(true)
	b, _ := json.Marshal(route)
	req, _ := http.NewRequest(http.MethodPut, s.URL()+"/v1/routes/shop/web", bytes.NewReader(b))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("PUT while down answered %d, want a transport error", resp.StatusCode)
	}
	if _, ok := s.Route(Key{"shop", "web"}); ok {
		t.Fatal("a push while down was stored")
	}
	evs := s.EventsIn("shop")
	if len(evs) == 0 || evs[0].Status != 0 || evs[0].Route == nil || evs[0].Answer() == "" {
		t.Fatalf("the attempt was not recorded as unanswered: %+v", evs)
	}
	s.SetDown(false)
	if code, _ := do(t, http.MethodPut, s.URL()+"/v1/routes/shop/web", route); code != http.StatusNoContent {
		t.Fatalf("PUT after up = %d, want 204", code)
	}
}

// TestNACKsWithRequestIDsKeepTheirReason: the same refusal, in an answer
// that is never the same twice.
func TestNACKsWithRequestIDsKeepTheirReason(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := Key{"shop", "web"}
	s.SetNACKWithRequestIDs(key, "port 8080 is reserved")
	route := Route{Hostname: "x", Prefix: "/", Service: "web", Port: 8080}
	seen := map[string]bool{}
	for range 3 {
		code, body := do(t, http.MethodPut, s.URL()+"/v1/routes/shop/web", route)
		var answer struct{ Reason, RequestID string }
		if err := json.Unmarshal([]byte(body), &answer); err != nil || code != http.StatusUnprocessableEntity {
			t.Fatalf("NACK = %d %q (%v), want 422 and JSON", code, body, err)
		}
		if answer.Reason != "port 8080 is reserved" || answer.RequestID == "" || seen[body] {
			t.Fatalf("NACK %q: want the reason and a request id never seen before (seen: %v)", body, seen)
		}
		seen[body] = true
	}
	if _, ok := s.Route(key); ok {
		t.Fatal("a NACKed push was stored")
	}
	s.SetNACKWithRequestIDs(key, "")
	if code, _ := do(t, http.MethodPut, s.URL()+"/v1/routes/shop/web", route); code != http.StatusNoContent {
		t.Fatalf("PUT after the NACKs = %d, want 204", code)
	}
}

// TestResetEndsTheRequestsOfOneRoute: a route told to reset gets its push
// and withdraw connections reset (the client's error names its local port,
// new every time); other routes are answered.
func TestResetEndsTheRequestsOfOneRoute(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	route := Route{Hostname: "x", Prefix: "/", Service: "web", Port: 8080}
	if code, _ := do(t, http.MethodPut, s.URL()+"/v1/routes/shop/web", route); code != http.StatusNoContent {
		t.Fatalf("PUT = %d, want 204", code)
	}
	s.SetReset(Key{"shop", "web"}, true)
	var errs []string
	for _, method := range []string{http.MethodPut, http.MethodDelete} {
		b, _ := json.Marshal(route)
		req, _ := http.NewRequest(method, s.URL()+"/v1/routes/shop/web", bytes.NewReader(b))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%s of a route told to reset answered %d, want a transport error", method, resp.StatusCode)
		}
		errs = append(errs, err.Error())
	}
	if !strings.Contains(errs[0], "connection reset") {
		t.Errorf("the push's error %q is not a connection reset", errs[0])
	}
	if _, ok := s.Route(Key{"shop", "web"}); !ok {
		t.Fatal("a reset withdraw removed the route")
	}
	if code, _ := do(t, http.MethodPut, s.URL()+"/v1/routes/shop/other", route); code != http.StatusNoContent {
		t.Fatalf("PUT of another route = %d, want 204", code)
	}
	evs := s.Events(Key{"shop", "web"})
	if len(evs) != 3 || !evs[1].Reset || evs[1].Status != 0 || evs[1].Route == nil || evs[2].Method != http.MethodDelete || !evs[2].Reset ||
		evs[1].Answer() != "unreachable: connection reset" {
		t.Fatalf("the reset requests were not recorded as such: %+v", evs)
	}
	s.SetReset(Key{"shop", "web"}, false)
	if code, _ := do(t, http.MethodDelete, s.URL()+"/v1/routes/shop/web", nil); code != http.StatusNoContent {
		t.Fatalf("DELETE after the resets = %d, want 204", code)
	}
}

// TestRefusedWithdrawsKeepTheRoute: a busy proxy answers 503 to the next n
// withdraws and keeps the route; the one after is answered and withdraws it.
func TestRefusedWithdrawsKeepTheRoute(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := Key{"shop", "web"}
	if code, _ := do(t, http.MethodPut, s.URL()+"/v1/routes/shop/web", Route{Hostname: "x", Prefix: "/", Service: "web", Port: 80}); code != http.StatusNoContent {
		t.Fatalf("PUT = %d, want 204", code)
	}
	s.RefuseWithdraws(key, 2, "busy: reloading")
	for i := range 2 {
		if code, body := do(t, http.MethodDelete, s.URL()+"/v1/routes/shop/web", nil); code != http.StatusServiceUnavailable || body != `{"reason":"busy: reloading"}` {
			t.Fatalf("withdraw %d = %d %q, want 503 busy: reloading", i+1, code, body)
		}
		if _, ok := s.Route(key); !ok {
			t.Fatalf("a refused withdraw removed the route")
		}
	}
	if code, _ := do(t, http.MethodDelete, s.URL()+"/v1/routes/shop/web", nil); code != http.StatusNoContent {
		t.Fatalf("third DELETE = %d, want 204", code)
	}
	if _, ok := s.Route(key); ok {
		t.Fatalf("the answered withdraw left the route")
	}
	if evs := s.Events(key); len(evs) != 4 || evs[1].Status != http.StatusServiceUnavailable || evs[1].Answer() != "503 busy: reloading" {
		t.Fatalf("events: %+v", evs)
	}
}

// serving starts a proxy holding route as shop/web, stopped when t ends.
func serving(t *testing.T, route Route) (s *Server, key Key, url string) {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	key, url = Key{"shop", "web"}, s.URL()+"/v1/routes/shop/web"
	if code, _ := do(t, http.MethodPut, url, route); code != http.StatusNoContent {
		t.Fatalf("PUT = %d, want 204", code)
	}
	return s, key, url
}

// giveUp sends a withdraw of key (at url) that gives up after 200 ms, and
// waits until the proxy lists n withdraws of key given up.
func giveUp(t *testing.T, s *Server, key Key, url string, n int) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	if resp, err := (&http.Client{Timeout: 200 * time.Millisecond}).Do(req); err == nil {
		_ = resp.Body.Close()
		t.Fatal("a held withdraw was answered")
	}
	for deadline := time.Now().Add(time.Minute); len(s.Abandoned(key)) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("withdraw %d, given up, is not listed as abandoned", n)
		}
	}
}

var webRoute = Route{Hostname: "x", Prefix: "/", Service: "web", Port: 80, Generation: 1, UID: "uid-1"}

// TestRefusalsCountReadsAndWithdrawsAlike: while a route's withdraws are
// refused, so are its reads (a busy proxy), each one of the refusals; a
// read refused is recorded with its answer.
func TestRefusalsCountReadsAndWithdrawsAlike(t *testing.T) {
	s, key, url := serving(t, webRoute)
	s.RefuseWithdraws(key, 2, "busy: reloading")
	if code, body := do(t, http.MethodGet, url, nil); code != http.StatusServiceUnavailable || body != `{"reason":"busy: reloading"}` {
		t.Fatalf("read during the refusal = %d %q, want 503 busy: reloading", code, body)
	}
	if code, _ := do(t, http.MethodDelete, url, nil); code != http.StatusServiceUnavailable {
		t.Fatalf("withdraw during the refusal = %d, want 503", code)
	}
	if code, _ := do(t, http.MethodGet, url, nil); code != http.StatusOK {
		t.Fatalf("read after two refusals = %d, want 200", code)
	}
	if code, _ := do(t, http.MethodGet, s.URL()+"/v1/routes/shop/none", nil); code != http.StatusNotFound {
		t.Fatalf("read of a route not held = %d, want 404", code)
	}
	var got []string
	for _, r := range s.Reads() {
		got = append(got, fmt.Sprintf("%s %d %s", r.Key, r.Status, r.Reason))
	}
	want := []string{"shop/web 503 busy: reloading", "shop/web 200 ", "shop/none 404 no such route"}
	if !slices.Equal(got, want) {
		t.Fatalf("reads recorded: %q, want %q", got, want)
	}
}

// TestAWithdrawGivenUpIsNeverAppliedAndIsRecorded: a held withdraw whose
// client gives up (its timeout) withdraws nothing, is no event, and is
// listed among the abandoned withdraws.
func TestAWithdrawGivenUpIsNeverAppliedAndIsRecorded(t *testing.T) {
	s, key, url := serving(t, webRoute)
	s.HoldWithdraw(key)
	giveUp(t, s, key, url, 1)
	if a := s.Abandoned(key)[0]; a.Key != key || !a.GaveUp.After(a.Received) {
		t.Fatalf("abandoned: %+v", a)
	}
	if _, ok := s.Route(key); !ok {
		t.Fatal("a withdraw given up removed the route")
	}
	if evs := s.Events(key); len(evs) != 1 {
		t.Fatalf("events: %+v, want the push alone", evs)
	}
	if code, _ := do(t, http.MethodDelete, url, nil); code != http.StatusNoContent {
		t.Fatalf("the next withdraw = %d, want 204 (the hold was for one)", code)
	}
}

// TestHoldWithdrawsHoldsEachInTurn: HoldWithdraws(n) holds the next n
// withdraws, each once the one before it was given up; the one after them
// lands.
func TestHoldWithdrawsHoldsEachInTurn(t *testing.T) {
	s, key, url := serving(t, webRoute)
	s.HoldWithdraws(key, 2)
	giveUp(t, s, key, url, 1)
	giveUp(t, s, key, url, 2)
	if code, _ := do(t, http.MethodDelete, url, nil); code != http.StatusNoContent {
		t.Fatalf("the third withdraw = %d, want 204", code)
	}
}

// TestAHeldWithdrawLandsAfterAPushOfItsKey: a withdraw held in flight is
// neither applied nor answered; a push of the same key that arrives
// meanwhile is applied first and lets the withdraw land after it, as two
// requests of one key in flight at once may on a real proxy. Released
// without a push, it lands as any withdraw.
func TestAHeldWithdrawLandsAfterAPushOfItsKey(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := Key{"shop", "web"}
	route := Route{Hostname: "x", Prefix: "/", Service: "web", Port: 80}
	for _, release := range []string{"a push", "ReleaseWithdraw"} {
		if code, _ := do(t, http.MethodPut, s.URL()+"/v1/routes/shop/web", route); code != http.StatusNoContent {
			t.Fatalf("PUT = %d, want 204", code)
		}
		s.HoldWithdraw(key)
		answered := make(chan int, 1)
		go func() {
			code, _ := do(t, http.MethodDelete, s.URL()+"/v1/routes/shop/web", nil)
			answered <- code
		}()
		deadline := time.Now().Add(time.Minute)
		for {
			if _, held := s.WithdrawHeld(key); held {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("released by %s: the withdraw never arrived", release)
			}
			time.Sleep(10 * time.Millisecond)
		}
		select {
		case code := <-answered:
			t.Fatalf("released by %s: a held withdraw was answered %d", release, code)
		case <-time.After(100 * time.Millisecond):
		}
		if _, ok := s.Route(key); !ok {
			t.Fatalf("released by %s: a held withdraw removed the route", release)
		}
		if release == "a push" {
			if code, _ := do(t, http.MethodPut, s.URL()+"/v1/routes/shop/web", route); code != http.StatusNoContent {
				t.Fatalf("PUT during the hold = %d, want 204", code)
			}
		} else {
			s.ReleaseWithdraw(key)
		}
		if code := <-answered; code != http.StatusNoContent {
			t.Fatalf("released by %s: the withdraw = %d, want 204", release, code)
		}
		if _, ok := s.Route(key); ok {
			t.Fatalf("released by %s: the route is still held after the withdraw landed", release)
		}
		if _, held := s.WithdrawHeld(key); held {
			t.Fatalf("released by %s: the hold outlived its withdraw", release)
		}
	}
}

func TestRefusedListingAnswersAgainAfterItsTime(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	s.RefuseListing(time.Hour)
	for range 2 {
		if code, _ := do(t, http.MethodGet, s.URL()+"/v1/routes", nil); code != http.StatusServiceUnavailable {
			t.Fatalf("GET /v1/routes while refused = %d, want 503", code)
		}
	}
	s.RefuseListing(0)
	if code, _ := do(t, http.MethodGet, s.URL()+"/v1/routes", nil); code != http.StatusOK {
		t.Fatalf("GET /v1/routes once no longer refused = %d, want 200", code)
	}

	// A refusal of d ends d after the first listing it refused.
	s.RefuseListing(200 * time.Millisecond)
	deadline := time.Now().Add(time.Minute)
	refused := 0
	for {
		code, _ := do(t, http.MethodGet, s.URL()+"/v1/routes", nil)
		if code == http.StatusOK {
			break
		}
		refused++
		if time.Now().After(deadline) {
			t.Fatalf("GET /v1/routes still refused (%d) a minute after a refusal of 200ms", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
	got := s.Listings()
	if len(got) != 3+refused+1 || !got[0].Refused || !got[1].Refused || got[2].Refused || got[len(got)-1].Refused || refused == 0 {
		t.Fatalf("listings recorded %+v, want 2 refused, 1 answered, %d refused, 1 answered", got, refused)
	}
}

func TestRefuseNextListingRefusesOne(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.RefuseNextListing()
	for i, want := range []int{http.StatusServiceUnavailable, http.StatusOK, http.StatusOK} {
		if code, _ := do(t, http.MethodGet, s.URL()+"/v1/routes", nil); code != want {
			t.Fatalf("listing %d after RefuseNextListing = %d, want %d", i+1, code, want)
		}
	}
}

// TestAWithdrawNamingAUIDRemovesOnlyThatUIDsRoute: a withdraw that names a
// uid leaves the route of another EdgeRoute of the same name (409); one
// that names the uid held, or none, withdraws it. GET answers one route.
func TestAWithdrawNamingAUIDRemovesOnlyThatUIDsRoute(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key, url := Key{"shop", "web"}, s.URL()+"/v1/routes/shop/web"
	route := Route{Hostname: "x", Prefix: "/", Service: "web", Port: 80, Generation: 1, UID: "uid-2"}
	if code, body := do(t, http.MethodGet, url, nil); code != http.StatusNotFound {
		t.Fatalf("GET of an absent route = %d %s, want 404", code, body)
	}
	if code, _ := do(t, http.MethodPut, url, route); code != http.StatusNoContent {
		t.Fatalf("PUT = %d, want 204", code)
	}
	code, body := do(t, http.MethodGet, url, nil)
	var got Route
	if err := json.Unmarshal([]byte(body), &got); err != nil || code != http.StatusOK || got != route {
		t.Fatalf("GET = %d %s (%v), want 200 and %+v", code, body, err, route)
	}
	if code, body := do(t, http.MethodDelete, url+"?uid=uid-1", nil); code != http.StatusConflict || !strings.Contains(body, `"reason"`) {
		t.Fatalf("DELETE naming another uid = %d %s, want 409 with a reason", code, body)
	}
	if _, ok := s.Route(key); !ok {
		t.Fatal("a withdraw naming another uid removed the route")
	}
	if code, _ := do(t, http.MethodDelete, url+"?uid=uid-2", nil); code != http.StatusNoContent {
		t.Fatalf("DELETE naming the uid held = %d, want 204", code)
	}
	if code, _ := do(t, http.MethodDelete, url+"?uid=uid-2", nil); code != http.StatusNotFound {
		t.Fatalf("DELETE of an absent route = %d, want 404", code)
	}
	if code, _ := do(t, http.MethodPut, url, route); code != http.StatusNoContent {
		t.Fatalf("PUT = %d, want 204", code)
	}
	if code, _ := do(t, http.MethodDelete, url, nil); code != http.StatusNoContent {
		t.Fatalf("DELETE naming no uid = %d, want 204 (unconditional)", code)
	}
	evs := s.Events(key)
	if len(evs) != 6 || evs[1].UID != "uid-1" || evs[1].Status != http.StatusConflict || evs[5].UID != "" {
		t.Fatalf("events: %+v", evs)
	}
}

// TestALateWithdrawSparesARouteCreatedAgain: the withdraw of an EdgeRoute's
// route, held in flight until the route of an EdgeRoute created again under
// the same name is pushed, lands after that push and is refused: the new
// route stays.
func TestALateWithdrawSparesARouteCreatedAgain(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key, url := Key{"shop", "web"}, s.URL()+"/v1/routes/shop/web"
	old := Route{Hostname: "x", Prefix: "/", Service: "web", Port: 80, Generation: 1, UID: "uid-1"}
	if code, _ := do(t, http.MethodPut, url, old); code != http.StatusNoContent {
		t.Fatalf("PUT = %d, want 204", code)
	}
	s.HoldWithdraw(key)
	answered := make(chan int, 1)
	go func() {
		code, _ := do(t, http.MethodDelete, url+"?uid=uid-1", nil)
		answered <- code
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, held := s.WithdrawHeld(key); held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the withdraw never arrived")
		}
	}
	again := old
	again.UID = "uid-2"
	if code, _ := do(t, http.MethodPut, url, again); code != http.StatusNoContent {
		t.Fatalf("PUT of the EdgeRoute created again = %d, want 204", code)
	}
	if code := <-answered; code != http.StatusConflict {
		t.Fatalf("the late withdraw = %d, want 409", code)
	}
	if got, ok := s.Route(key); !ok || got.UID != "uid-2" {
		t.Fatalf("the proxy holds %+v (%v), want the route of uid-2", got, ok)
	}
}

// TestAWithdrawGivenUpLandsLateAfterTheNextPush: held to land late, a
// withdraw the client gave up on is applied right after the key's next
// push. Naming the old route's uid, it spares the route pushed for a new
// uid (409); naming none, it removes it.
func TestAWithdrawGivenUpLandsLateAfterTheNextPush(t *testing.T) {
	for _, tc := range []struct {
		query      string
		status     int
		removed    string
		routeStays bool
	}{
		{"?uid=uid-1", http.StatusConflict, "", true},
		{"", http.StatusNoContent, "uid-2", false},
	} {
		t.Run("withdraw"+tc.query, func(t *testing.T) {
			s, key, url := serving(t, webRoute)
			s.HoldWithdrawLandingLate(key)
			giveUp(t, s, key, url+tc.query, 1)
			if _, ok := s.Route(key); !ok {
				t.Fatal("a withdraw given up removed the route before any push")
			}
			again := webRoute
			again.UID = "uid-2"
			if code, _ := do(t, http.MethodPut, url, again); code != http.StatusNoContent {
				t.Fatalf("PUT of the EdgeRoute created again = %d, want 204", code)
			}
			a := s.Abandoned(key)[0]
			if a.Landed.IsZero() || a.Status != tc.status || a.Removed != tc.removed {
				t.Fatalf("the late withdraw: %+v, want landed with %d, removing %q", a, tc.status, tc.removed)
			}
			if _, ok := s.Route(key); ok != tc.routeStays {
				t.Fatalf("after the late withdraw the route is held: %v, want %v", ok, tc.routeStays)
			}
		})
	}
}

// TestAPushRightAfterAGiveUpFindsTheWithdrawGivenUp: a client that gives up
// a held withdraw and pushes the same key at once may reach the proxy with
// the push before its closed connection does: the push waits to see it
// gone, so the withdraw is recorded given up, never applied, and no
// request in flight beside the push.
func TestAPushRightAfterAGiveUpFindsTheWithdrawGivenUp(t *testing.T) {
	s, key, url := serving(t, webRoute)
	s.HoldWithdraw(key)
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	if resp, err := (&http.Client{Timeout: 200 * time.Millisecond}).Do(req); err == nil {
		_ = resp.Body.Close()
		t.Fatal("a held withdraw was answered")
	}
	if code, _ := do(t, http.MethodPut, url, webRoute); code != http.StatusNoContent {
		t.Fatalf("PUT right after the give-up = %d, want 204", code)
	}
	if n := len(s.Abandoned(key)); n != 1 {
		t.Fatalf("%d withdraws recorded given up, want 1", n)
	}
	for _, ev := range s.Events(key) {
		if ev.Method == http.MethodDelete {
			t.Fatalf("the withdraw given up was applied and answered: %+v", ev)
		}
	}
	if _, ok := s.Route(key); !ok {
		t.Fatal("the route pushed after the give-up is not held")
	}
}

// TestTheHarnessesOwnPushIsMarked: PushAsHarness puts the route in the
// table and records an ACKed push marked ByHarness; a push over HTTP is not
// marked.
func TestTheHarnessesOwnPushIsMarked(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	key := Key{Namespace: "ns", Name: "web"}
	want := Route{Hostname: "web.example.com", Prefix: "/", Service: "web", Port: 8080, Generation: 1}
	s.PushAsHarness(key, want)
	if got, ok := s.Route(key); !ok || got != want {
		t.Fatalf("the table holds %+v (%v), want %+v", got, ok, want)
	}
	body := strings.NewReader(`{"hostname":"web.example.com","prefix":"/","service":"web","port":8080,"generation":2}`)
	req, err := http.NewRequest(http.MethodPut, s.URL()+"/v1/routes/ns/web", body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	evs := s.Events(key)
	if len(evs) != 2 || !evs[0].ByHarness || !evs[0].ACKed() || evs[1].ByHarness {
		t.Fatalf("the record is %+v, want the harness's ACKed push, then the client's unmarked", evs)
	}
}
