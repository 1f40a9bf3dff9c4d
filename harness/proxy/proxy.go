// Package proxy is the harness's stand-in for the edge proxy's admin API
// (the data plane the controller programs). It speaks the design's protocol,
// records every request with a timestamp, and can be told to NACK a route or
// to hold ACKs for a while, so checks can observe the order of push and status.
//
//	PUT    /v1/routes/{namespace}/{name}  JSON route -> 204 ACK, or 422 NACK
//	GET    /v1/routes/{namespace}/{name}             -> 200 JSON route, 404 when absent, 503 refused (busy: try again)
//	DELETE /v1/routes/{namespace}/{name}[?uid=U]     -> 204 withdrawn, 404 when absent, 503 refused (busy: try again),
//	                                                    409 when the route held carries another uid than U (it stays)
//	GET    /v1/routes                                -> JSON table, or 503 while listing is refused
//
// A route carries the uid of the EdgeRoute it was pushed for. A withdraw
// that names a uid removes the route only if it still carries that uid, so
// a withdraw that lands late cannot remove the route of an EdgeRoute created
// again under the same name since; one that names none removes whatever the
// proxy holds under the key (for clients that do not know the uid).
//
// Every refusal (4xx, 5xx) answers JSON {"reason": "..."}: the reason is the
// same for the same refusal. A route whose NACKs carry request ids
// (SetNACKWithRequestIDs) gets {"reason": "...", "requestId": "..."}, the id
// new in every answer, as a real proxy's may be.
//
// While "down", PUT and DELETE get no answer: the connection is closed.
// SetReset makes the requests of one route end in a connection reset (a
// TCP RST: the client's error names its local port, new every attempt).
// RefuseWithdraws makes a route's next reads and withdraws fail with 503, as
// a busy proxy's would. RefuseListing makes GET /v1/routes fail for a
// while, as a proxy still starting would.
package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Route is what a push carries.
type Route struct {
	Hostname   string `json:"hostname"`
	Prefix     string `json:"prefix"`
	Service    string `json:"service"`
	Port       int32  `json:"port"`
	Generation int64  `json:"generation"`
	// UID is the EdgeRoute's metadata.uid (empty from a client that sends none).
	UID string `json:"uid,omitempty"`
}

// Key names a route: the EdgeRoute's namespace and name.
type Key struct{ Namespace, Name string }

func (k Key) String() string { return k.Namespace + "/" + k.Name }

// Event is one request the proxy answered.
type Event struct {
	Method   string
	Key      Key
	Route    *Route // PUT only
	Received time.Time
	Answered time.Time // when the answer was sent: for a PUT, the ACK or NACK
	Status   int       // 0: no answer (the proxy down, or the connection reset)
	Reason   string    // NACK reason
	UID      string    // DELETE only: the uid the withdraw named, if any
	Reset    bool      // the connection was reset (SetReset)
	// ByHarness: the harness's own push (PushAsHarness), no request of the
	// controller's.
	ByHarness bool
}

// ACKed reports whether a PUT was accepted.
func (e Event) ACKed() bool { return e.Method == http.MethodPut && e.Status/100 == 2 }

// Answer says in a few words what the proxy answered.
func (e Event) Answer() string {
	switch {
	case e.Reset:
		return "unreachable: connection reset"
	case e.Status == 0:
		return "unreachable: connection closed without an answer"
	case e.Reason != "":
		return fmt.Sprintf("%d %s", e.Status, e.Reason)
	default:
		return fmt.Sprintf("%d", e.Status)
	}
}

// Server is the stand-in. Its zero value is not usable: call Start.
type Server struct {
	srv *http.Server
	url string

	mu       sync.Mutex
	routes   map[Key]Route
	events   []Event
	nack     map[Key]nack
	reset    map[Key]bool
	answers  int // refusals answered: the source of request ids
	refuse   map[Key]refusal
	ackDelay time.Duration
	down     bool

	holds map[Key]*hold // withdraws held in flight (HoldWithdraw)
	// abandoned are the held withdraws the controller gave up on; late,
	// by key, the one of them that lands after the key's next push
	// (HoldWithdrawLandingLate), as an index into abandoned.
	abandoned []Abandoned
	late      map[Key]int
	// delayed are the pushes whose answer SetACKDelay or HoldPushes holds,
	// by key; pushHolds the keys whose pushes wait for ReleasePushes.
	delayed   map[Key][]Route
	pushHolds map[Key]chan struct{}

	inFlight    int       // requests being answered (a held withdraw among them)
	lastRequest time.Time // the last request's arrival or answer, whichever is later

	refuseList   time.Duration // how long listing is refused, from the first refused listing
	refusingFrom time.Time     // the first refused listing; zero until one comes
	listings     []Listing
	reads        []Read

	log io.Writer // a line per request answered (SetLog); nil: none
}

