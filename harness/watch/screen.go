package watch

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/report"
)

// screen is the watch's output: lines as they come, and on a terminal one
// live line at the bottom (the running check and its time) that is redrawn
// in place and cleared before anything else is written.
type screen struct {
	mu     sync.Mutex
	w      io.Writer
	live   bool
	status string    // the live line without its clock; "" for none
	since  time.Time // when the status began
	drawn  bool
	// pass and fail count this run's finished checks.
	pass, fail int
}

// Write clears the live line, writes p, and leaves the line to the next redraw.
func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	return s.w.Write(p)
}

func (s *screen) clear() {
	if s.drawn {
		fmt.Fprint(s.w, "\r\033[K")
		s.drawn = false
	}
}

// redraw draws the live line with its clock (a terminal only).
func (s *screen) redraw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.draw()
}

func (s *screen) draw() {
	if !s.live || s.status == "" {
		return
	}
	s.clear()
	fmt.Fprintf(s.w, "%s %4.1fs", s.status, time.Since(s.since).Seconds())
	s.drawn = true
}

func (s *screen) setStatus(status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.since = status, time.Now()
	if status == "" {
		s.clear()
	}
	s.draw()
}

// tick redraws the live line until stop is closed.
func (s *screen) tick(stop <-chan struct{}) {
	if !s.live {
		return
	}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.redraw()
		}
	}
}

// CheckStarted shows the running check on the live line.
func (s *screen) CheckStarted(i, n int, chk checks.Check) {
	s.mu.Lock()
	if i == 0 {
		s.pass, s.fail = 0, 0
	}
	tally := ""
	if s.pass+s.fail > 0 {
		tally = fmt.Sprintf(" (so far %d pass, %d fail)", s.pass, s.fail)
	}
	s.mu.Unlock()
	s.setStatus(fmt.Sprintf("  [%d/%d] running %s%s", i+1, n, chk.ID, tally))
}

// CheckDone prints the check's line (the live line is redrawn by the next check).
func (s *screen) CheckDone(_, _ int, res report.CheckResult) {
	s.mu.Lock()
	switch res.Status {
	case report.Pass:
		s.pass++
	case report.Fail:
		s.fail++
	}
	s.status = ""
	s.clear()
	fmt.Fprintf(s.w, "  %s %-20s %6s  %s\n", strings.ToUpper(string(res.Status)), res.ID, res.Duration, res.Title)
	s.mu.Unlock()
}
