package round

import "github.com/livetable/livetable/table/card"

// maxHandCards bounds a hand: 21 aces of a 16-deck shoe then a bust card.
// A fixed array keeps hands allocation-free.
const maxHandCards = 22

// cards is a small fixed-capacity card list.
type cards struct {
	c    [maxHandCards]card.Card
	n    uint8
	hard uint8 // sum with aces as 1
	aces uint8
	// best and soft are the hand's total, kept as cards arrive: the total
	// is read many times per card (events, decisions, the dealer's rule,
	// settlement), and its soft test is a branch the card decides.
	best uint8
	soft bool
}

func (cs *cards) add(c card.Card) bool {
	if int(cs.n) >= maxHandCards {
		return false
	}
	cs.c[cs.n] = c
	cs.n++
	v := c.Value()
	cs.hard += uint8(v)
	if v == 1 {
		cs.aces++
	}
	best := cs.hard
	cs.soft = cs.aces > 0 && best <= 11
	if cs.soft {
		best += 10
	}
	cs.best = best
	return true
}

// first makes c the only card of an empty list: what add gives it,
// without add's arithmetic (every initial deal of a lone player).
func (cs *cards) first(c card.Card) {
	v := uint8(c.Value())
	cs.c[0], cs.n, cs.hard = c, 1, v
	if v == 1 {
		cs.aces, cs.best, cs.soft = 1, 11, true
	} else {
		cs.aces, cs.best, cs.soft = 0, v, false
	}
}

// second adds c to a list of one card: what add gives it, without add's
// room check and indexing (every initial deal of a lone player).
func (cs *cards) second(c card.Card) {
	v := uint8(c.Value())
	cs.c[1], cs.n = c, 2
	cs.hard += v
	if v == 1 {
		cs.aces++
	}
	cs.soft = cs.aces > 0 && cs.hard <= 11
	cs.best = cs.hard
	if cs.soft {
		cs.best += 10
	}
}

// total is the best total and whether it is soft (an ace counted 11).
func (cs *cards) total() (int, bool) { return int(cs.best), cs.soft }

func (cs *cards) list() []card.Card { return cs.c[:cs.n] }

// Total returns the best blackjack total of the cards and whether it is soft
// (an Ace counted as 11).
func Total(cs []card.Card) (total int, soft bool) {
	hard, aces := 0, 0
	for _, c := range cs {
		v := c.Value()
		hard += v
		if v == 1 {
			aces++
		}
	}
	if aces > 0 && hard+10 <= 21 {
		return hard + 10, true
	}
	return hard, false
}

// hand is one player hand and the money on it.
type hand struct {
	cards
	base       int64 // the bet the hand was opened with (0 for a free split hand)
	stake      int64 // real money on the hand now: base + paid double
	free       int64 // free-bet amount (002)
	doubled    bool
	freeDouble bool
	split      bool // a hand of a split
	splitAces  bool // a split ace: one card only
	natural    bool
	done       bool
	surrender  bool
	outcome    Outcome
	net        int64
}

func (h *hand) bust() bool { return h.hard > 21 }

// Outcome is how a hand ended.
type Outcome uint8

// Hand outcomes, as named in scenario-format.md.
const (
	OutcomeNone Outcome = iota
	OutcomeBlackjack
	OutcomeWin
	OutcomePush
	OutcomeLose
	OutcomeBust
	OutcomeCharlie
	OutcomeSurrender
	OutcomeVoid
)

var outcomeNames = [...]string{"", "blackjack", "win", "push", "lose", "bust", "charlie", "surrender", "void"}

// String is the outcome's name on the wire (blackjack, win, push...).
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// MarshalText writes the outcome's name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }
