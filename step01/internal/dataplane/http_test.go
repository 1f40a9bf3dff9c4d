package dataplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	netv1 "github.com/10xdev/gw10/step01/api/v1"
)

func route() *netv1.EdgeRoute {
	return &netv1.EdgeRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 3, UID: "uid-3"},
		Spec:       netv1.EdgeRouteSpec{Hostname: "shop.example.com", Prefix: "/api", Service: "web", Port: 8080},
	}
}

func TestProgramSendsTheRouteAndTreats2xxAsACK(t *testing.T) {
	var got Route
	var path, method string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, method = r.URL.Path, r.Method
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("decoding body: %v", err)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	h, err := NewHTTP(srv.URL, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Program(context.Background(), route()); err != nil {
		t.Fatalf("Program: %v", err)
	}
	want := Route{Hostname: "shop.example.com", Prefix: "/api", Service: "web", Port: 8080, Generation: 3, UID: "uid-3"}
	if method != http.MethodPut || path != "/v1/routes/shop/web" || got != want {
		t.Fatalf("got %s %s %+v, want PUT /v1/routes/shop/web %+v", method, path, got, want)
	}
}

func TestProgramReturnsTheNACKWithStatusAndReason(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = w.Write([]byte(`{"reason":"listener port 8080 conflicts with admin port","requestId":"r-41"}`))
	}))
	defer srv.Close()
	h, _ := NewHTTP(srv.URL, time.Second)
	err := h.Program(context.Background(), route())
	var nack *NACKError
	if !errors.As(err, &nack) {
		t.Fatalf("want a NACKError, got %v", err)
	}
	if nack.StatusCode != 422 || nack.Reason != "listener port 8080 conflicts with admin port" {
		t.Fatalf("got %+v", nack)
	}
	// The log gets the whole answer, request id included.
	for _, want := range []string{"HTTP 422", "conflicts with admin port", "r-41"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error text %q lacks %q", err, want)
		}
	}
}

// A condition message carries the NACK's Reason, so the same refusal must
// give the same Reason however the rest of the answer changes.
func TestTheNACKsReasonIsTheSameForTheSameRefusal(t *testing.T) {
	n := 0
	for name, tc := range map[string]struct {
		answer func(w http.ResponseWriter, n int)
		want   string
	}{
		"a request id beside the reason": {func(w http.ResponseWriter, n int) {
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprintf(w, `{"reason":"port reserved","requestId":"r-%d"}`, n)
		}, "port reserved"},
		"a text answer": {func(w http.ResponseWriter, n int) {
			http.Error(w, fmt.Sprintf("port reserved (request r-%d)", n), http.StatusUnprocessableEntity)
		}, "Unprocessable Entity"},
		"an empty reason": {func(w http.ResponseWriter, n int) {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, `{"reason":" ","requestId":"r-%d"}`, n)
		}, "Service Unavailable"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			n++
			tc.answer(w, n)
		}))
		h, _ := NewHTTP(srv.URL, time.Second)
		var reasons []string
		for range 2 {
			var nack *NACKError
			if err := h.Program(context.Background(), route()); !errors.As(err, &nack) {
				t.Fatalf("%s: want a NACKError, got %v", name, err)
			} else {
				reasons = append(reasons, nack.Reason)
			}
		}
		if reasons[0] != tc.want || reasons[1] != tc.want {
			t.Errorf("%s: reasons %q, want %q twice", name, reasons, tc.want)
		}
		srv.Close()
	}
}

func TestALongReasonIsCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprintf(w, `{"reason":%q}`, strings.Repeat("é", maxReasonBytes))
	}))
	defer srv.Close()
	h, _ := NewHTTP(srv.URL, time.Second)
	var nack *NACKError
	if err := h.Program(context.Background(), route()); !errors.As(err, &nack) {
		t.Fatalf("want a NACKError, got %v", err)
	}
	if len(nack.Reason) > maxReasonBytes+len("…") || !utf8.ValidString(nack.Reason) {
		t.Fatalf("reason of %d bytes (valid UTF-8: %v), want at most %d", len(nack.Reason), utf8.ValidString(nack.Reason), maxReasonBytes)
	}
}