// Abandoned is a withdraw the proxy held in flight (HoldWithdraw) that the
// controller gave up on, closing its connection before any answer: it was
// never applied.
type Abandoned struct {
	Key      Key
	UID      string // the uid the withdraw named ("": none)
	Received time.Time
	GaveUp   time.Time
	// Landed, for a withdraw held to land late (HoldWithdrawLandingLate),
	// is when the proxy applied it, right after the next push of its key;
	// Status says how (204: it removed the route, whose uid is Removed;
	// 409: the route carried another uid than the one it named, and stays).
	Landed  time.Time
	Status  int
	Removed string
}

// Abandoned returns the held withdraws of key the controller gave up on,
// oldest first.
func (s *Server) Abandoned(key Key) []Abandoned {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Abandoned
	for _, a := range s.abandoned {
		if a.Key == key {
			out = append(out, a)
		}
	}
	return out
}

// Read is one GET of a single route the proxy got (a withdraw reads the
// route's uid first): answered or not, it is a request about that route.
type Read struct {
	At  time.Time
	Key Key
	// Status is the answer's: 200 (the route), 404 (none held), 503 (a
	// refusal, Reason saying why); 0 when none came (the proxy down).
	Status int
	Reason string
}

// Reads returns the reads of single routes the proxy got, oldest first.
func (s *Server) Reads() []Read {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Read(nil), s.reads...)
}

// Listing is one GET /v1/routes the proxy answered.
type Listing struct {
	At      time.Time
	Refused bool // answered 503 Service Unavailable
}

// Start listens on a loopback port and serves until Close.
func Start() (*Server, error) { return StartOn("127.0.0.1:0") }

// StartOn listens on addr (host:port) and serves until Close: `gw10 proxy`
// runs it on a fixed port for the hand-run tasks.
func StartOn(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("proxy stand-in: listening: %w", err)
	}
	s := &Server{
		url:       "http://" + ln.Addr().String(),
		routes:    map[Key]Route{},
		nack:      map[Key]nack{},
		reset:     map[Key]bool{},
		refuse:    map[Key]refusal{},
		holds:     map[Key]*hold{},
		late:      map[Key]int{},
		delayed:   map[Key][]Route{},
		pushHolds: map[Key]chan struct{}{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/routes/{namespace}/{name}", s.put)
	mux.HandleFunc("DELETE /v1/routes/{namespace}/{name}", s.delete)
	mux.HandleFunc("GET /v1/routes/{namespace}/{name}", s.get)
	mux.HandleFunc("GET /v1/routes", s.list)
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.request(+1)
		defer s.request(-1)
		defer s.logRequest(r, s.recorded()) // deferred: a request the proxy hangs up on panics out of the mux
		mux.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// request counts a request in (+1) or out (-1).
func (s *Server) request(d int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight += d
	s.lastRequest = time.Now()
}

// Activity is when the proxy last got or answered a request of any kind
// (a push, a withdraw, a listing, for any namespace), and how many it is
// answering now: what tells a controller at work on the data plane, off
// its queue as well, from one that does nothing.
func (s *Server) Activity() (last time.Time, inFlight int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastRequest, s.inFlight
}

// URL is the base URL to pass as --dataplane-url.
func (s *Server) URL() string { return s.url }

// Close stops serving.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("proxy stand-in: shutting down: %w", err)
	}
	return nil
}

// nack is how the pushes of a route are refused.
type nack struct {
	reason     string
	requestIDs bool // each answer carries a new request id
}

// SetNACK makes every push of key fail with reason; an empty reason ACKs again.
func (s *Server) SetNACK(key Key, reason string) {
	s.setNACK(key, nack{reason: reason})
}

