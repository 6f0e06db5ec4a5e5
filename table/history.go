package table

import (
	"errors"
	"sync"
	"time"

	"github.com/livetable/livetable/table/round"
)

// RoundRecord is one round as game recall shows it: every event with its
// time (cards, decisions, insurance, the dealer's hand) and the settlement.
type RoundRecord struct {
	Code       string            `json:"code"`
	Start      time.Time         `json:"start"`
	End        time.Time         `json:"end,omitzero"`
	Events     []Event           `json:"events"`
	Settlement *round.Settlement `json:"settlement,omitempty"`
}

// Done reports whether the round was settled (or voided).
func (r *RoundRecord) Done() bool { return r.Settlement != nil }

// History keeps the most recent rounds for game recall (the console and
// `tablectl`). It is fed every event, live (a subscriber) and replayed at
// start (Options.Replayed), and is safe for concurrent use.
type History struct {
	mu     sync.Mutex // guards the following
	max    int
	rounds []*RoundRecord // oldest first
	last   uint64         // highest event Seq added: a replayed event may come twice
}

// NewHistory keeps up to max rounds.
func NewHistory(max int) *History {
	if max <= 0 {
		max = 100
	}
	return &History{max: max}
}

// Add records one event; events outside a round are ignored.
func (h *History) Add(ev Event) {
	if ev.Round == "" {
		return
	}
	if _, ok := ev.Body.(*State); ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Seq != 0 {
		if ev.Seq <= h.last {
			return
		}
		h.last = ev.Seq
	}
	var r *RoundRecord
	if n := len(h.rounds); n > 0 && h.rounds[n-1].Code == ev.Round {
		r = h.rounds[n-1]
	} else {
		r = &RoundRecord{Code: ev.Round, Start: ev.Time}
		h.rounds = append(h.rounds, r)
		if len(h.rounds) > h.max {
			h.rounds = append(h.rounds[:0], h.rounds[len(h.rounds)-h.max:]...)
		}
	}
	r.Events = append(r.Events, ev)
	if re, ok := ev.Body.(round.Event); ok && re.Type == round.EvSettled {
		r.Settlement = re.Settlement
		r.End = ev.Time
	}
}

// Recent returns up to n rounds, newest first.
func (h *History) Recent(n int) []RoundRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []RoundRecord
	for i := len(h.rounds) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, *h.rounds[i])
	}
	return out
}

// ErrNoRound is returned for a round code the history does not hold.
var ErrNoRound = errors.New("table: no such round in the history")

// Round returns the most recent round with this code.
func (h *History) Round(code string) (RoundRecord, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.rounds) - 1; i >= 0; i-- {
		if h.rounds[i].Code == code {
			return *h.rounds[i], nil
		}
	}
	return RoundRecord{}, ErrNoRound
}

// Run feeds the history from a subscription until it is closed.
func (h *History) Run(events <-chan Event) {
	for ev := range events {
		h.Add(ev)
	}
}
