package console

import (
	"fmt"
	"sync"
	"time"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

// RoundSummary is one line of game recall.
type RoundSummary struct {
	// Code is the round code (its start time in GMT, "#HH:MM:SS").
	Code  string    `json:"code"`
	Start time.Time `json:"start"`
	// End is when the round was settled or voided, zero while in play.
	End  time.Time `json:"end,omitzero"`
	Game string    `json:"game"`
	// Settled is true once the round is over (settled or void).
	Settled bool `json:"settled"`
	Void    bool `json:"void"`
	// Result is the settlement in one line ("dealer 18; seat 1 ... net +500").
	Result string `json:"result"`
	// Net is the players' net over the round in minor units (+ = the
	// players won, so the house lost that much).
	Net int64 `json:"net"`
	// Cards are the round's cards in the order they came out of the shoe.
	Cards []card.Card `json:"cards"`
}

// CardRecord is one card of a round: when, and where it went.
type CardRecord struct {
	Time time.Time `json:"time"`
	Card card.Card `json:"card,omitzero"`
	// Seat is 0 for the dealer; Hand is the 1-based hand of the seat.
	Seat int  `json:"seat"`
	Hand int  `json:"hand,omitempty"`
	Hole bool `json:"hole,omitempty"`
	// Total is the hand's total after the card.
	Total int  `json:"total,omitempty"`
	Soft  bool `json:"soft,omitempty"`
}

// DecisionRecord is one player decision or insurance answer.
type DecisionRecord struct {
	Time time.Time `json:"time"`
	Seat int       `json:"seat"`
	Hand int       `json:"hand,omitempty"`
	// Action is hit, stand, double, split, surrender, or "insurance" /
	// "no insurance".
	Action string `json:"action"`
	// Auto is true when the table decided on a timeout.
	Auto bool `json:"auto,omitempty"`
}

// Note is anything else said about a round: a pause, a resume, an alarm.
type Note struct {
	Time time.Time `json:"time"`
	Text string    `json:"text"`
}

// RoundDetail is everything recalled of one round: every card with its
// time, the decisions, and the wagers and payouts in the settlement.
type RoundDetail struct {
	RoundSummary
	CardLog   []CardRecord     `json:"card_log"`
	Decisions []DecisionRecord `json:"decisions"`
	Notes     []Note           `json:"notes,omitempty"`
	// Settlement has every wager and its net; nil while in play.
	Settlement *round.Settlement `json:"settlement,omitempty"`
}

// History is game recall kept in memory from the event stream: the last
// rounds the console saw. It is the console's Recall when the integrator
// gives none. Given to New as the Recall, it is the one the console feeds;
// set it as the controller's Options.Replayed too and it is seeded from the
// journal at start, so recall survives a restart (an event that arrives
// both ways is kept once, by its Seq). It is safe for concurrent use.
type History struct {
	keep int

	mu     sync.Mutex // guards the following
	rounds []*RoundDetail
	game   string
	last   uint64 // highest event Seq added: a replayed event may come twice
}

// NewHistory keeps the last keep rounds (at least 1).
func NewHistory(keep int) *History {
	return &History{keep: max(keep, 1)}
}

// Add records one table event.
func (h *History) Add(ev table.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Seq != 0 {
		if ev.Seq <= h.last {
			return
		}
		h.last = ev.Seq
	}
	switch b := ev.Body.(type) {
	case *table.State:
		h.game = b.Game
	case round.Event:
		h.addRoundLocked(ev, b)
	case table.Paused:
		h.noteLocked(ev, fmt.Sprintf("paused by %s: %s", b.By, b.Reason))
	case table.Resumed:
		h.noteLocked(ev, "resumed by "+b.By)
	case table.Alarm:
		h.noteLocked(ev, fmt.Sprintf("alarm %s: %s", b.Code, b.Message))
	}
}

// AddEarlier seeds the history with rounds older than those it holds:
// replay calls its argument with the events of an earlier stretch of the
// journal (table.ReplayEarlierEvents), which may run while the live table
// adds newer rounds. The rounds it finds go before the ones held (a round
// already held is kept as it is), the oldest dropped beyond keep.
func (h *History) AddEarlier(replay func(add func(table.Event)) error) error {
	older := NewHistory(h.keep)
	if err := replay(older.Add); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	merged := make([]*RoundDetail, 0, min(h.keep, len(older.rounds)+len(h.rounds)))
	for _, r := range older.rounds {
		if h.findLocked(r.Code) == nil {
			merged = append(merged, r)
		}
	}
	merged = append(merged, h.rounds...)
	if len(merged) > h.keep {
		merged = merged[len(merged)-h.keep:]
	}
	h.rounds = merged
	if h.game == "" {
		h.game = older.game
	}
	return nil
}

func (h *History) findLocked(code string) *RoundDetail {
	for i := len(h.rounds) - 1; i >= 0; i-- {
		if h.rounds[i].Code == code {
			return h.rounds[i]
		}
	}
	return nil
}

func (h *History) noteLocked(ev table.Event, text string) {
	if ev.Round == "" {
		return
	}
	if r := h.findLocked(ev.Round); r != nil {
		r.Notes = append(r.Notes, Note{Time: ev.Time, Text: text})
	}
}

func (h *History) addRoundLocked(ev table.Event, e round.Event) {
	if ev.Round == "" {
		return
	}
	r := h.findLocked(ev.Round)
	if e.Type == round.EvRoundStarted || r == nil {
		r = &RoundDetail{RoundSummary: RoundSummary{Code: ev.Round, Start: ev.Time, Game: h.game}}
		h.rounds = append(h.rounds, r)
		if len(h.rounds) > h.keep {
			h.rounds = append(h.rounds[:0], h.rounds[len(h.rounds)-h.keep:]...)
		}
	}
	switch e.Type {
	case round.EvCardDealt:
		r.CardLog = append(r.CardLog, CardRecord{Time: ev.Time, Card: e.Card, Seat: int(e.Seat), Hand: int(e.Hand),
			Hole: e.Hole, Total: int(e.Total), Soft: e.Soft})
		if e.Card.Valid() {
			r.Cards = append(r.Cards, e.Card)
		}
	case round.EvHoleRevealed:
		// The hole card came out face down earlier; its record learns the
		// card now, and it takes its place in the shoe order.
		for i := range r.CardLog {
			if c := &r.CardLog[i]; c.Hole && !c.Card.Valid() {
				c.Card = e.Card
				r.Cards = cardsInOrder(r.CardLog)
				break
			}
		}
	case round.EvDecisionMade:
		r.Decisions = append(r.Decisions, DecisionRecord{Time: ev.Time, Seat: int(e.Seat), Hand: int(e.Hand),
			Action: e.Action.String(), Auto: e.Auto})
	case round.EvInsuranceAnswered:
		a := "no insurance"
		if e.Flag {
			a = "insurance"
		}
		r.Decisions = append(r.Decisions, DecisionRecord{Time: ev.Time, Seat: int(e.Seat), Action: a, Auto: e.Auto})
	case round.EvSettled:
		r.End, r.Settled = ev.Time, true
		if s := e.Settlement(); s != nil {
			r.Settlement = s.Clone()
			r.Void, r.Net, r.Result = s.Void, s.Net, s.String()
		}
	}
}

// cardsInOrder lists the known cards of a card log, in shoe order.
func cardsInOrder(log []CardRecord) []card.Card {
	out := make([]card.Card, 0, len(log))
	for _, c := range log {
		if c.Card.Valid() {
			out = append(out, c.Card)
		}
	}
	return out
}

// Recent implements Recall: up to n rounds, the most recent first.
func (h *History) Recent(n int) ([]RoundSummary, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]RoundSummary, 0, min(n, len(h.rounds)))
	for i := len(h.rounds) - 1; i >= 0 && len(out) < n; i-- {
		s := h.rounds[i].RoundSummary
		s.Cards = append([]card.Card(nil), s.Cards...)
		out = append(out, s)
	}
	return out, nil
}

