// Package card holds the leaf values of the game: ranks, suits, cards, and
// the composition of a multi-deck shoe.
//
// The wire form of a card is two characters, rank then suit: "As", "Td",
// "7c". It is the form used by the shoe protocol's optical payload, the
// journal, the MQTT messages and the scenario files, so parsing and
// formatting live here once. The package imports nothing of the project and
// does no I/O, so every other package may depend on it.
package card

import (
	"errors"
	"fmt"
)

// Rank is a card rank, Ace (1) to King (13). The zero Rank is invalid.
type Rank uint8

// The thirteen ranks.
const (
	Ace Rank = iota + 1
	Two
	Three
	Four
	Five
	Six
	Seven
	Eight
	Nine
	Ten
	Jack
	Queen
	King
)

// NumRanks is the number of ranks in a suit.
const NumRanks = 13

const rankChars = "A23456789TJQK"

// Valid reports whether r is one of the thirteen ranks.
func (r Rank) Valid() bool {
	// One unsigned comparison: Rank(0)-1 wraps to 255. The engine checks
	// every card it is given.
	return r-Ace < NumRanks
}

// String returns the rank's wire character ("A", "2".."9", "T", "J", "Q", "K").
func (r Rank) String() string {
	if !r.Valid() {
		return fmt.Sprintf("Rank(%d)", uint8(r))
	}
	return rankChars[r-1 : r]
}

// Value is the blackjack value of the rank: 2-9 face value, 10 for tens and
// pictures, 1 for the Ace (hand totals decide whether it counts 11).
func (r Rank) Value() int {
	// min compiles to a conditional move: a branch on the rank would be
	// mispredicted on every fourth card of a simulated shoe.
	return min(int(r), 10)
}

// Suit is a card suit. The zero Suit is invalid.
type Suit uint8

// The four suits.
const (
	Spades Suit = iota + 1
	Hearts
	Diamonds
	Clubs
)

// NumSuits is the number of suits in a deck.
const NumSuits = 4

const suitChars = "shdc"

// Valid reports whether s is one of the four suits.
func (s Suit) Valid() bool { return s-Spades < NumSuits }

// Red reports whether the suit is red (hearts, diamonds). Perfect-pair
// paytables pay more for a pair of the same colour.
func (s Suit) Red() bool { return s == Hearts || s == Diamonds }

// String returns the suit's wire character: "s", "h", "d" or "c".
func (s Suit) String() string {
	if !s.Valid() {
		return fmt.Sprintf("Suit(%d)", uint8(s))
	}
	return suitChars[s-1 : s]
}

// Card is one playing card. The zero Card is invalid and is what parsers
// return alongside an error. Card is comparable and two bytes wide, so hands
// and shoes are plain slices with no allocation per card.
type Card struct {
	Rank Rank
	Suit Suit
}

// New returns the card of rank r and suit s.
func New(r Rank, s Suit) Card { return Card{Rank: r, Suit: s} }

// Valid reports whether c is a real card.
func (c Card) Valid() bool { return c.Rank.Valid() && c.Suit.Valid() }

// Value is the blackjack value of the card (Ace = 1).
func (c Card) Value() int { return c.Rank.Value() }

// Index is a dense index 0..51 (suit-major), for composition counters.
// It must only be called on a valid card.
func (c Card) Index() int { return int(c.Suit-1)*NumRanks + int(c.Rank-1) }

// FromIndex is the inverse of Index.
func FromIndex(i int) Card {
	return Card{Rank: Rank(i%NumRanks + 1), Suit: Suit(i/NumRanks + 1)}
}

// String returns the two-character wire form ("As", "Td").
func (c Card) String() string {
	if !c.Valid() {
		return "??"
	}
	return c.Rank.String() + c.Suit.String()
}

// MarshalText implements encoding.TextMarshaler, so cards appear in JSON as
// their wire form.
func (c Card) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("card: cannot marshal invalid card %d/%d", c.Rank, c.Suit)
	}
	return []byte{rankChars[c.Rank-1], suitChars[c.Suit-1]}, nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (c *Card) UnmarshalText(b []byte) error {
	p, err := ParseBytes(b)
	if err != nil {
		return err
	}
	*c = p
	return nil
}

// ErrSyntax is returned (wrapped) for a card string that is not rank+suit.
var ErrSyntax = errors.New("card: invalid card")

// Parse reads the wire form of a card. Ranks are "A23456789TJQK" (upper or
// lower case, "10" accepted for ten); suits are "shdc" (either case).
func Parse(s string) (Card, error) { return ParseBytes([]byte(s)) }

// ParseBytes is Parse on a byte slice; it does not allocate on success.
func ParseBytes(b []byte) (Card, error) {
	var r Rank
	var rest []byte
	switch {
	case len(b) == 3 && b[0] == '1' && b[1] == '0':
		r, rest = Ten, b[2:]
	case len(b) == 2:
		r, rest = rankOf(b[0]), b[1:]
	default:
		return Card{}, fmt.Errorf("%w %q: want rank+suit like \"As\" or \"Td\"", ErrSyntax, b)
	}
	if r == 0 {
		return Card{}, fmt.Errorf("%w %q: unknown rank", ErrSyntax, b)
	}
	s := suitOf(rest[0])
	if s == 0 {
		return Card{}, fmt.Errorf("%w %q: unknown suit", ErrSyntax, b)
	}
	return Card{Rank: r, Suit: s}, nil
}

// MustParse is Parse for tests and fixed tables; it panics on bad input.
func MustParse(s string) Card {
	c, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return c
}

// ParseList parses a list of wire-form cards.
func ParseList(ss []string) ([]Card, error) {
	out := make([]Card, len(ss))
	for i, s := range ss {
		c, err := Parse(s)
		if err != nil {
			return nil, fmt.Errorf("card %d: %w", i+1, err)
		}
		out[i] = c
	}
	return out, nil
}

func rankOf(b byte) Rank {
	switch b {
	case 'a':
		b = 'A'
	case 't':
		b = 'T'
	case 'j':
		b = 'J'
	case 'q':
		b = 'Q'
	case 'k':
		b = 'K'
	}
	for i := 0; i < len(rankChars); i++ {
		if rankChars[i] == b {
			return Rank(i + 1)
		}
	}
	return 0
}

func suitOf(b byte) Suit {
	if b >= 'A' && b <= 'Z' {
		b += 'a' - 'A'
	}
	for i := 0; i < len(suitChars); i++ {
		if suitChars[i] == b {
			return Suit(i + 1)
		}
	}
	return 0
}
