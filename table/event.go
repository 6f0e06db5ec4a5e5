package table

import (
	"sync"
	"time"
)

// Body is the payload of an event: what happened. Round events (card dealt,
// decision requested, round settled) come from table/round; table adds its
// own (alarm, paused, state). Kind names it on the wire.
type Body interface {
	Kind() string
}

// Event is one numbered thing that happened at the table. Seq is per table,
// starts at 1 and never goes back, even across restarts, so a subscriber can
// detect gaps and duplicates.
type Event struct {
	Seq   uint64
	Time  time.Time
	Table string
	Round string
	Body  Body

	memo *memo // the wire encoding, shared by the subscribers (Encoded)
}

// Kind is the body's kind.
func (e Event) Kind() string {
	if e.Body == nil {
		return ""
	}
	return e.Body.Kind()
}

// memo holds an event's wire encoding once a subscriber has made it. The
// controller gives every event it emits one, and every subscriber gets a
// copy of the same Event, so they share it.
type memo struct {
	once sync.Once
	b    []byte
	err  error
}

// Encoded returns encode(e), computed once per emitted event and shared by
// every subscriber that asks (the MQTT link, the console): the bytes are
// shared too, so nobody may modify them. An event not made by the
// controller (a test's, a replay's) is encoded on each call.
func (e Event) Encoded(encode func(Event) ([]byte, error)) ([]byte, error) {
	if e.memo == nil {
		return encode(e)
	}
	e.memo.once.Do(func() { e.memo.b, e.memo.err = encode(e) })
	return e.memo.b, e.memo.err
}

// Alarm is raised for anything a supervisor must look at: an integrity
// failure, a device fault, an input that does not fit the round.
type Alarm struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Pauses is true when the alarm paused the table.
	Pauses bool `json:"pauses"`
}

// Kind implements Body.
func (Alarm) Kind() string { return "alarm" }

// Paused reports the table paused, by whom and why.
type Paused struct {
	By     string `json:"by"`
	Reason string `json:"reason"`
}

// Kind implements Body.
func (Paused) Kind() string { return "paused" }

// Resumed reports the table resumed.
type Resumed struct {
	By string `json:"by"`
}

// Kind implements Body.
func (Resumed) Kind() string { return "resumed" }

// Phase is where the table is in its cycle, as the light, the console and
// the backend need to know it.
type Phase string

// The table phases.
const (
	PhaseIdle     Phase = "idle"      // no shoe in play or waiting to open bets
	PhaseBetting  Phase = "betting"   // bets open (light green)
	PhaseLastCall Phase = "last_call" // bets closing soon (light yellow)
	PhaseDealing  Phase = "dealing"   // bets closed, round in play (light red)
	PhaseSettled  Phase = "settled"   // round settled, before the next opens
	PhasePaused   Phase = "paused"    // paused by a supervisor or an alarm
	PhaseClosed   Phase = "closed"    // shoe finished: no round until a new shoe
)

// PhaseChanged reports the table entering a phase. Deadline is when the
// phase ends by itself (bets close), zero when it does not.
type PhaseChanged struct {
	Phase    Phase     `json:"phase"`
	Deadline time.Time `json:"deadline,omitzero"`
	Reason   string    `json:"reason,omitempty"`
}

// Kind implements Body.
func (PhaseChanged) Kind() string { return "phase" }
