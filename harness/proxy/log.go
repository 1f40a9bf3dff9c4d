package proxy

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// SetLog makes the proxy write a line to w for every request it answers:
// each push, withdraw and listing with its answer, as the proxy recorded it.
// `gw10 proxy` logs to its terminal, so that a learner running the
// controller by hand sees what it asked for; nil (the default) logs nothing.
func (s *Server) SetLog(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = w
}

// recorded is how many requests and listings the proxy has recorded: a
// request's own record is the first of its kind after it.
func (s *Server) recorded() [2]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return [2]int{len(s.events), len(s.listings)}
}

// logRequest writes the line of a request that has been answered, from the
// proxy's record of it (the events and listings recorded since before).
func (s *Server) logRequest(r *http.Request, before [2]int) {
	s.mu.Lock()
	w := s.log
	line := ""
	if w != nil {
		line = s.describeLocked(r, before)
	}
	s.mu.Unlock()
	if line != "" {
		fmt.Fprintf(w, "%s %s\n", time.Now().Format("15:04:05.000"), line)
	}
}

func (s *Server) describeLocked(r *http.Request, before [2]int) string {
	if r.Method == http.MethodGet {
		if before[1] >= len(s.listings) {
			return ""
		}
		if s.listings[before[1]].Refused {
			return "list: refused (503, the proxy is starting)"
		}
		if len(s.routes) == 1 {
			return "list: 1 route"
		}
		return fmt.Sprintf("list: %d routes", len(s.routes))
	}
	key := keyOf(r)
	for _, ev := range s.events[min(before[0], len(s.events)):] {
		if ev.Key != key || ev.Method != r.Method {
			continue
		}
		if ev.Method == http.MethodPut {
			what := "push " + key.String()
			if ev.Route != nil {
				what += fmt.Sprintf(" (generation %d: %s%s -> %s:%d)", ev.Route.Generation, ev.Route.Hostname, ev.Route.Prefix, ev.Route.Service, ev.Route.Port)
			}
			switch {
			case ev.Status == 0:
				return what + ": no answer (the proxy is down)"
			case ev.ACKed():
				return what + ": ACK"
			default:
				return what + ": NACK " + ev.Answer()
			}
		}
		switch ev.Status {
		case 0:
			return "withdraw " + key.String() + ": no answer (the proxy is down)"
		case http.StatusNoContent:
			return "withdraw " + key.String() + ": withdrawn"
		case http.StatusNotFound:
			return "withdraw " + key.String() + ": not held (404)"
		default:
			return "withdraw " + key.String() + ": refused " + ev.Answer()
		}
	}
	return ""
}
