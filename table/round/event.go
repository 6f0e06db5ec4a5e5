package round

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/sidebets"
)

// Action is a player's decision.
type Action uint8

// The decisions.
const (
	ActNone Action = iota
	ActHit
	ActStand
	ActDouble
	ActSplit
	ActSurrender
)

var actionNames = [...]string{"", "hit", "stand", "double", "split", "surrender"}

// String is the action's name on the wire (hit, stand, double...).
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// MarshalText writes the action's name.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// ParseAction reads "hit", "stand", "double", "split", "surrender".
func ParseAction(s string) (Action, error) {
	for i, n := range actionNames {
		if i > 0 && n == s {
			return Action(i), nil
		}
	}
	return ActNone, fmt.Errorf("%w: unknown action %q", ErrIllegalAction, s)
}

// Options is the set of actions open to a hand, as a bit set (no allocation).
type Options uint8

// Has reports whether a is in the set.
func (o Options) Has(a Action) bool { return o&(1<<a) != 0 }

func (o *Options) add(a Action) { *o |= 1 << a }

// List returns the actions in the set.
func (o Options) List() []Action {
	var out []Action
	for a := ActHit; a <= ActSurrender; a++ {
		if o.Has(a) {
			out = append(out, a)
		}
	}
	return out
}

// String lists the actions offered, for logs and the dealer's line.
func (o Options) String() string {
	var names []string
	for _, a := range o.List() {
		names = append(names, a.String())
	}
	return strings.Join(names, ",")
}

// MarshalJSON writes the options as a list of names.
func (o Options) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('[')
	for i, a := range o.List() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + a.String() + `"`)
	}
	b.WriteByte(']')
	return []byte(b.String()), nil
}

// EventKind says what an Event reports.
type EventKind uint8

// The event kinds.
const (
	EvNone EventKind = iota
	// EvRoundStarted: bets are closed and the deal begins.
	EvRoundStarted
	// EvCardDealt: a card went to a seat's hand or the dealer (Seat 0).
	EvCardDealt
	// EvInsuranceOffered: the dealer shows an Ace; answers are awaited.
	EvInsuranceOffered
	// EvInsuranceAnswered: one player's insurance answer.
	EvInsuranceAnswered
	// EvPeeked: the dealer checked the hole card; Blackjack tells the result.
	EvPeeked
	// EvDecisionRequested: a player's hand waits for a decision (Options).
	EvDecisionRequested
	// EvDecisionMade: a decision was applied (Auto when by timeout).
	EvDecisionMade
	// EvHandDone: a hand is finished (stood, bust, 21, charlie, doubled).
	EvHandDone
	// EvHoleRevealed: the dealer turns the hole card.
	EvHoleRevealed
	// EvDealerDone: the dealer's hand is complete.
	EvDealerDone
	// EvSettled: the round is settled; Settlement has every wager.
	EvSettled
)

var eventNames = [...]string{"", "round_started", "card_dealt", "insurance_offered", "insurance_answered",
	"peeked", "decision_requested", "decision_made", "hand_done", "hole_revealed", "dealer_done", "settled"}

// String is the event type's name on the wire (card_dealt, settled...).
func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Note is what an event reports, the Event's own fields: a flat
// 24-byte value without pointers, which a handler fills in place in the
// round's output (note): the player concerned is named by his slot (Who),
// and the settlement of EvSettled is the round's own; the Event's context
// names them (Event.Player, Event.Settlement).
type Note struct {
	Type    EventKind `json:"-"`
	Hole    bool      `json:"hole,omitempty"` // the card is the dealer's face-down card
	Soft    bool      `json:"soft,omitempty"`
	Action  Action    `json:"action,omitempty"`
	Options Options   `json:"options,omitzero"`
	Auto    bool      `json:"auto,omitempty"` // applied by timeout
	Outcome Outcome   `json:"outcome,omitempty"`
	Flag    bool      `json:"flag,omitempty"` // peek: dealer has BJ; insurance: taken
	Card    card.Card `json:"card,omitzero"`
	// Small integers are small types: a note is 24 bytes (the seat an int8:
	// seats are 1..7), and an Event, a note and its context, 32.
	Hand  int8 `json:"hand,omitempty"` // 1-based hand of the seat
	Total int8 `json:"total,omitempty"`
	// Cards is the number of cards in the hand (decision requests), and
	// PairValue the value of a two-card pair (0 when not a pair), so a
	// player client can look up its strategy without the state topic.
	Cards     int8 `json:"cards,omitempty"`
	PairValue int8 `json:"pair_value,omitempty"`
	// Up is the dealer's up-card value (decision requests).
	Up   int8 `json:"up,omitempty"`
	Seat int8 `json:"seat,omitempty"` // 0 = dealer or table-wide
	// Players counts the players concerned (common draw: one request for many).
	Players int32 `json:"players,omitempty"`
	// Who is 1 + the slot of the player concerned (his bet's index in
	// Start's bets), 0 for none: Event's Player.
	Who int32 `json:"-"`
}