// SetNACKWithRequestIDs makes every push of key fail with reason, each
// answer with a request id of its own beside it: the same refusal in a body
// that is never the same twice. An empty reason ACKs again.
func (s *Server) SetNACKWithRequestIDs(key Key, reason string) {
	s.setNACK(key, nack{reason: reason, requestIDs: true})
}

func (s *Server) setNACK(key Key, n nack) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n.reason == "" {
		delete(s.nack, key)
		return
	}
	s.nack[key] = n
}

// SetReset makes every push and withdraw of key end in a connection reset,
// with no answer (on), or be answered again (off).
func (s *Server) SetReset(key Key, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		s.reset[key] = true
	} else {
		delete(s.reset, key)
	}
}

// RefuseWithdraws makes the next n requests that read or withdraw key (GET
// or DELETE of the route) fail with 503 and reason: a busy proxy, whose
// route stays until a withdraw is answered 204. A client that reads the
// route's uid before it withdraws (the solution's) meets the refusal on the
// read; one that withdraws at once, on the withdraw.
func (s *Server) RefuseWithdraws(key Key, n int, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		delete(s.refuse, key)
		return
	}
	s.refuse[key] = refusal{left: n, reason: reason}
}

// refusedLocked takes one of the refusals RefuseWithdraws left for key, if
// any, setting *reason to what the refusal answers.
func (s *Server) refusedLocked(key Key, reason *string) bool {
	ref, ok := s.refuse[key]
	if !ok {
		return false
	}
	if ref.left--; ref.left > 0 {
		s.refuse[key] = ref
	} else {
		delete(s.refuse, key)
	}
	*reason = ref.reason
	return true
}

// refusal is what is left of a RefuseWithdraws.
type refusal struct {
	left   int
	reason string
}

// hold is a withdraw of one key kept in flight: received, neither applied
// nor answered until released.
type hold struct {
	received time.Time     // zero until the withdraw comes
	release  chan struct{} // closed by ReleaseWithdraw or a push of the key
	// next is how many withdraws after this one are held in turn when the
	// controller gives up on this one (HoldWithdraws).
	next int
	// late: given up, the withdraw still lands, after the next push of its
	// key (HoldWithdrawLandingLate).
	late bool
	// uid is the withdraw's, gone its request's end (the client gave up),
	// once it came; abandoned says the give-up was recorded.
	uid       string
	gone      <-chan struct{}
	abandoned bool
}

// giveUpGrace is how long a push waits for the client of a withdraw of the
// same key held in flight to be seen gone, before it takes that withdraw
// for one still in flight: a client that gave up retries at once, and its
// next request can reach the proxy before the closed connection does.
const giveUpGrace = 200 * time.Millisecond

// giveUpLocked records that the client gave up the held withdraw h of key:
// it was never applied (a late one lands after the key's next push), the
// hold is over, and the next one is held when HoldWithdraws asked for more.
func (s *Server) giveUpLocked(key Key, h *hold) {
	if h.abandoned {
		return
	}
	h.abandoned = true
	if s.holds[key] == h {
		delete(s.holds, key)
		if h.next > 0 {
			s.holds[key] = &hold{release: make(chan struct{}), next: h.next - 1}
		}
	}
	s.abandoned = append(s.abandoned, Abandoned{Key: key, UID: h.uid, Received: h.received, GaveUp: time.Now()})
	if h.late {
		s.late[key] = len(s.abandoned) - 1
	}
}

// settleHeldWithdraw, before a push of key is applied, waits up to
// giveUpGrace for the client of a withdraw of key held in flight to be
// seen gone, and records the give-up if so: that withdraw is then no
// request in flight beside the push.
func (s *Server) settleHeldWithdraw(key Key) {
	s.mu.Lock()
	h, ok := s.holds[key]
	var gone <-chan struct{}
	if ok {
		gone = h.gone
	}
	s.mu.Unlock()
	if gone == nil {
		return
	}
	select {
	case <-gone:
		s.mu.Lock()
		s.giveUpLocked(key, h)
		s.mu.Unlock()
	case <-time.After(giveUpGrace):
	}
}

// HoldWithdraw keeps the next withdraw of key in flight, unapplied and
// unanswered, until ReleaseWithdraw, until the controller gives up on it
// (then it is never applied), or until a push of key arrives: that
// push is applied first, and the withdraw after it (a slow answer on a
// real proxy, where two requests of one key in flight at once may land in
// either order). A controller that never has two requests of one key in
// flight sends no push while its withdraw is held.
func (s *Server) HoldWithdraw(key Key) { s.HoldWithdraws(key, 1) }

// HoldWithdrawLandingLate is HoldWithdraw for a withdraw that, once the
// controller gave up on it, is still applied: right after the next push of
// key, as a withdraw stuck in a slow proxy's pipeline lands after a push
// sent later. Naming the uid of the route it meant, it then removes nothing
// of a route pushed for another uid (409).
func (s *Server) HoldWithdrawLandingLate(key Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holds[key] = &hold{release: make(chan struct{}), late: true}
}

// HoldWithdraws is HoldWithdraw for the next n withdraws of key, each held
// once the controller gave up on the one before it; ReleaseWithdraw and a
// push of key end them all.
func (s *Server) HoldWithdraws(key Key, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		s.releaseLocked(key)
		return
	}
	s.holds[key] = &hold{release: make(chan struct{}), next: n - 1}
}

// ReleaseWithdraw lets the held withdraw of key go on; a hold no withdraw
// has reached yet is dropped.
func (s *Server) ReleaseWithdraw(key Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(key)
}

func (s *Server) releaseLocked(key Key) {
	if h, ok := s.holds[key]; ok {
		close(h.release)
		delete(s.holds, key)
	}
}

// WithdrawHeld says when the held withdraw of key arrived; false while
// none is held.
func (s *Server) WithdrawHeld(key Key) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.holds[key]
	if !ok || h.received.IsZero() {
		return time.Time{}, false
	}
	return h.received, true
}

// SetDown makes the proxy unreachable (every request's connection is closed
// without an answer, as a crashed proxy's would be) or reachable again.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// RefuseListing makes GET /v1/routes answer 503 Service Unavailable for d,
// counted from the first listing refused (a controller that lists late still
// has its first listing refused), then answer again; 0 answers at once.
func (s *Server) RefuseListing(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseList, s.refusingFrom = d, time.Time{}
}

// RefuseNextListing makes the next GET /v1/routes answer 503 Service
// Unavailable, as a proxy still loading its table would, and the listings
// after it answer again.
func (s *Server) RefuseNextListing() {
	s.RefuseListing(time.Nanosecond)
}

// Listings returns the listings of the routes the proxy answered, oldest first.
func (s *Server) Listings() []Listing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Listing(nil), s.listings...)
}

// SetACKDelay holds every answer to a PUT for d before sending it.
func (s *Server) SetACKDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ackDelay = d
}

// HoldPushes keeps every push of key in flight, unapplied and unanswered,
// until ReleasePushes, or until the controller gives up on it (then it is
// never applied).
func (s *Server) HoldPushes(key Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pushHolds[key] == nil {
		s.pushHolds[key] = make(chan struct{})
	}
}

// ReleasePushes lets the held pushes of key go on, and the next ones through.
func (s *Server) ReleasePushes(key Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch := s.pushHolds[key]; ch != nil {
		close(ch)
		delete(s.pushHolds, key)
	}
}

// PushesInFlight returns the routes of key's pushes whose answer
// SetACKDelay or HoldPushes is holding now, oldest first.
func (s *Server) PushesInFlight(key Key) []Route {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.delayed[key])
}

// Route returns the route the proxy holds for key.
func (s *Server) Route(key Key) (Route, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.routes[key]
	return r, ok
}

// Keys lists the routes held in namespace, sorted.
func (s *Server) Keys(namespace string) []Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []Key
	for k := range s.routes {
		if k.Namespace == namespace {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Name < keys[j].Name })
	return keys
}

// Plant puts a route in the table as another client of the proxy would (a
// controller of another shard): no request of the run's controller, so no
// event.
func (s *Server) Plant(key Key, r Route) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes[key] = r
}

// PushAsHarness applies r as the harness's own push, with no HTTP request:
// recorded as an ACKed push marked ByHarness, so that what asks what the
// proxy held and ACKed sees it, and what judges the controller's requests
// (two of one route at once) leaves it out. Only the harness's process can
// make one.
func (s *Server) PushAsHarness(key Key, r Route) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes[key] = r
	s.events = append(s.events, Event{Method: http.MethodPut, Key: key, Route: &r, Received: now, Answered: now,
		Status: http.StatusNoContent, ByHarness: true})
}