// heldRoute answers GET /v1/routes/shop/web with a route of uid (none
// when uid is empty), and passes the other requests to next.
func heldRoute(t *testing.T, uid string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next(w, r)
			return
		}
		if r.URL.Path != "/v1/routes/shop/web" {
			t.Errorf("got GET %s, want GET /v1/routes/shop/web", r.URL.Path)
		}
		if uid == "" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(Route{Hostname: "shop.example.com", Prefix: "/", Service: "web", Port: 8080, UID: uid})
	}
}

func TestRemoveWithdrawsTheRouteReadNamingItsUID(t *testing.T) {
	for _, code := range []int{http.StatusOK, http.StatusNoContent, http.StatusNotFound, http.StatusConflict} {
		var got string
		srv := httptest.NewServer(heldRoute(t, "uid-1", func(w http.ResponseWriter, r *http.Request) {
			got = r.Method + " " + r.URL.RequestURI()
			w.WriteHeader(code)
		}))
		h, _ := NewHTTP(srv.URL, time.Second)
		if err := h.Remove(context.Background(), types.NamespacedName{Namespace: "shop", Name: "web"}); err != nil {
			t.Errorf("Remove answered HTTP %d: %v", code, err)
		}
		if want := "DELETE /v1/routes/shop/web?uid=uid-1"; got != want {
			t.Errorf("Remove sent %q, want %q", got, want)
		}
		srv.Close()
	}
}

func TestRemoveOfARouteNotHeldSendsNoWithdraw(t *testing.T) {
	srv := httptest.NewServer(heldRoute(t, "", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("Remove sent %s %s for a route the proxy does not hold", r.Method, r.URL)
	}))
	defer srv.Close()
	h, _ := NewHTTP(srv.URL, time.Second)
	if err := h.Remove(context.Background(), types.NamespacedName{Namespace: "shop", Name: "web"}); err != nil {
		t.Fatalf("Remove: %v", err)
	}
}

func TestRemoveFailsOnServerError(t *testing.T) {
	for name, handler := range map[string]http.HandlerFunc{
		"the withdraw": heldRoute(t, "uid-1", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "table locked", http.StatusServiceUnavailable)
		}),
		"the read": func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "table locked", http.StatusServiceUnavailable)
		},
	} {
		srv := httptest.NewServer(handler)
		h, _ := NewHTTP(srv.URL, time.Second)
		if err := h.Remove(context.Background(), types.NamespacedName{Namespace: "shop", Name: "web"}); err == nil {
			t.Errorf("Remove succeeded with HTTP 503 on %s", name)
		}
		srv.Close()
	}
}

func TestRequestsHonourTheContext(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	h, _ := NewHTTP(srv.URL, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := h.Program(ctx, route()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the context's deadline error, got %v", err)
	}
}

func TestNewHTTPRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:9901", "ftp://proxy", "http://"} {
		if _, err := NewHTTP(u, time.Second); err == nil {
			t.Errorf("NewHTTP(%q) succeeded", u)
		}
	}
}