// eventCtx is what a round's events share: the ids of its players by
// slot and its settlement. It is never changed once made: a round whose
// players are not the last one's gets a new one (roster), so an event
// keeps its player after the next round starts. The settlement it holds
// is the round's own, rewritten by the next round: the table publishes a
// settled event with a copy (WithSettlement).
type eventCtx struct {
	players    []string // by slot: Start's bets' players ("" for a slot with no player)
	settlement *Settlement
}

// Event is one thing the round did, self-contained for publication (the
// table's bodies, the wire, the journal, the console): a Note and the
// context that names its player and its settlement, read when the event
// is encoded (Player, Settlement). Start, Apply and the other inputs
// append Events to the caller's slice; the table publishes each as it is.
// One pointer besides the note: the round writes an event as its note
// and one pointer store, where a player's id and a settlement pointer of
// its own took three stores with their write-barrier checks (and a
// lookup of the id) per event.
type Event struct {
	// Note is what the round reported; its fields are the event's own
	// (e.Seat, e.Card ...).
	Note
	ctx *eventCtx
}

// NewEvent returns note n as an Event for player (none when "") with
// settlement s (read for EvSettled only): an event made outside a round,
// as tests and the table's summaries make them.
func NewEvent(n Note, player string, s *Settlement) Event {
	c := &eventCtx{settlement: s}
	if player != "" {
		n.Who = 1
		c.players = []string{player}
	}
	return Event{Note: n, ctx: c}
}

// Player is the id of the player the event concerns ("" for none).
func (e Event) Player() string {
	if e.Who <= 0 || e.ctx == nil || int(e.Who) > len(e.ctx.players) {
		return ""
	}
	return e.ctx.players[e.Who-1]
}

// Settlement is the settlement an EvSettled event carries (nil for any
// other event).
func (e Event) Settlement() *Settlement {
	if e.Type != EvSettled || e.ctx == nil {
		return nil
	}
	return e.ctx.settlement
}

// WithSettlement returns the event with settlement s in place of its own
// (the table publishes a copy of the round's, or a crowd's summary); the
// player it names is unchanged.
func (e Event) WithSettlement(s *Settlement) Event {
	c := &eventCtx{settlement: s}
	if e.ctx != nil {
		c.players = e.ctx.players
	}
	e.ctx = c
	return e
}

// eventJSON is Event's JSON: the note's fields, then the player and the
// settlement, as the Event with fields of its own wrote them.
type eventJSON struct {
	Note
	Player     string      `json:"player,omitempty"`
	Settlement *Settlement `json:"settlement,omitempty"`
}

// MarshalJSON writes the note's fields with the player and the
// settlement the event names.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(eventJSON{Note: e.Note, Player: e.Player(), Settlement: e.Settlement()})
}

// roster makes the round's event context name the players of the round
// in play by slot (SlotPlayer), unless the context in use names the same:
// events made in an earlier round keep the context they have, never
// changed.
func (r *Round) roster() {
	r.soloCtx = false
	ids := r.rosterBuf[:0]
	for slot := range r.slots {
		_, id, _ := r.SlotPlayer(slot)
		ids = append(ids, id)
	}
	r.rosterBuf = ids
	if c := r.ctx; c != nil && slices.Equal(c.players, ids) {
		return
	}
	r.ctx = &eventCtx{players: slices.Clone(ids), settlement: &r.settle}
}