// Clear empties the table, as a restarted proxy would be.
func (s *Server) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes = map[Key]Route{}
}

// EventsIn returns the requests for routes of namespace, oldest first.
func (s *Server) EventsIn(namespace string) []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Event
	for _, e := range s.events {
		if e.Key.Namespace == namespace {
			out = append(out, e)
		}
	}
	return out
}

// Events returns the requests answered for key, oldest first.
func (s *Server) Events(key Key) []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Event
	for _, e := range s.events {
		if e.Key == key {
			out = append(out, e)
		}
	}
	return out
}

func keyOf(r *http.Request) Key {
	return Key{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
}

// hangUp closes the connection without an answer while the proxy is down,
// or resets it for a route told to (SetReset), and records the attempt.
func (s *Server) hangUp(w http.ResponseWriter, r *http.Request, received time.Time) bool {
	key := keyOf(r)
	s.mu.Lock()
	down, reset := s.down, s.reset[key]
	s.mu.Unlock()
	if !down && !reset {
		return false
	}
	ev := Event{Method: r.Method, Key: key, Received: received, Answered: time.Now(), Reset: reset && !down}
	if r.Method == http.MethodPut {
		route := Route{}
		if json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&route) == nil {
			ev.Route = &route
		}
	}
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.mu.Unlock()
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			if tcp, isTCP := conn.(*net.TCPConn); isTCP && ev.Reset {
				_ = tcp.SetLinger(0) // close sends a RST, not a FIN
			}
			_ = conn.Close()
			return true
		}
	}
	panic(http.ErrAbortHandler) // net/http closes the connection without an answer
}

func (s *Server) put(w http.ResponseWriter, r *http.Request) {
	received := time.Now()
	if s.hangUp(w, r, received) {
		return
	}
	key := keyOf(r)
	var route Route
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	if err := dec.Decode(&route); err != nil {
		s.answer(w, Event{Method: r.Method, Key: key, Received: received, Status: http.StatusBadRequest, Reason: "malformed route: " + err.Error()})
		return
	}
	s.mu.Lock()
	delay, refused, held := s.ackDelay, s.nack[key], s.pushHolds[key]
	if delay > 0 || held != nil {
		s.delayed[key] = append(s.delayed[key], route)
	}
	s.mu.Unlock()
	if delay > 0 || held != nil {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
		if held != nil {
			select {
			case <-held:
			case <-r.Context().Done():
			}
		}
		s.mu.Lock()
		if i := slices.Index(s.delayed[key], route); i >= 0 {
			s.delayed[key] = slices.Delete(s.delayed[key], i, i+1)
		}
		s.mu.Unlock()
		if r.Context().Err() != nil {
			return
		}
	}
	ev := Event{Method: r.Method, Key: key, Route: &route, Received: received}
	switch {
	case refused.reason != "":
		ev.Status, ev.Reason = http.StatusUnprocessableEntity, refused.reason
	case route.Hostname == "" || !strings.HasPrefix(route.Prefix, "/") || route.Port < 1 || route.Port > 65535:
		ev.Status, ev.Reason = http.StatusUnprocessableEntity, fmt.Sprintf("invalid route %+v", route)
	default:
		ev.Status = http.StatusNoContent
		s.settleHeldWithdraw(key)
		s.mu.Lock()
		s.routes[key] = route
		if h, ok := s.holds[key]; ok && !h.received.IsZero() {
			s.releaseLocked(key) // the withdraw in flight lands after this push
		}
		s.landLateLocked(key)
		s.mu.Unlock()
	}
	s.answerWith(w, ev, refused.requestIDs)
}

