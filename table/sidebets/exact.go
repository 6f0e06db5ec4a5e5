package sidebets

import (
	"fmt"
	"math/big"

	"github.com/livetable/livetable/table/card"
)

// MaxDecks is the largest shoe the return analysis accepts. The games use 6
// and 8 decks; the bound keeps every enumeration's counts well inside int64.
const MaxDecks = 16

// InsuranceWins is the insurance bet's winning event in an insurance
// Analysis: the dealer's hole card is ten-valued under his Ace.
const InsuranceWins Result = "dealer_blackjack"

// Analysis is the exact return of one bet on a fresh shoe.
type Analysis struct {
	// Name is the bet's Kind, or "insurance".
	Name string
	// Decks is the number of decks in the shoe analysed.
	Decks int
	// Return is the expected amount handed back per unit staked, stake
	// included (the documents' RTP): 1 is a fair bet.
	Return *big.Rat
	// Prob is the exact probability of every result of the bet, those the
	// paytable does not pay included; the values sum to 1.
	Prob map[Result]*big.Rat
}

// Percent is Return as a percentage, rounded to a float64 for printing only.
func (a Analysis) Percent() float64 {
	if a.Return == nil {
		return 0
	}
	f, _ := new(big.Rat).Mul(a.Return, big.NewRat(100, 1)).Float64()
	return f
}

// Option adjusts how Return reads a rule the documents leave open.
type Option func(*options)

type options struct {
	hitSoft17         bool
	ignorePlayerCards bool
}

// DealerHitsSoft17 makes the Bust It dealer hit soft 17 (H17). The default
// is S17, as in game 002, the only game with Bust It.
func DealerHitsSoft17() Option { return func(o *options) { o.hitSoft17 = true } }

// IgnorePlayerCards makes Bust It draw the dealer's hand from the full shoe,
// as if the seat's own two cards had not left it, and treats the seat's
// blackjack as independent of the dealer's cards. This is not how the cards
// fall; it exists so docs/game-maths.md can show that the stated 94.12% needs
// the exact conditioning.
func IgnorePlayerCards() Option { return func(o *options) { o.ignorePlayerCards = true } }