// rosterSolo is roster for a round of one player, id, in slot 0, which
// startSolo calls when the lone player is not the last round's.
func (r *Round) rosterSolo(id string) {
	if c := r.ctx; c == nil || len(c.players) != 1 || c.players[0] != id {
		r.ctx = &eventCtx{players: []string{id}, settlement: &r.settle}
	}
	r.soloCtx = true
}

// keeps reports whether the caller keeps notes of kind k (KeepEvents):
// a caller that does not is spared building them. A handler writes a
// note as
//
//	if r.keeps(k) {
//		e := r.note(k)
//		e.Seat, ... = ...
//	}
//
// which skips the filling with the same test that skips the note, where
// a nil note for a dropped kind took a second test per note.
func (r *Round) keeps(k EventKind) bool { return r.drop&(1<<k) == 0 }

// note appends an event of kind k, one the caller keeps, to the events
// of the input being applied (r.out), in the round's context, and returns
// its note for the caller to fill in place. Appending a composite literal makes the compiler assemble the
// note on the stack and copy it with wide loads, which stall on store
// forwarding: filling the slot in place costs half as much, and a round
// appends a dozen notes.
func (r *Round) note(k EventKind) *Note {
	// Only the length is stored while the slice has room (r.out =
	// r.out[:n+1] stores nothing else): the pointer store of a whole
	// append would take a write-barrier check per note. The full
	// slice's step is out of line (emitGrow): on the path with room the
	// compiler knows n < cap(out), and the slot takes no bounds check.
	out := r.out
	if n := len(out); n < cap(out) {
		r.out = r.out[:n+1]
		e := &out[:n+1][n]
		e.ctx = r.ctx
		e.Note = Note{Type: k}
		return &e.Note
	}
	return r.emitGrow(k)
}

// emitGrow is note when r.out is full: it grows r.out as append does.
func (r *Round) emitGrow(k EventKind) *Note {
	r.out = append(r.out, Event{Note: Note{Type: k}, ctx: r.ctx})
	return &r.out[len(r.out)-1].Note
}

// KeepEvents makes Start and Apply report only events of the given kinds;
// with no kinds, every event (the default). A caller that reads few events
// (a simulator reads the decision requests) is spared building the rest.
// The round itself, its settlement and its errors do not change.
func (r *Round) KeepEvents(kinds ...EventKind) {
	r.drop = 0
	if len(kinds) == 0 {
		return
	}
	r.drop = ^uint32(0)
	for _, k := range kinds {
		r.drop &^= 1 << k
	}
}

// Kind names the event on the wire (table.Body).
func (e Event) Kind() string { return e.Type.String() }

// String is a readable one-line form for the console log.
func (e Event) String() string {
	who := "dealer"
	if e.Seat != 0 {
		who = fmt.Sprintf("seat %d", e.Seat)
		if e.Hand > 1 {
			who += fmt.Sprintf(" hand %d", e.Hand)
		}
	}
	switch e.Type {
	case EvCardDealt:
		if e.Hole && !e.Card.Valid() {
			return "hole card to dealer"
		}
		s := fmt.Sprintf("%s to %s", e.Card, who)
		if e.Hole {
			s += " (hole)"
		}
		return s + fmt.Sprintf(" = %d%s", e.Total, softMark(e.Soft))
	case EvDecisionRequested:
		return fmt.Sprintf("%s to decide (%s)", who, e.Options)
	case EvDecisionMade:
		s := fmt.Sprintf("%s: %s", who, e.Action)
		if e.Auto {
			s += " (timeout)"
		}
		return s
	case EvHandDone:
		return fmt.Sprintf("%s done at %d", who, e.Total)
	case EvPeeked:
		if e.Flag {
			return "dealer peeks: blackjack"
		}
		return "dealer peeks: no blackjack"
	case EvInsuranceAnswered:
		if e.Flag {
			return fmt.Sprintf("%s takes insurance", who)
		}
		return fmt.Sprintf("%s declines insurance", who)
	case EvHoleRevealed:
		return fmt.Sprintf("dealer turns %s = %d%s", e.Card, e.Total, softMark(e.Soft))
	case EvDealerDone:
		return fmt.Sprintf("dealer stands at %d", e.Total)
	case EvSettled:
		if s := e.Settlement(); s != nil {
			return s.String()
		}
	}
	return e.Type.String()
}

func softMark(soft bool) string {
	if soft {
		return " soft"
	}
	return ""
}

