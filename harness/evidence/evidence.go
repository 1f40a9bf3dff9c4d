// Package evidence is what the harness saw during one check, as one ordered
// list of events from four sources: the harness's own actions, the API
// server (watch events on the check's objects), the controller (its
// reconcile counts, scraped, and its log lines) and the proxy stand-in (every
// push and withdraw with its answer). The causes of a failed check are drawn
// from it, and the timeline report draws it.
package evidence

import (
	"sort"
	"sync"
	"time"
)

// Source is where an event was seen.
type Source string

// The sources, one lane each in the timeline.
const (
	Harness    Source = "harness"
	APIServer  Source = "apiserver"
	Controller Source = "controller"
	Proxy      Source = "proxy"
)

// Kind says what an event is, for the causes and the timeline's marks.
type Kind string

// Event kinds.
const (
	// Action is something the harness did to the world (Trigger says what).
	Action Kind = "action"
	// Status is a write of a status of the step's primary kind, seen on the watch.
	Status Kind = "status"
	// Object is any other change of a watched object (created, spec, deleted).
	Object Kind = "object"
	// Reconcile is a change of the controller's reconcile counters.
	Reconcile Kind = "reconcile"
	// Log is a controller log line about the check's objects.
	Log Kind = "log"
	// Push is a PUT to the proxy; Withdraw a DELETE.
	Push     Kind = "push"
	Withdraw Kind = "withdraw"
	// Expectation marks where the check expected what it did not see.
	Expectation Kind = "expectation"
	// Note is anything else the check wants on record.
	Note Kind = "note"
)

// Trigger classifies a harness action by what a correct controller does
// about it, so a cause can say what should have followed.
type Trigger string

// The triggers of every step: actions on the step's primary kind (a
// route: an object of it), the proxy and the controller process. A step's
// actions on other kinds are its own triggers, declared in its descriptor
// (step.Step.Triggers; step 01's Service events).
const (
	RouteCreated Trigger = "route-created"
	RouteEdited  Trigger = "route-edited"
	RouteDeleted Trigger = "route-deleted"
	StatusWiped  Trigger = "status-wiped"
	ProxyChanged Trigger = "proxy-changed" // NACK on or off, outage, table lost
	Restarted    Trigger = "controller-restarted"
	Killed       Trigger = "controller-killed"
)

// Generic says whether the trigger is one of every step's (above), which no
// step declares.
func Generic(tr Trigger) bool {
	switch tr {
	case RouteCreated, RouteEdited, RouteDeleted, StatusWiped, ProxyChanged, Restarted, Killed:
		return true
	}
	return false
}

// Event is one thing seen.
type Event struct {
	At time.Time `json:"at"`
	// End, when set, makes the event a span: a push from its arrival at the
	// proxy to its answer.
	End     time.Time `json:"end,omitempty"`
	Source  Source    `json:"source"`
	Kind    Kind      `json:"kind"`
	Trigger Trigger   `json:"trigger,omitempty"`
	// Object names what it is about: "EdgeRoute ns/name", "Service ns/name".
	Object string `json:"object,omitempty"`
	// Text is one line for a person.
	Text string `json:"text"`
	// Detail is shown on demand: conditions, a push body, a whole log line.
	Detail string `json:"detail,omitempty"`
	// Bad marks an event that is wrong by the contract (a NACK, an error, a
	// failed expectation).
	Bad bool `json:"bad,omitempty"`
	// Count is how many reconciles a Reconcile event stands for, by result
	// (success, error, requeue, requeue_after).
	Count map[string]int `json:"count,omitempty"`
}

// Record collects the events of one check. It is safe for concurrent use.
type Record struct {
	mu     sync.Mutex
	events []Event
}

// Add appends an event; a zero At is now.
func (r *Record) Add(ev Event) {
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

// Events returns the events in time order (a stable sort: events of the same
// instant keep the order they were added in).
func (r *Record) Events() []Event {
	r.mu.Lock()
	out := append([]Event(nil), r.events...)
	r.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// Since returns the events at or after t, in time order.
func (r *Record) Since(t time.Time) []Event {
	var out []Event
	for _, ev := range r.Events() {
		if !ev.At.Before(t) {
			out = append(out, ev)
		}
	}
	return out
}

// LastAction returns the newest harness action at or before t.
func (r *Record) LastAction(t time.Time) (Event, bool) {
	evs := r.Events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == Action && !evs[i].At.After(t) {
			return evs[i], true
		}
	}
	return Event{}, false
}

// Tally counts what followed a moment.
type Tally struct {
	Reconciles   int            // reconciles finished
	ByResult     map[string]int // reconciles by result
	StatusWrites int            // status writes of the object (all objects when none named)
	Pushes       int
	NACKs        int
	Withdraws    int
	LastStatus   *Event // the newest status write counted
}

// TallyAfter counts the events after t; object, when not empty, restricts
// status writes, pushes and withdraws to one object (reconciles cannot be
// told apart by object: the counters are per controller).
func TallyAfter(events []Event, t time.Time, object string) Tally {
	tl := Tally{ByResult: map[string]int{}}
	for i := range events {
		ev := &events[i]
		if ev.At.Before(t) {
			continue
		}
		switch ev.Kind {
		case Reconcile:
			for k, n := range ev.Count {
				tl.Reconciles += n
				tl.ByResult[k] += n
			}
		case Status:
			if object == "" || ev.Object == object {
				tl.StatusWrites++
				tl.LastStatus = ev
			}
		case Push:
			if object == "" || ev.Object == object {
				tl.Pushes++
				if ev.Bad {
					tl.NACKs++
				}
			}
		case Withdraw:
			if object == "" || ev.Object == object {
				tl.Withdraws++
			}
		}
	}
	return tl
}
