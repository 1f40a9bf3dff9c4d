package proxy

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// lineSink hands each line the proxy writes to the test.
type lineSink chan string

func (l lineSink) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}

// TestTheLogShowsEveryPushWithdrawAndListingWithItsAnswer: what `make proxy`
// prints, a line per request with the answer the proxy recorded, so that the
// chapter's "read the log" shows each push and withdraw.
func TestTheLogShowsEveryPushWithdrawAndListingWithItsAnswer(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	log := make(lineSink, 100)
	s.SetLog(log)
	route := Route{Hostname: "shop.example.com", Prefix: "/api", Service: "web", Port: 8080, Generation: 2}
	do(t, http.MethodPut, s.URL()+"/v1/routes/shop/web", route)
	s.SetNACK(Key{"shop", "web"}, "port 8080 is reserved")
	do(t, http.MethodPut, s.URL()+"/v1/routes/shop/web", route)
	do(t, http.MethodGet, s.URL()+"/v1/routes", nil)
	s.RefuseWithdraws(Key{"shop", "web"}, 1, "busy: try again")
	do(t, http.MethodDelete, s.URL()+"/v1/routes/shop/web", nil)
	do(t, http.MethodDelete, s.URL()+"/v1/routes/shop/web", nil)
	do(t, http.MethodDelete, s.URL()+"/v1/routes/shop/web", nil)

	stamp := regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} `)
	var got []string
	for range 6 {
		var line string
		select {
		case line = <-log:
			line = strings.TrimSuffix(line, "\n")
		case <-time.After(5 * time.Second): // generous: the line is written before the answer goes out
			t.Fatalf("the proxy logged %d lines, want 6: %q", len(got), got)
		}
		if !stamp.MatchString(line) {
			t.Errorf("a line without its time: %q", line)
		}
		got = append(got, stamp.ReplaceAllString(line, ""))
	}
	want := []string{
		"push shop/web (generation 2: shop.example.com/api -> web:8080): ACK",
		"push shop/web (generation 2: shop.example.com/api -> web:8080): NACK 422 port 8080 is reserved",
		"list: 1 route",
		"withdraw shop/web: refused 503 busy: try again",
		"withdraw shop/web: withdrawn",
		"withdraw shop/web: not held (404)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	s.SetLog(nil)
	do(t, http.MethodGet, s.URL()+"/v1/routes", nil)
	if len(log) != 0 {
		t.Errorf("with no log set the proxy still wrote %q", <-log)
	}
}
