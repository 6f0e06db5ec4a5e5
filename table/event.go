package table

import (
	"time"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
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

// CutCard reports the cut card out of the shoe: the round in play
// finishes, then the table closes until a new shoe is in play.
type CutCard struct {
	Source string `json:"source"`
}

// Kind implements Body.
func (CutCard) Kind() string { return "cut_card" }

// ShoeInPlay reports a new shoe in play, and how many cards it burns first.
type ShoeInPlay struct {
	ShoeID string `json:"shoe_id"`
	Burn   int    `json:"burn,omitempty"`
}

// Kind implements Body.
func (ShoeInPlay) Kind() string { return "shoe_in_play" }

// Burned reports a card burned face down from a new shoe (003).
type Burned struct {
	Card card.Card `json:"card"`
}

// Kind implements Body.
func (Burned) Kind() string { return "burned" }

// State is the retained snapshot of the whole table.
type State struct {
	// Seq is the number of the last event this snapshot reflects.
	Seq         uint64     `json:"seq"`
	Table       string     `json:"table"`
	Game        string     `json:"game"`
	Phase       Phase      `json:"phase"`
	Deadline    time.Time  `json:"deadline,omitzero"`
	Paused      bool       `json:"paused"`
	PauseReason string     `json:"pause_reason,omitempty"`
	Round       round.View `json:"round"`
	Shoe        ShoeState  `json:"shoe"`
	// PauseReasons are why the table is paused (it may be for several).
	PauseReasons []PauseReason `json:"pause_reasons,omitempty"`
	// Misread is set while the round misses a card the shoe could not
	// read: a supervisor corrects it or voids the round. With several
	// waiting, the oldest.
	Misread string `json:"misread,omitempty"`
	// MisreadsPending is how many cards wait for a supervisor's
	// correction (Misread names the oldest, the one the next correct
	// fills: they are corrected in the order the dealer drew them).
	MisreadsPending int `json:"misreads_pending,omitempty"`
	// MisreadAt is the position in the shoe of the card Misread names
	// (the shoe's count of cards out, this one included, when it came
	// out: 1 for the shoe's first card): the identity a correct names
	// (Supervisor.At) so that it fills that card or is refused.
	MisreadAt int `json:"misread_at,omitempty"`
	// MisreadsAt are the positions of every card waiting for a
	// correction, in the order the corrects fill them (MisreadAt first).
	MisreadsAt []int `json:"misreads_at,omitempty"`
	// SetAside are the cards out of the shoe the table cannot use,
	// gathered while it is paused, in the order drawn: the dealer puts
	// them aside together, and the supervisor's resume (or a void) deals
	// with them all at once (machine_aside.go). Each is booked as dealt.
	SetAside []string `json:"set_aside,omitempty"`
	Alarms   []Alarm  `json:"alarms,omitempty"`
	Rounds   int      `json:"rounds"`
	// Timer is the countdown the table is running (betting, insurance, a
	// decision, the pause after a settlement), or the one stopped by a pause.
	Timer *TimerView `json:"timer,omitempty"`
}

// TimerView is a countdown for the dealer, the players and the video.
type TimerView struct {
	// Name is last_call, bets_deadline, insurance, decision or next.
	Name string `json:"name"`
	// Deadline is when it fires; zero while stopped.
	Deadline time.Time `json:"deadline,omitzero"`
	// LeftMS is the time left when the snapshot was taken.
	LeftMS int64 `json:"left_ms"`
	// Stopped is set while the table is paused: the time left is kept and
	// given back (at least Options.ResumeGrace) on resume.
	Stopped bool `json:"stopped,omitempty"`
}

// Kind implements Body: a state snapshot goes to the retained state topic.
func (*State) Kind() string { return "state" }

// ShoeState is the shoe in play.
type ShoeState struct {
	ID          string `json:"id,omitempty"`
	Decks       int    `json:"decks"`
	Dealt       int    `json:"dealt"`
	CutCard     bool   `json:"cut_card"`
	BurnPending int    `json:"burn_pending,omitempty"`
	// Booked is how many cards the integrity book holds for this shoe
	// (every card out of it that kept its composition).
	Booked int `json:"booked,omitempty"`
}