// TestRoutesListsTheKeysOfTheTable: the keys that are namespace/name; the
// others (a shared proxy's routes of another kind) are skipped.
func TestRoutesListsTheKeysOfTheTable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/routes" {
			t.Errorf("got %s %s, want GET /v1/routes", r.Method, r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"shop/web":{"hostname":"shop.example.com","prefix":"/","service":"web","port":8080},"blog/api":{},` +
			`"web":{},"a/b/c":{},"shop/":{}}`))
	}))
	defer srv.Close()
	h, _ := NewHTTP(srv.URL, time.Second)
	got, err := h.Routes(context.Background())
	if err != nil {
		t.Fatalf("Routes: %v", err)
	}
	slices.SortFunc(got, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	want := []types.NamespacedName{{Namespace: "blog", Name: "api"}, {Namespace: "shop", Name: "web"}}
	if !slices.Equal(got, want) {
		t.Fatalf("Routes = %v, want %v", got, want)
	}
}

// TestRoutesFailsOnAnErrorOrATableItCannotRead: a refused listing is named
// as one, not as a route's NACK.
func TestRoutesFailsOnAnErrorOrATableItCannotRead(t *testing.T) {
	for name, answer := range map[string]func(http.ResponseWriter){
		"HTTP 503": func(w http.ResponseWriter) { http.Error(w, "restarting", http.StatusServiceUnavailable) },
		"not JSON": func(w http.ResponseWriter) { _, _ = w.Write([]byte("<html>")) },
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { answer(w) }))
		h, _ := NewHTTP(srv.URL, time.Second)
		keys, err := h.Routes(context.Background())
		switch {
		case err == nil:
			t.Errorf("%s: Routes = %v, want an error", name, keys)
		case name == "HTTP 503" && !strings.Contains(err.Error(), "proxy refused the listing of its routes (HTTP 503)"):
			// A refused listing is not a route's NACK: the log says which.
			t.Errorf("%s: the error says %q", name, err)
		}
		srv.Close()
	}
}

// TestEveryPushAndWithdrawIsLoggedWithItsAnswer: make run's log shows each
// request the proxy was sent, on the logger of the reconcile's context,
// named "dataplane" as the logging data plane's logger is.
func TestEveryPushAndWithdrawIsLoggedWithItsAnswer(t *testing.T) {
	refuse := false
	srv := httptest.NewServer(heldRoute(t, "uid-3", func(w http.ResponseWriter, r *http.Request) {
		if refuse {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"reason":"busy: try again","requestId":"r-9"}`))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	h, _ := NewHTTP(srv.URL, time.Second)
	var lines []string
	ctx := logr.NewContext(context.Background(), funcr.New(func(prefix, args string) {
		if prefix != "dataplane" {
			t.Errorf("logged under the name %q, want \"dataplane\": %s", prefix, args)
		}
		lines = append(lines, args)
	}, funcr.Options{}))
	_ = h.Program(ctx, route())
	_ = h.Remove(ctx, types.NamespacedName{Namespace: "shop", Name: "web"})
	refuse = true
	_ = h.Remove(ctx, types.NamespacedName{Namespace: "shop", Name: "web"})
	want := []string{
		`"level"=0 "msg"="data plane: push" "route"="shop/web" "answer"="ACK" "generation"=3`,
		`"level"=0 "msg"="data plane: withdraw" "route"="shop/web" "answer"="withdrawn"`,
		`"level"=0 "msg"="data plane: withdraw" "route"="shop/web" "answer"="proxy NACKed the route (HTTP 503): busy: try again; its answer: {\"reason\":\"busy: try again\",\"requestId\":\"r-9\"}"`,
	}
	if !slices.Equal(lines, want) {
		t.Errorf("the log:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestAWithdrawThatSendsNothingSaysSo: the log says "withdrawn" only when
// the proxy answered a withdraw; a route not held, or held for another
// EdgeRoute (409), is logged as what it is.
func TestAWithdrawThatSendsNothingSaysSo(t *testing.T) {
	var lines []string
	ctx := logr.NewContext(context.Background(), funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{}))
	notHeld := httptest.NewServer(heldRoute(t, "", func(w http.ResponseWriter, r *http.Request) {}))
	defer notHeld.Close()
	other := httptest.NewServer(heldRoute(t, "uid-4", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusConflict) }))
	defer other.Close()
	for _, url := range []string{notHeld.URL, other.URL} {
		h, _ := NewHTTP(url, time.Second)
		_ = h.Remove(ctx, types.NamespacedName{Namespace: "shop", Name: "web"})
	}
	want := []string{
		`"level"=0 "msg"="data plane: withdraw" "route"="shop/web" "answer"="nothing held: no withdraw sent"`,
		`"level"=0 "msg"="data plane: withdraw" "route"="shop/web" "answer"="left: the proxy holds another EdgeRoute's route under this name (HTTP 409)"`,
	}
	if !slices.Equal(lines, want) {
		t.Errorf("the log:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
