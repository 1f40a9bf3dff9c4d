package runner

import (
	"io"
	"sync"
)

// stageOut is a run's output. A stage's line ("  build ...  ") stays open
// until the stage ends with its result; anything else written meanwhile
// (the cluster's progress, the controller's log with -v) first ends that
// line, and the result then starts it again. So nothing ever writes into
// the middle of a line, on a terminal or in a CI log.
type stageOut struct {
	mu     sync.Mutex
	w      io.Writer
	line   string // the current stage's line, "" between stages
	broken bool   // something else ended the line
}

// stageOutOf wraps w, once.
func stageOutOf(w io.Writer) *stageOut {
	if s, ok := w.(*stageOut); ok {
		return s
	}
	return &stageOut{w: w}
}

func (s *stageOut) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.line != "" && !s.broken {
		s.broken = true
		if _, err := io.WriteString(s.w, "\n"); err != nil {
			return 0, err
		}
	}
	return s.w.Write(p)
}

// begin writes a stage's line and keeps it open.
func (s *stageOut) begin(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.line, s.broken = line, false
	_, _ = io.WriteString(s.w, line)
}

// end ends the stage's line with text (its result, or that it still runs);
// goOn keeps the stage's line open again after it.
func (s *stageOut) end(text string, goOn bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := text + "\n"
	if s.broken {
		out = s.line + out
	}
	if goOn {
		out += s.line
	}
	_, _ = io.WriteString(s.w, out)
	s.broken = false
	if !goOn {
		s.line = ""
	}
}

// heldOut is the progress of the cluster's start, which runs while the
// build and the unit tests do. In a log (CI, a pipe: Options.Terminal
// false) its lines are held until release, when the cluster stage begins,
// so that every stage's lines stay together and one stream reads top to
// bottom; after release it writes through. A nil heldOut is a terminal's:
// the progress shows as it comes, each line whole (stageOut).
type heldOut struct {
	mu       sync.Mutex
	w        io.Writer
	held     []byte
	released bool
}

func (h *heldOut) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return h.w.Write(p)
	}
	h.held = append(h.held, p...)
	return len(p), nil
}

// release writes what was held and lets the rest through.
func (h *heldOut) release() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return
	}
	h.released = true
	if len(h.held) > 0 {
		_, _ = h.w.Write(h.held)
		h.held = nil
	}
}