// Round implements Recall.
func (h *History) Round(code string) (RoundDetail, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.findLocked(code)
	if r == nil {
		return RoundDetail{}, fmt.Errorf("%w: %q", ErrNoRound, code)
	}
	d := *r
	d.Cards = append([]card.Card(nil), r.Cards...)
	d.CardLog = append([]CardRecord(nil), r.CardLog...)
	d.Decisions = append([]DecisionRecord(nil), r.Decisions...)
	d.Notes = append([]Note(nil), r.Notes...)
	if r.Settlement != nil {
		d.Settlement = r.Settlement.Clone()
	}
	return d, nil
}

// AlarmRecord is one entry of the supervisor's alarm log.
type AlarmRecord struct {
	Time  time.Time `json:"time"`
	Round string    `json:"round,omitempty"`
	table.Alarm
}

// alarmLog keeps the last alarms, newest last.
type alarmLog struct {
	keep int

	mu   sync.Mutex // guards list
	list []AlarmRecord
}

func newAlarmLog(keep int) *alarmLog { return &alarmLog{keep: keep} }

func (l *alarmLog) add(ev table.Event) {
	a, ok := ev.Body.(table.Alarm)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, AlarmRecord{Time: ev.Time, Round: ev.Round, Alarm: a})
	if len(l.list) > l.keep {
		l.list = append(l.list[:0], l.list[len(l.list)-l.keep:]...)
	}
}

// recent returns the alarms, newest first.
func (l *alarmLog) recent() []AlarmRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]AlarmRecord, 0, len(l.list))
	for i := len(l.list) - 1; i >= 0; i-- {
		out = append(out, l.list[i])
	}
	return out
}