// Settlement is the money of a round: per player, per hand and per wager,
// the stake, the outcome and the net amount (+ = the player wins), in minor
// units.
type Settlement struct {
	Void     bool         `json:"void"`
	Reason   string       `json:"reason,omitempty"`
	Dealer   DealerResult `json:"dealer"`
	Seats    []SeatResult `json:"seats"`
	Net      int64        `json:"net"`      // sum over all players
	Rounding int64        `json:"rounding"` // cents rounded down on odd 3:2 payouts
	// Players and Chunks are set on a crowd's summary (table package):
	// Seats is then empty and the players' results follow in Chunks
	// parts.
	Players int `json:"players,omitempty"`
	Chunks  int `json:"chunks,omitempty"`
}

// DealerResult is the dealer's final hand.
type DealerResult struct {
	Cards     []card.Card `json:"cards"`
	Total     int         `json:"total"`
	Blackjack bool        `json:"blackjack"`
	Bust      bool        `json:"bust"`
	Peeked    bool        `json:"peeked_blackjack"`
}

// SeatResult is one player's money on one seat (a Bet Behind player has a
// SeatResult of his own with Behind set).
type SeatResult struct {
	Seat      int          `json:"seat"`
	Player    string       `json:"player,omitempty"`
	Behind    bool         `json:"behind,omitempty"`
	Hands     []HandResult `json:"hands"`
	MainNet   int64        `json:"main_net"`
	Side      []SideResult `json:"side,omitempty"`
	Insurance *Wager       `json:"insurance,omitempty"`
	Net       int64        `json:"total_net"`
	// Slot is the player's slot in the round (his bet's index in
	// Start's bets): a crowd's settlement is published by slot.
	Slot int `json:"-"`
}

// HandResult is one hand's cards and money. The round reuses its storage
// from round to round and setHand writes every field: a new field must be
// written there too.
type HandResult struct {
	Cards   []card.Card `json:"cards"`
	Total   int         `json:"total"`
	Stake   int64       `json:"stake"`
	Free    int64       `json:"free"`
	Doubled bool        `json:"doubled"`
	Outcome Outcome     `json:"outcome"`
	Net     int64       `json:"net"`
}

// SideResult is one side bet's settlement.
type SideResult struct {
	Kind   sidebets.Kind   `json:"kind"`
	Stake  int64           `json:"stake"`
	Result sidebets.Result `json:"result"`
	Net    int64           `json:"net"`
}

// Wager is a stake and its net result.
type Wager struct {
	Stake int64 `json:"stake"`
	Net   int64 `json:"net"`
}

// String is a readable summary of the settlement for the console log.
func (s *Settlement) String() string {
	if s.Void {
		return "round void: every initial wager returned (" + s.Reason + ")"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "dealer %d", s.Dealer.Total)
	switch {
	case s.Dealer.Blackjack:
		b.WriteString(" blackjack")
	case s.Dealer.Bust:
		b.WriteString(" bust")
	}
	for _, st := range s.Seats {
		fmt.Fprintf(&b, "; seat %d", st.Seat)
		if st.Behind {
			b.WriteString(" behind")
		}
		for _, h := range st.Hands {
			fmt.Fprintf(&b, " %s %d %s %+d", cardsString(h.Cards), h.Total, h.Outcome, h.Net)
		}
		fmt.Fprintf(&b, " net %+d", st.Net)
	}
	return b.String()
}

func cardsString(cs []card.Card) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.String())
	}
	return b.String()
}

// Clone returns a deep copy, safe to hand to another goroutine: the
// round's own settlement is reused by the next round.
func (s *Settlement) Clone() *Settlement {
	c := *s
	c.Dealer.Cards = append([]card.Card(nil), s.Dealer.Cards...)
	c.Seats = make([]SeatResult, len(s.Seats))
	for i, st := range s.Seats {
		st.Hands = append([]HandResult(nil), st.Hands...)
		for j := range st.Hands {
			st.Hands[j].Cards = append([]card.Card(nil), st.Hands[j].Cards...)
		}
		st.Side = append([]SideResult(nil), st.Side...)
		if st.Insurance != nil {
			w := *st.Insurance
			st.Insurance = &w
		}
		c.Seats[i] = st
	}
	return &c
}
