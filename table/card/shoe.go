package card

import (
	"errors"
	"fmt"
)

// DeckSize is the number of cards in one deck.
const DeckSize = 52

// ErrOverCount is returned when a card is taken from a Composition that has
// none of it left: in a real shoe that is a foreign card or a card read twice.
var ErrOverCount = errors.New("card: more of this card than the shoe holds")

// Composition counts the cards remaining in a shoe of N decks. It is a value
// type (an array), so copying it is cheap and needs no allocation: the
// combinatorial side-bet maths and the shoe integrity check both use it.
type Composition struct {
	counts [DeckSize]uint16
	total  int
}

// NewComposition returns the composition of a full shoe of decks decks.
func NewComposition(decks int) Composition {
	var c Composition
	for i := range c.counts {
		c.counts[i] = uint16(decks)
	}
	c.total = decks * DeckSize
	return c
}

// Count is how many of card c remain.
func (c *Composition) Count(x Card) int { return int(c.counts[x.Index()]) }

// Total is how many cards remain.
func (c *Composition) Total() int { return c.total }

// RankCount is how many cards of rank r remain, any suit.
func (c *Composition) RankCount(r Rank) int {
	n := 0
	for s := Spades; s <= Clubs; s++ {
		n += int(c.counts[Card{r, s}.Index()])
	}
	return n
}

// Take removes one card x. It fails with ErrOverCount, leaving the
// composition unchanged, when none of x remain.
func (c *Composition) Take(x Card) error {
	if !x.Valid() {
		return fmt.Errorf("%w: %v", ErrSyntax, x)
	}
	i := x.Index()
	if c.counts[i] == 0 {
		return fmt.Errorf("%w: %s", ErrOverCount, x)
	}
	c.counts[i]--
	c.total--
	return nil
}

// Put returns one card x to the composition (used by exhaustive
// enumeration, which takes and puts back).
func (c *Composition) Put(x Card) {
	c.counts[x.Index()]++
	c.total++
}

// Cards returns the remaining cards in index order (unshuffled).
func (c *Composition) Cards() []Card {
	out := make([]Card, 0, c.total)
	for i, n := range c.counts {
		for j := 0; j < int(n); j++ {
			out = append(out, FromIndex(i))
		}
	}
	return out
}

// Source is the randomness a shuffle needs; *math/rand/v2.Rand satisfies it.
// Taking it as a parameter keeps shuffles seeded and tests deterministic.
type Source interface {
	IntN(n int) int
}

// NewShoe returns the cards of decks full decks in an order shuffled by
// rng (Fisher-Yates).
func NewShoe(decks int, rng Source) []Card {
	comp := NewComposition(decks)
	cards := comp.Cards()
	Shuffle(cards, rng)
	return cards
}

// Shuffle permutes cards in place, uniformly (Fisher-Yates).
func Shuffle(cards []Card, rng Source) {
	for i := len(cards) - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		cards[i], cards[j] = cards[j], cards[i]
	}
}
