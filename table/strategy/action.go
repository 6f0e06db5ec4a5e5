package strategy

import (
	"fmt"

	"github.com/livetable/livetable/table/card"
)

// Action is what the player does with a hand.
type Action uint8

// The four actions of the games (no surrender in any of them).
const (
	Stand Action = iota
	Hit
	Double
	Split
)

// String returns "stand", "hit", "double" or "split", the spelling of the
// scenario files' decisions.
func (a Action) String() string {
	switch a {
	case Stand:
		return "stand"
	case Hit:
		return "hit"
	case Double:
		return "double"
	case Split:
		return "split"
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// Situation is everything a total-dependent table looks at. The engine fills
// it from the hand and the rule set; the Can* fields say which actions are
// legal now, so Decide never answers with one that is not.
type Situation struct {
	Total     int  // best hand total (aces count 11 where that does not bust)
	Soft      bool // an ace counts 11 in Total
	PairValue int  // 1..10 when the hand is two cards of equal value, else 0
	Cards     int  // number of cards in the hand
	Up        int  // dealer up card value, 1 (ace) .. 10
	CanDouble bool // doubling is legal now
	CanSplit  bool // splitting is legal now
	// FreeDouble says the double offered now is free (002: hard 9-11 on
	// two cards); the table's free-hard row is used when it has one.
	FreeDouble bool
	// FreeSplit says the split offered now is free (002: non-ten pairs);
	// the table's free-pair row is used when it has one.
	FreeSplit bool
}

// HandSituation fills Total, Soft, PairValue, Cards and Up from card values
// (1 for an ace, 10 for tens and pictures) of the hand and the dealer's up
// card. PairValue is set for any two cards of equal value: the caller sets
// CanSplit (and the other Can*/Free* fields) from the rules, and Decide
// falls back to the totals when a split is not allowed. It does not
// allocate.
func HandSituation(values []int, up int) Situation {
	s := Situation{Cards: len(values), Up: up}
	ace := false
	for _, v := range values {
		s.Total += v
		if v == 1 {
			ace = true
		}
	}
	if ace && s.Total+10 <= 21 {
		s.Total += 10
		s.Soft = true
	}
	if len(values) == 2 && values[0] == values[1] && values[0] >= 1 && values[0] <= 10 {
		s.PairValue = values[0]
	}
	return s
}

// SituationOf is HandSituation for cards as the engine holds them. Invalid
// cards count as value 0, so a hand holding one is never a pair. It does
// not allocate.
func SituationOf(hand []card.Card, up card.Card) Situation {
	var buf [24]int
	values := buf[:0]
	for _, c := range hand {
		v := 0
		if c.Rank.Valid() {
			v = c.Value()
		}
		if len(values) == len(buf) {
			break // no legal hand has this many cards
		}
		values = append(values, v)
	}
	upValue := 0
	if up.Rank.Valid() {
		upValue = up.Value()
	}
	s := HandSituation(values, upValue)
	s.Cards = len(hand)
	return s
}
