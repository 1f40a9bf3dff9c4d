package dataplane

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	netv1 "github.com/10xdev/gw10/step01/api/v1"
)

func route() *netv1.EdgeRoute {
	return &netv1.EdgeRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 3},
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
	want := Route{Hostname: "shop.example.com", Prefix: "/api", Service: "web", Port: 8080, Generation: 3}
	if method != http.MethodPut || path != "/v1/routes/shop/web" || got != want {
		t.Fatalf("got %s %s %+v, want PUT /v1/routes/shop/web %+v", method, path, got, want)
	}
}

func TestProgramReturnsTheNACKWithStatusAndReason(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "listener port 8080 conflicts with admin port", http.StatusUnprocessableEntity)
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
	if !strings.Contains(err.Error(), "HTTP 422") || !strings.Contains(err.Error(), "conflicts with admin port") {
		t.Fatalf("error text %q lacks the status or the reason", err)
	}
}

func TestRemoveTreats404AsDone(t *testing.T) {
	for _, code := range []int{http.StatusOK, http.StatusNoContent, http.StatusNotFound} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodDelete || r.URL.Path != "/v1/routes/shop/web" {
				t.Errorf("got %s %s", r.Method, r.URL.Path)
			}
			w.WriteHeader(code)
		}))
		h, _ := NewHTTP(srv.URL, time.Second)
		if err := h.Remove(context.Background(), types.NamespacedName{Namespace: "shop", Name: "web"}); err != nil {
			t.Errorf("Remove with HTTP %d: %v", code, err)
		}
		srv.Close()
	}
}

func TestRemoveFailsOnServerError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "table locked", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	h, _ := NewHTTP(srv.URL, time.Second)
	if err := h.Remove(context.Background(), types.NamespacedName{Namespace: "shop", Name: "web"}); err == nil {
		t.Fatal("Remove succeeded on HTTP 503")
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

func TestRoutesListsTheKeysOfTheTable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/routes" {
			t.Errorf("got %s %s, want GET /v1/routes", r.Method, r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"shop/web":{"hostname":"shop.example.com","prefix":"/","service":"web","port":8080},"blog/api":{}}`))
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

func TestRoutesFailsOnAnErrorOrATableItCannotRead(t *testing.T) {
	for name, answer := range map[string]func(http.ResponseWriter){
		"HTTP 503":      func(w http.ResponseWriter) { http.Error(w, "restarting", http.StatusServiceUnavailable) },
		"not JSON":      func(w http.ResponseWriter) { _, _ = w.Write([]byte("<html>")) },
		"a key sans /":  func(w http.ResponseWriter) { _, _ = w.Write([]byte(`{"web":{}}`)) },
		"a key with //": func(w http.ResponseWriter) { _, _ = w.Write([]byte(`{"a/b/c":{}}`)) },
		"an empty name": func(w http.ResponseWriter) { _, _ = w.Write([]byte(`{"shop/":{}}`)) },
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { answer(w) }))
		h, _ := NewHTTP(srv.URL, time.Second)
		if keys, err := h.Routes(context.Background()); err == nil {
			t.Errorf("%s: Routes = %v, want an error", name, keys)
		}
		srv.Close()
	}
}

// TestEveryPushAndWithdrawIsLoggedWithItsAnswer: make run's log shows each
// request the proxy was sent, on the logger of the reconcile's context.
func TestEveryPushAndWithdrawIsLoggedWithItsAnswer(t *testing.T) {
	refuse := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse {
			http.Error(w, "busy: try again", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	h, _ := NewHTTP(srv.URL, time.Second)
	var lines []string
	ctx := logr.NewContext(context.Background(), funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{}))
	_ = h.Program(ctx, route())
	_ = h.Remove(ctx, types.NamespacedName{Namespace: "shop", Name: "web"})
	refuse = true
	_ = h.Remove(ctx, types.NamespacedName{Namespace: "shop", Name: "web"})
	want := []string{
		`"level"=0 "msg"="data plane: push" "route"="shop/web" "answer"="ACK" "generation"=3`,
		`"level"=0 "msg"="data plane: withdraw" "route"="shop/web" "answer"="withdrawn"`,
		`"level"=0 "msg"="data plane: withdraw" "route"="shop/web" "answer"="proxy NACKed the route (HTTP 503): busy: try again"`,
	}
	if !slices.Equal(lines, want) {
		t.Errorf("the log:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
