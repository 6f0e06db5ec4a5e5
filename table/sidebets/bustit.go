package sidebets

import (
	"math/big"

	"github.com/livetable/livetable/table/card"
)

// numValues is the number of blackjack values: Ace (1) to ten (10). Bust It
// depends on values only, so the dealer enumeration works on value counts.
const numValues = 10

// bustHand is one multiset of card values with which the dealer busts, and
// the number of drawing orders that reach it. Every ordering of the same
// multiset is equally likely (its probability is a product over values of
// falling factorials), so the enumeration of sequences collapses to
// multisets plus a count of the orders that are legal dealer play (the hand
// must not have stood or busted before its last card).
type bustHand struct {
	k      [numValues]uint8 // cards of each value (index value-1)
	cards  int
	orders int64
}

// valueCounts returns the number of cards of each value in a full shoe.
func valueCounts(decks int) [numValues]int {
	var n [numValues]int
	for v := range n {
		n[v] = 4 * decks
	}
	n[9] = 16 * decks // ten, jack, queen, king
	return n
}

// dealerBustHands enumerates every sequence the dealer can draw from a full
// shoe of decks decks (up card, hole card, then draws to 17, hitting soft 17
// when h17) that ends in a bust, grouped by multiset.
func dealerBustHands(decks int, h17 bool) []bustHand {
	e := dealerEnum{left: valueCounts(decks), h17: h17, index: make(map[uint64]int)}
	e.draw(0, false, 0)
	return e.hands
}

type dealerEnum struct {
	left  [numValues]int
	k     [numValues]uint8
	h17   bool
	hands []bustHand
	index map[uint64]int // packed k -> position in hands
}

// draw adds every possible next card to a hand of n cards with hard total
// hard (Aces counted 1).
func (e *dealerEnum) draw(hard int, hasAce bool, n int) {
	for v := range numValues {
		if e.left[v] == 0 {
			continue
		}
		e.left[v]--
		e.k[v]++
		h, ace := hard+v+1, hasAce || v == 0
		total, soft := bestTotal(h, ace)
		switch {
		case n+1 < 2: // the hole card always comes
			e.draw(h, ace, n+1)
		case h > 21:
			e.record(n + 1)
		case total > 17 || (total == 17 && !(soft && e.h17)):
			// the dealer stands: Bust It loses, nothing to record
		default:
			e.draw(h, ace, n+1)
		}
		e.k[v]--
		e.left[v]++
	}
}

func (e *dealerEnum) record(cards int) {
	var key uint64
	for v, c := range e.k {
		key |= uint64(c) << (6 * v) // a hand holds fewer than 64 cards of a value
	}
	if i, ok := e.index[key]; ok {
		e.hands[i].orders++
		return
	}
	e.index[key] = len(e.hands)
	e.hands = append(e.hands, bustHand{k: e.k, cards: cards, orders: 1})
}

// fallingFactorial is n (n-1) ... (n-k+1), 1 for k = 0 and 0 for k > n.
func fallingFactorial(n, k int) *big.Int {
	f := big.NewInt(1)
	if k > n {
		return f.SetInt64(0)
	}
	var x big.Int
	for i := range k {
		f.Mul(f, x.SetInt64(int64(n-i)))
	}
	return f
}

// bustItProb is the exact distribution of Bust It results on a fresh shoe.
//
// The seat's two cards (a, b) are drawn first, then the dealer's sequence s
// with value multiset M of d cards. The probability of that joint draw is
//
//	prod_v ff(n_v, k_v + p_v) / ff(T, d+2)
//
// with n_v the shoe's cards of value v, k_v and p_v those in M and in (a, b),
// and ff the falling factorial. Summing over the seat's non-blackjack pairs
// factors as prod_v ff(n_v, k_v) times the ordered pairs left in the shoe
// after M that are not A+ten: ff(T-d, 2) - 2 (n_A-k_A)(n_10-k_10). So the
// whole distribution is one pass over the dealer's bust multisets.
func bustItProb(decks int, o options) map[Result]*big.Rat {
	n := valueCounts(decks)
	t := decks * card.DeckSize
	// The seat's blackjack: A then ten, or ten then A.
	pBJ := big.NewRat(int64(2*n[0]*n[9]), int64(t*(t-1)))

	nums := map[int]*big.Int{} // numerators per dealer card count d
	var term, pairs big.Int
	for _, h := range dealerBustHands(decks, o.hitSoft17) {
		term.SetInt64(h.orders)
		for v, k := range h.k {
			if k > 0 {
				term.Mul(&term, fallingFactorial(n[v], int(k)))
			}
		}
		if !o.ignorePlayerCards {
			rest := int64(t - h.cards)
			ace, ten := int64(n[0]-int(h.k[0])), int64(n[9]-int(h.k[9]))
			pairs.SetInt64(rest*(rest-1) - 2*ace*ten)
			term.Mul(&term, &pairs)
		}
		if nums[h.cards] == nil {
			nums[h.cards] = new(big.Int)
		}
		nums[h.cards].Add(nums[h.cards], &term)
	}

	prob := map[Result]*big.Rat{PushPlayerBlackjack: pBJ}
	won := new(big.Rat)
	for d, sum := range nums {
		p := new(big.Rat)
		if o.ignorePlayerCards {
			// P(bust with d cards) x P(no seat blackjack), as if independent.
			p.SetFrac(sum, fallingFactorial(t, d))
			p.Mul(p, new(big.Rat).Sub(big.NewRat(1, 1), pBJ))
		} else {
			p.SetFrac(sum, fallingFactorial(t, d+2))
		}
		r := bustResult(d)
		if prob[r] == nil {
			prob[r] = new(big.Rat)
		}
		prob[r].Add(prob[r], p)
		won.Add(won, p)
	}
	lose := new(big.Rat).Sub(big.NewRat(1, 1), pBJ)
	prob[Lose] = lose.Sub(lose, won)
	return prob
}
