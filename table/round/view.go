package round

import (
	"strconv"

	"github.com/livetable/livetable/table/card"
)

// View is a snapshot of the round for the state topic and the console. In
// a common-draw game a seat shows its shared cards and the number of
// players on them, not every player's hands.
type View struct {
	ID     string     `json:"id"`
	Phase  string     `json:"phase"`
	Dealer HandView   `json:"dealer"`
	Seats  []SeatView `json:"seats"`
	// Next is what the dealer must do now, for the console's instruction line.
	Next string `json:"next"`
}

// SeatView is one seat.
type SeatView struct {
	Seat    int         `json:"seat"`
	Player  string      `json:"player,omitempty"`
	Players int         `json:"players"`
	Cards   []card.Card `json:"cards"` // the seat's shared card sequence
	Hands   []HandView  `json:"hands,omitempty"`
	Bet     int64       `json:"bet"`
}

// HandView is one hand.
type HandView struct {
	Cards   []card.Card `json:"cards"`
	Total   int         `json:"total"`
	Soft    bool        `json:"soft,omitempty"`
	Stake   int64       `json:"stake,omitempty"`
	Free    int64       `json:"free,omitempty"`
	Doubled bool        `json:"doubled,omitempty"`
	Done    bool        `json:"done,omitempty"`
	// Hidden counts face-down cards not shown (the dealer's hole card).
	Hidden int `json:"hidden,omitempty"`
}

// Snapshot returns a copy of the round's visible state.
func (r *Round) Snapshot() View {
	v := View{ID: r.id, Phase: r.phase.String(), Next: r.Next()}
	dc := append([]card.Card(nil), r.dealer.list()...)
	hidden := 0
	if r.holeDealt && r.phase < PhaseDealer && len(dc) >= 2 {
		dc = dc[:1]
		hidden = 1
	}
	t, soft := Total(dc)
	v.Dealer = HandView{Cards: dc, Total: t, Soft: soft, Hidden: hidden}
	for i := range r.boxes {
		bx := &r.boxes[i]
		sv := SeatView{Seat: bx.seat, Players: len(bx.players), Cards: append([]card.Card(nil), bx.stream...)}
		if len(bx.players) > 0 {
			p := &bx.players[0]
			sv.Player, sv.Bet = p.id, p.main
			if len(bx.players) <= 16 {
				for k := 0; k < p.n; k++ {
					h := &p.hands[k]
					t, soft := h.total()
					sv.Hands = append(sv.Hands, HandView{
						Cards: append([]card.Card(nil), h.list()...), Total: t, Soft: soft,
						Stake: h.stake, Free: h.free, Doubled: h.doubled, Done: h.done,
					})
				}
			}
		}
		v.Seats = append(v.Seats, sv)
	}
	return v
}

// NeedsCard reports whether the round waits for a card, and for whom: the
// seat (0 for the dealer) and whether it is the hole card.
func (r *Round) NeedsCard() (need bool, seat int, hole bool) {
	switch r.phase {
	case PhaseDealing:
		t := r.dealTarget(r.dealPos)
		if t < 0 {
			return true, 0, r.dealer.n == 1 && r.rs.HoleCard
		}
		return true, r.boxes[t].seat, false
	case PhasePlay:
		if len(r.queue) > 0 {
			return true, r.boxes[r.queue[0]].seat, false
		}
	case PhaseDealer:
		if r.dealerNeeds {
			return true, 0, false
		}
	}
	return false, 0, false
}

// Next is the dealer's instruction: what to do now.
func (r *Round) Next() string {
	if need, seat, hole := r.NeedsCard(); need {
		switch {
		case hole:
			return "hole card to dealer"
		case seat == 0:
			return "card to dealer"
		default:
			return "card to seat " + strconv.Itoa(seat)
		}
	}
	switch r.phase {
	case PhaseInsurance:
		return "wait: insurance offered"
	case PhasePlay:
		if s := r.FirstAwaiting(); s != 0 {
			return "wait: seat " + strconv.Itoa(s) + " to decide"
		}
	case PhaseSettled:
		return "collect and pay"
	case PhaseNew:
		return "wait for bets"
	}
	return "wait"
}