// landLateLocked applies the withdraw of key given up earlier that was held
// to land late (HoldWithdrawLandingLate), as a withdraw would, and records
// how it landed.
func (s *Server) landLateLocked(key Key) {
	i, ok := s.late[key]
	if !ok {
		return
	}
	delete(s.late, key)
	a := &s.abandoned[i]
	a.Landed = time.Now()
	route, held := s.routes[key]
	switch {
	case !held:
		a.Status = http.StatusNotFound
	case a.UID != "" && route.UID != a.UID:
		a.Status = http.StatusConflict
	default:
		a.Status, a.Removed = http.StatusNoContent, route.UID
		delete(s.routes, key)
	}
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	if s.hangUp(w, r, time.Now()) {
		return
	}
	ev := Event{Method: r.Method, Key: keyOf(r), Received: time.Now(), Status: http.StatusNoContent, UID: r.URL.Query().Get("uid")}
	s.mu.Lock()
	if h, ok := s.holds[ev.Key]; ok && h.received.IsZero() {
		h.received, h.uid, h.gone = ev.Received, ev.UID, r.Context().Done()
		s.mu.Unlock()
		select {
		case <-h.release:
		case <-r.Context().Done():
			s.mu.Lock()
			s.giveUpLocked(ev.Key, h)
			s.mu.Unlock()
			return
		}
		s.mu.Lock()
	}
	if s.refusedLocked(ev.Key, &ev.Reason) {
		s.mu.Unlock()
		ev.Status = http.StatusServiceUnavailable
		s.answer(w, ev)
		return
	}
	route, ok := s.routes[ev.Key]
	switch {
	case !ok:
		ev.Status = http.StatusNotFound
	case ev.UID != "" && route.UID != ev.UID:
		ev.Status, ev.Reason = http.StatusConflict, "the route was pushed for another uid (a newer object of that name): not withdrawn"
	default:
		delete(s.routes, ev.Key)
	}
	s.mu.Unlock()
	s.answer(w, ev)
}

// get answers one route, recorded among the Reads (not the Events: it
// changes nothing). While the proxy is down, or the route's connections are
// reset, it gets no answer; while its reads and withdraws are refused
// (RefuseWithdraws), a 503.
func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	key := keyOf(r)
	s.mu.Lock()
	read := Read{At: time.Now(), Key: key, Status: http.StatusOK}
	route, ok := s.routes[key]
	unanswered := s.down || s.reset[key]
	switch {
	case unanswered:
		read.Status = 0
	case s.refusedLocked(key, &read.Reason):
		read.Status = http.StatusServiceUnavailable
	case !ok:
		read.Status, read.Reason = http.StatusNotFound, "no such route"
	}
	s.reads = append(s.reads, read)
	s.mu.Unlock()
	if unanswered {
		panic(http.ErrAbortHandler) // net/http closes the connection without an answer
	}
	if read.Status != http.StatusOK {
		refuse(w, read.Status, read.Reason, false, 0)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(route)
}

// answer records the event (stamped just before the answer goes out, so a
// status written after the ACK is always later) and sends it.
func (s *Server) answer(w http.ResponseWriter, ev Event) { s.answerWith(w, ev, false) }

// answerWith is answer; a refusal's answer carries a new request id when
// requestID is set.
func (s *Server) answerWith(w http.ResponseWriter, ev Event, requestID bool) {
	ev.Answered = time.Now()
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.answers++
	n := s.answers
	s.mu.Unlock()
	if ev.Reason != "" {
		refuse(w, ev.Status, ev.Reason, requestID, n)
		return
	}
	w.WriteHeader(ev.Status)
}

// refusalBody is the body of every refusal.
type refusalBody struct {
	Reason    string `json:"reason"`
	RequestID string `json:"requestId,omitempty"`
}

// refuse answers status with the reason as JSON, and request id n when
// requestID is set.
func refuse(w http.ResponseWriter, status int, reason string, requestID bool, n int) {
	body := refusalBody{Reason: reason}
	if requestID {
		body.RequestID = fmt.Sprintf("req-%06d", n)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Server) list(w http.ResponseWriter, _ *http.Request) {
	now := time.Now()
	s.mu.Lock()
	if s.refuseList > 0 && s.refusingFrom.IsZero() {
		s.refusingFrom = now
	}
	if s.refuseList > 0 && now.Sub(s.refusingFrom) < s.refuseList {
		s.listings = append(s.listings, Listing{At: now, Refused: true})
		s.mu.Unlock()
		refuse(w, http.StatusServiceUnavailable, "the proxy is starting: its route table cannot be listed yet", false, 0)
		return
	}
	s.listings = append(s.listings, Listing{At: now})
	table := make(map[string]Route, len(s.routes))
	for k, r := range s.routes {
		table[k.String()] = r
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(table)
}
