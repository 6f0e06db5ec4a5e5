package sidebets

import (
	"fmt"

	"github.com/livetable/livetable/table/card"
)

// Pair classifies two cards for the pair bets: the same rank is required
// (K-Q is not a pair); the same suit is a perfect pair, another suit of the
// same colour a coloured pair, the other colour a mixed pair.
func Pair(a, b card.Card) Result {
	switch {
	case !a.Valid() || !b.Valid() || a.Rank != b.Rank:
		return Lose
	case a.Suit == b.Suit:
		return PerfectPair
	case a.Suit.Red() == b.Suit.Red():
		return ColouredPair
	default:
		return MixedPair
	}
}

// ThreeCard classifies the seat's two cards and the dealer's up card as a
// three-card poker hand, for 21+3 and Top 3. When several results apply the
// first of this list wins: suited trips, straight flush, three of a kind,
// straight, flush. A-2-3 and Q-K-A are straights, K-A-2 is not. Top 3 shares
// the classification and simply pays fewer of the results.
func ThreeCard(a, b, up card.Card) Result {
	if !a.Valid() || !b.Valid() || !up.Valid() {
		return Lose
	}
	suited := a.Suit == b.Suit && b.Suit == up.Suit
	trips := a.Rank == b.Rank && b.Rank == up.Rank
	switch {
	case trips && suited:
		return SuitedTrips
	case trips:
		return ThreeOfAKind
	}
	straight := isStraight(a.Rank, b.Rank, up.Rank)
	switch {
	case straight && suited:
		return StraightFlush
	case straight:
		return Straight
	case suited:
		return Flush
	}
	return Lose
}

// isStraight reports whether three ranks are consecutive, the Ace low
// (A-2-3) or high (Q-K-A) but never both (K-A-2 does not wrap).
func isStraight(x, y, z card.Rank) bool {
	lo, mid, hi := sort3(x, y, z)
	if lo+1 == mid && mid+1 == hi {
		return true
	}
	return lo == card.Ace && mid == card.Queen && hi == card.King
}

func sort3(x, y, z card.Rank) (card.Rank, card.Rank, card.Rank) {
	if x > y {
		x, y = y, x
	}
	if y > z {
		y, z = z, y
	}
	if x > y {
		x, y = y, x
	}
	return x, y, z
}

// Hot3 classifies the seat's two cards and the dealer's up card by their
// blackjack total, Aces counting 1 or 11 for the best total not over 21:
// three sevens, a suited 21, 21, 20 or 19 win; anything else loses.
func Hot3(a, b, up card.Card) Result {
	if !a.Valid() || !b.Valid() || !up.Valid() {
		return Lose
	}
	if a.Rank == card.Seven && b.Rank == card.Seven && up.Rank == card.Seven {
		return Sevens
	}
	hasAce := a.Rank == card.Ace || b.Rank == card.Ace || up.Rank == card.Ace
	total, _ := bestTotal(a.Value()+b.Value()+up.Value(), hasAce)
	switch total {
	case 21:
		if a.Suit == b.Suit && b.Suit == up.Suit {
			return Suited21
		}
		return Total21
	case 20:
		return Total20
	case 19:
		return Total19
	}
	return Lose
}

// bestTotal turns a hard total (Aces counted 1) into the best blackjack
// total: one Ace counts 11 when that does not pass 21. soft reports that it
// did.
func bestTotal(hard int, hasAce bool) (total int, soft bool) {
	if hasAce && hard+10 <= 21 {
		return hard + 10, true
	}
	return hard, false
}

// BustIt classifies the Bust It bet from the dealer's final hand. The seat's
// own blackjack pushes the bet whatever the dealer has; otherwise a dealer
// bust (22 included: the caller reports any total over 21 as a bust, whatever
// the main game does with 22) wins by the number of dealer cards, 8 and more
// sharing one result. A bust with fewer than three cards cannot happen and
// loses.
func BustIt(dealer []card.Card, dealerBust bool, playerNatural bool) Result {
	switch {
	case playerNatural:
		return PushPlayerBlackjack
	case !dealerBust || len(dealer) < 3:
		return Lose
	}
	return bustResult(len(dealer))
}

// Hand is what Classify needs to settle any side bet of one seat: the seat's
// initial two cards (before any split) and the dealer's cards in drawing
// order, up card first.
type Hand struct {
	Player [2]card.Card
	Dealer []card.Card
}

// Natural reports whether the seat's initial two cards are a blackjack.
func (h Hand) Natural() bool {
	a, b := h.Player[0].Rank, h.Player[1].Rank
	return (a == card.Ace && b.Value() == 10) || (b == card.Ace && a.Value() == 10)
}

// DealerBust reports whether the dealer's cards total over 21 (22 included).
func (h Hand) DealerBust() bool {
	hard := 0
	for _, c := range h.Dealer {
		hard += c.Value()
	}
	return hard > 21
}

// Classify validates h and returns the result of bet k on it. It is the
// entry point for callers that hold bets by name (the engine's settlement,
// the scenario runner). Only the cards the bet looks at must be present:
// the dealer's up card for 21+3, Hot 3 and Top 3, up and hole card for the
// dealer pair, the whole hand (two cards at least) for Bust It.
func Classify(k Kind, h Hand) (Result, error) {
	for i, c := range h.Player {
		if !c.Valid() {
			return Lose, fmt.Errorf("%w: player card %d %v", ErrInvalidCard, i+1, c)
		}
	}
	for i, c := range h.Dealer {
		if !c.Valid() {
			return Lose, fmt.Errorf("%w: dealer card %d %v", ErrInvalidCard, i+1, c)
		}
	}
	need := 0
	switch k {
	case KindPerfectPairs:
	case KindTwentyOnePlus3, KindHot3, KindTop3:
		need = 1
	case KindDealerPair, KindBustIt:
		need = 2
	default:
		return Lose, fmt.Errorf("%w %q", ErrUnknownKind, string(k))
	}
	if len(h.Dealer) < need {
		return Lose, fmt.Errorf("%w: %s needs %d, got %d", ErrDealerCards, k, need, len(h.Dealer))
	}
	a, b := h.Player[0], h.Player[1]
	switch k {
	case KindPerfectPairs:
		return Pair(a, b), nil
	case KindDealerPair:
		return Pair(h.Dealer[0], h.Dealer[1]), nil
	case KindTwentyOnePlus3, KindTop3:
		return ThreeCard(a, b, h.Dealer[0]), nil
	case KindHot3:
		return Hot3(a, b, h.Dealer[0]), nil
	default: // KindBustIt
		return BustIt(h.Dealer, h.DealerBust(), h.Natural()), nil
	}
}