// Return computes the exact return of bet k with paytable pt on a fresh shoe
// of decks decks.
//
// The pair bets look at two cards, 21+3, Hot 3 and Top 3 at three; the
// enumeration counts every ordered draw of that many cards without
// replacement, grouped by card (rank and suit), weighted by how many copies
// the shoe holds. That the cards are not dealt consecutively (other seats'
// cards come in between) does not matter: in a well-shuffled shoe every set
// of positions fixed before the deal, or chosen only from cards already
// seen, holds a uniformly random draw of the shoe (predictable sampling of
// an exchangeable sequence). The same argument lets Bust It condition on the
// seat's own first two cards only: they leave the shoe first, then the
// dealer's up card, hole card and draws come from the rest, whatever cards
// the players took in between. The seat's blackjack pushes. The dealer
// stands on soft 17 unless DealerHitsSoft17 is given; a 22 is a bust.
//
// Every stated figure is for the first hand of a fresh shoe; deeper in a shoe
// the return depends on the cards already dealt.
func Return(k Kind, pt Paytable, decks int, opts ...Option) (Analysis, error) {
	if err := pt.Validate(k); err != nil {
		return Analysis{}, err
	}
	if decks < 1 || decks > MaxDecks {
		return Analysis{}, fmt.Errorf("%w: %d (want 1..%d)", ErrDecks, decks, MaxDecks)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var prob map[Result]*big.Rat
	switch k {
	case KindPerfectPairs, KindDealerPair:
		prob = twoCardProb(decks)
	case KindTwentyOnePlus3, KindTop3:
		prob = threeCardProb(decks, ThreeCard)
	case KindHot3:
		prob = threeCardProb(decks, Hot3)
	default: // KindBustIt: Validate has rejected every other kind
		prob = bustItProb(decks, o)
	}
	return Analysis{Name: string(k), Decks: decks, Return: expectedReturn(prob, pt), Prob: prob}, nil
}

// expectedReturn is the expected amount handed back per unit staked: 1+pays
// for a paid result, 1 for the push, 0 for a loss.
func expectedReturn(prob map[Result]*big.Rat, pt Paytable) *big.Rat {
	ret := new(big.Rat)
	term := new(big.Rat)
	for r, p := range prob {
		switch pays, ok := pt[r]; {
		case r == PushPlayerBlackjack:
			ret.Add(ret, p)
		case ok && r != Lose:
			term.SetInt64(1 + pays)
			ret.Add(ret, term.Mul(term, p))
		}
	}
	return ret
}

// counted turns integer counts of equally likely ordered draws into exact
// probabilities over total draws.
func counted(counts map[Result]int64, total int64) map[Result]*big.Rat {
	prob := make(map[Result]*big.Rat, len(counts))
	for r, n := range counts {
		prob[r] = big.NewRat(n, total)
	}
	return prob
}

// twoCardProb enumerates the ordered pairs of cards drawn from the shoe. Each
// of the 52 cards has decks copies.
func twoCardProb(decks int) map[Result]*big.Rat {
	n := int64(decks)
	counts := make(map[Result]int64)
	for i := range card.DeckSize {
		a := card.FromIndex(i)
		for j := range card.DeckSize {
			b := card.FromIndex(j)
			ways := n * (n - same(i, j))
			if ways > 0 {
				counts[Pair(a, b)] += ways
			}
		}
	}
	t := int64(decks * card.DeckSize)
	return counted(counts, t*(t-1))
}

// threeCardProb enumerates the ordered triples of cards drawn from the shoe
// and classifies each with classify.
func threeCardProb(decks int, classify func(a, b, c card.Card) Result) map[Result]*big.Rat {
	n := int64(decks)
	counts := make(map[Result]int64)
	for i := range card.DeckSize {
		a := card.FromIndex(i)
		for j := range card.DeckSize {
			b := card.FromIndex(j)
			wij := n * (n - same(i, j))
			if wij == 0 {
				continue
			}
			for l := range card.DeckSize {
				w := wij * (n - same(l, i) - same(l, j))
				if w > 0 {
					counts[classify(a, b, card.FromIndex(l))] += w
				}
			}
		}
	}
	t := int64(decks * card.DeckSize)
	return counted(counts, t*(t-1)*(t-2))
}

func same(i, j int) int64 {
	if i == j {
		return 1
	}
	return 0
}

// InsuranceReturn is the exact return of insurance paying pays to one (2 in
// every game) on a fresh shoe of decks decks, conditioned on the dealer's
// up card being an Ace and on the seen cards (not including the up card)
// having left the shoe too.
//
// With no seen cards this is also the average over the seat's unseen first
// two cards: by symmetry each unseen card is a ten as often as the hole card
// is, so removing them at random leaves the hole card's chance of being a
// ten unchanged. This is the figure a document states. Passing the seat's
// two cards gives the return for that seat: two non-tens raise it, tens
// lower it.
func InsuranceReturn(decks int, pays int64, seen ...card.Card) (Analysis, error) {
	if decks < 1 || decks > MaxDecks {
		return Analysis{}, fmt.Errorf("%w: %d (want 1..%d)", ErrDecks, decks, MaxDecks)
	}
	if pays < 0 {
		return Analysis{}, fmt.Errorf("%w: insurance pays %d", ErrPaytable, pays)
	}
	comp := card.NewComposition(decks)
	for _, c := range seen {
		if err := comp.Take(c); err != nil {
			return Analysis{}, fmt.Errorf("sidebets: insurance on %d decks: %w", decks, err)
		}
	}
	// The up card's suit does not matter: take any Ace that is left.
	upTaken := false
	for s := card.Spades; s <= card.Clubs && !upTaken; s++ {
		upTaken = comp.Take(card.New(card.Ace, s)) == nil
	}
	if !upTaken {
		return Analysis{}, fmt.Errorf("sidebets: insurance on %d decks: no Ace left for the up card: %w", decks, card.ErrOverCount)
	}
	tens := 0
	for r := card.Ten; r <= card.King; r++ {
		tens += comp.RankCount(r)
	}
	win := big.NewRat(int64(tens), int64(comp.Total()))
	lose := new(big.Rat).Sub(big.NewRat(1, 1), win)
	ret := new(big.Rat).Mul(win, big.NewRat(1+pays, 1))
	return Analysis{
		Name:   "insurance",
		Decks:  decks,
		Return: ret,
		Prob:   map[Result]*big.Rat{InsuranceWins: win, Lose: lose},
	}, nil
}
