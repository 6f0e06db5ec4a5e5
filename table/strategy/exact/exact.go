// Package exact computes a game's exact main-game return on the finite
// shoe (the first hand of a freshly shuffled shoe) for a fixed strategy
// table, by combinatorial analysis, from the game's rule set
// (table/rules): the figure `bjsim exact` prints and the one `bjsim rtp`
// measures by playing the real engine.
//
// # Method
//
// Every dealer up card and every pair of first cards is weighted by its
// exact chance from the shoe. The hand is then played by the table
// (table/strategy, asked exactly as the engine's simulator asks it: the
// pair, double and split offers, the free double and split of 002, the
// rows of hands of n cards), each card drawn with its exact chance from
// what is left. Dealer outcomes (17..21, natural, 22, bust) are exact sums
// over every multiset of cards he can draw (dealerTerms).
//
// Two facts make this exact and not an approximation:
//
//   - The player's draws do not look at the dealer's unseen card, and the
//     dealer's hand is drawn after them: the cards are exchangeable, so
//     the hole card may be treated as drawn after the player's cards. A
//     peek is the exception: once the dealer has checked his Ace and has
//     no blackjack, the hole card is known not to be a ten, and the
//     player's draws are not independent of it. Those hands are computed
//     for each possible hole card, weighted by its chance given no
//     blackjack.
//   - A split hand's result depends only on its own cards and the
//     dealer's. The other hand's cards come in between, but they are
//     drawn at predictable times (what decides how many there are is
//     seen before each is dealt), and the cards of an exchangeable
//     sequence taken at predictable times are distributed as the sequence
//     itself (Kallenberg's predictable sampling theorem). So each split
//     hand's expectation is that of the hand alone on the shoe less the
//     pair and the up card, with either split deal order. With one split
//     allowed (all five games), the split is exact.
//
// The variance is exact except for one term: the covariance of the two
// hands of a split, which share the dealer's hand, is computed as if they
// were independent given the dealer's outcome (and a busted split hand's
// loss spread over the dealer's outcomes as they stood at the split).
// Splits are about 2.5% of rounds; Report.VarianceNote says so, and the
// figure is checked against the Monte Carlo variance of `bjsim rtp`.
//
// Insurance is never taken (as by `bjsim rtp`). Probabilities are float64:
// they are maths, not money.
package exact

import (
	"errors"
	"fmt"

	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/strategy"
	"github.com/livetable/livetable/table/strategy/internal/deal"
)

// ErrUnsupported is returned for a rule set with a rule the analysis does
// not model (surrender, more than one split).
var ErrUnsupported = errors.New("exact: rule not modelled")

// late is what a dealer natural found at the end takes from a live hand.
type late uint8

const (
	lateAll late = iota
	lateDoubleBack
	lateOriginalOnly
)

// game is the rule set as the analysis reads it.
type game struct {
	rs        *rules.Set
	decks     int
	peek      [11]bool
	late      [11]late
	bjPays    float64
	das       bool
	splits    bool
	aces1     bool
	charlie   int
	charlieBJ bool
	d22       bool
}

func newGame(rs *rules.Set) (*game, error) {
	if err := rs.Validate(); err != nil {
		return nil, err
	}
	switch {
	case rs.Surrender:
		return nil, fmt.Errorf("%w: surrender (game %s)", ErrUnsupported, rs.Code)
	case rs.MaxSplits > 1:
		return nil, fmt.Errorf("%w: %d splits (game %s)", ErrUnsupported, rs.MaxSplits, rs.Code)
	}
	g := &game{rs: rs, decks: rs.Decks, das: rs.DoubleAfterSplit, splits: rs.MaxSplits == 1,
		aces1: rs.SplitAcesOneCard, charlie: rs.Charlie, charlieBJ: rs.CharlieBeatsDealerBJ, d22: rs.Dealer22Push,
		bjPays: float64(rs.BlackjackPays.Num) / float64(rs.BlackjackPays.Den)}
	for up := 1; up <= 10; up++ {
		g.peek[up] = rs.Peeks(up)
		switch rs.LateBJFor(up) {
		case rules.LateBJAll:
			g.late[up] = lateAll
		case rules.LateBJDoubleBack:
			g.late[up] = lateDoubleBack
		default:
			g.late[up] = lateOriginalOnly
		}
	}
	return g, nil
}

// hand is a player hand: hard total (aces as one), whether it holds an
// ace, its number of cards.
type hand struct {
	hard int
	ace  bool
	n    int
}

func (h hand) add(v int) hand { return hand{hard: h.hard + v, ace: h.ace || v == 1, n: h.n + 1} }

func (h hand) total() (int, bool) {
	if h.ace && h.hard+10 <= 21 {
		return h.hard + 10, true
	}
	return h.hard, false
}

// stake is the money on a hand, per unit of initial bet: real money (lost
// on a loss), a free bet (paid on a win, never lost), the base bet a late
// dealer natural takes under the double-back rule, and whether the hand is
// the second of a split (which the original-bet-only rule returns).
type stake struct {
	real, free, base float64
	second           bool
}

var unit = stake{real: 1, base: 1}

// mom are a hand's moments: E[X], E[X^2], and E[X; dealer outcome o] (for
// the covariance of split hands; only kept on split hands).
type mom struct {
	m1, m2 float64
	e      deal.Dist
}

func (a *mom) addScaled(p float64, b mom, withE bool) {
	a.m1 += p * b.m1
	a.m2 += p * b.m2
	if withE {
		for i := range a.e {
			a.e[i] += p * b.e[i]
		}
	}
}

// dealerKey identifies a dealer distribution: the removed cards (50
// bits), the up card and the known hole card (0: none), 4 bits each.
func dealerKey(rem deal.Removed, up, hole int) uint64 {
	return uint64(rem) | uint64(up)<<50 | uint64(hole)<<54
}

// playKey identifies a hand's value: its dealer key, the pair value of a
// split hand (its partner card is out of the shoe; 0 if none), whether it
// is the free second hand of a free split, and whether it is a second
// split hand at all.
func playKey(rem deal.Removed, up, hole, partner int, s stake) uint64 {
	k := dealerKey(rem, up, hole) | uint64(partner)<<58
	if s.real == 0 {
		k |= 1 << 62
	}
	if s.second {
		k |= 1 << 63
	}
	return k
}

// calc is one game's analysis with one table. Not safe for concurrent use.
type calc struct {
	g     *game
	t     *strategy.Table
	shoe  deal.Counts
	size  int
	terms map[int]*dealerTerms // by start: up*16 + hole (hole 0: not known)
	dmemo *memo[*deal.Dist]
	pmemo *memo[mom]
}

func newCalc(g *game, t *strategy.Table) (*calc, error) {
	var shoe deal.Counts
	for v := 1; v <= 9; v++ {
		shoe[v] = 4 * g.decks
	}
	shoe[10] = 16 * g.decks
	return newCalcShoe(g, t, shoe)
}

// newCalcShoe is newCalc on any composition (the tests' small shoes).
func newCalcShoe(g *game, t *strategy.Table, shoe deal.Counts) (*calc, error) {
	c := &calc{g: g, t: t, shoe: shoe, terms: map[int]*dealerTerms{}, dmemo: newMemo[*deal.Dist](), pmemo: newMemo[mom]()}
	for v := 1; v <= 10; v++ {
		c.size += shoe[v]
	}
	h17 := g.rs.DealerHitsSoft17
	for up := 1; up <= 10; up++ {
		dt, err := buildTerms(up, up == 1, 1, h17)
		if err != nil {
			return nil, err
		}
		c.terms[up*16] = dt
		if !g.peek[up] {
			continue
		}
		for hole := 1; hole <= 10; hole++ {
			if up+hole == 11 && (up == 1 || hole == 1) {
				continue // the peek ruled the natural out
			}
			dt, err := buildTerms(up+hole, up == 1 || hole == 1, 2, h17)
			if err != nil {
				return nil, err
			}
			c.terms[up*16+hole] = dt
		}
	}
	return c, nil
}

// compose is the shoe less the up card, the known hole card (0: none) and
// the removed cards.
func (c *calc) compose(up, hole int, rem deal.Removed) (deal.Counts, int) {
	cnt := c.shoe
	left := c.size - 1
	cnt[up]--
	if hole != 0 {
		cnt[hole]--
		left--
	}
	for v := 1; v <= 10; v++ {
		n := rem.Count(v)
		cnt[v] -= n
		left -= n
	}
	return cnt, left
}

// dealer is the dealer's outcome distribution with up card up (and hole
// card hole when known) when the cards rem are out of the shoe.
func (c *calc) dealer(up, hole int, rem deal.Removed) *deal.Dist {
	k := dealerKey(rem, up, hole)
	if d, ok := c.dmemo.get(k); ok {
		return d
	}
	cnt, left := c.compose(up, hole, rem)
	d := new(deal.Dist)
	*d = c.terms[up*16+hole].eval(&cnt, left)
	c.dmemo.put(k, d)
	return d
}

// settle is the moments of a standing hand of total (at most 21) and n
// cards against the dealer distribution d (e kept when withE).
func (c *calc) settle(d *deal.Dist, up, total, n int, s stake, withE bool) mom {
	var m mom
	won := s.real + s.free
	charlie := c.g.charlie > 0 && n >= c.g.charlie
	for o := 0; o < deal.NumOut; o++ {
		p := d[o]
		if p == 0 {
			continue
		}
		var x float64
		switch {
		case o == deal.OutBJ && !(charlie && c.g.charlieBJ):
			x = -c.lateLoss(up, s)
		case o == deal.OutBJ, charlie, o == deal.OutBust:
			x = won
		case o == deal.Out22:
			if !c.g.d22 {
				x = won
			}
		case total > o+17:
			x = won
		case total < o+17:
			x = -s.real
		}
		m.m1 += p * x
		m.m2 += p * x * x
		if withE {
			m.e[o] = p * x
		}
	}
	return m
}

// lateLoss is what a dealer natural found at the end takes from a live hand.
func (c *calc) lateLoss(up int, s stake) float64 {
	switch c.g.late[up] {
	case lateDoubleBack:
		return s.base
	case lateOriginalOnly:
		if s.second {
			return 0
		}
		return s.base
	}
	return s.real
}

// bust is the moments of a busted hand; on a split hand its E[X; o] uses
// the dealer's distribution at the split, ref.
func bust(s stake, ref *deal.Dist) mom {
	m := mom{m1: -s.real, m2: s.real * s.real}
	if ref != nil {
		for o := range m.e {
			m.e[o] = -s.real * ref[o]
		}
	}
	return m
}

// play is the moments of hand h (whose cards, with the split partner, are
// rem) from the point the table decides between hitting and standing.
func (c *calc) play(up, hole int, rem deal.Removed, partner int, h hand, s stake) mom {
	k := playKey(rem, up, hole, partner, s)
	if v, ok := c.pmemo.get(k); ok {
		return v
	}
	total, soft := h.total()
	var v mom
	if total < 21 && c.t.Decide(strategy.Situation{Total: total, Soft: soft, Cards: h.n, Up: up}) == strategy.Hit {
		v = c.hit(up, hole, rem, partner, h, s)
	} else {
		v = c.settle(c.dealer(up, hole, rem), up, total, h.n, s, partner != 0)
	}
	c.pmemo.put(k, v)
	return v
}

// ref is the dealer's distribution at a split of two partner cards, or nil
// for a hand that is not a split hand.
func (c *calc) ref(up, hole, partner int) *deal.Dist {
	if partner == 0 {
		return nil
	}
	return c.dealer(up, hole, deal.Removed(0).Add(partner).Add(partner))
}

// hit is the moments of taking one card and playing on.
func (c *calc) hit(up, hole int, rem deal.Removed, partner int, h hand, s stake) mom {
	return c.draw(up, hole, rem, partner, h, s, false)
}

// double is the moments of taking exactly one card with stake s.
func (c *calc) double(up, hole int, rem deal.Removed, partner int, h hand, s stake) mom {
	return c.draw(up, hole, rem, partner, h, s, true)
}

// draw is the moments of taking a card, then standing when last (a
// double) or playing on.
func (c *calc) draw(up, hole int, rem deal.Removed, partner int, h hand, s stake, last bool) mom {
	cnt, left := c.compose(up, hole, rem)
	var ev mom
	withE := partner != 0
	for v := 1; v <= 10; v++ {
		if cnt[v] <= 0 {
			continue
		}
		p := float64(cnt[v]) / float64(left)
		nh := h.add(v)
		nrem := rem.Add(v)
		var x mom
		switch t, _ := nh.total(); {
		case t > 21:
			x = bust(s, c.ref(up, hole, partner))
		case last || c.g.charlie > 0 && nh.n >= c.g.charlie:
			x = c.settle(c.dealer(up, hole, nrem), up, t, nh.n, s, withE)
		default:
			x = c.play(up, hole, nrem, partner, nh, s)
		}
		ev.addScaled(p, x, withE)
	}
	return ev
}

// split is the moments of splitting a pair of value v: the two hands'
// expectations are exact (see the package comment); their covariance is
// taken as conditionally independent given the dealer's outcome.
func (c *calc) split(up, hole, v int) mom {
	second := stake{real: 1, base: 1, second: true}
	if c.g.rs.FreeSplit && v != 10 {
		second = stake{free: 1, second: true}
	}
	a := c.splitHand(up, hole, v, unit)
	b := c.splitHand(up, hole, v, second)
	ref := c.ref(up, hole, v)
	cov := 0.0
	for o := range ref {
		if ref[o] > 0 {
			cov += a.e[o] * b.e[o] / ref[o]
		}
	}
	return mom{m1: a.m1 + b.m1, m2: a.m2 + b.m2 + 2*cov}
}

// splitHand is one hand of a split pair of value v with stake s.
func (c *calc) splitHand(up, hole, v int, s stake) mom {
	rem0 := deal.Removed(0).Add(v).Add(v)
	cnt, left := c.compose(up, hole, rem0)
	var ev mom
	for w := 1; w <= 10; w++ {
		if cnt[w] <= 0 {
			continue
		}
		p := float64(cnt[w]) / float64(left)
		h := hand{}.add(v).add(w)
		rem := rem0.Add(w)
		total, soft := h.total()
		var x mom
		switch {
		case total == 21 || (v == 1 && c.g.aces1):
			// 21, or split aces with their one card: no decision.
			x = c.settle(c.dealer(up, hole, rem), up, total, 2, s, true)
		default:
			sit := strategy.Situation{Total: total, Soft: soft, Cards: 2, Up: up,
				CanDouble: c.g.das && c.g.rs.CanDoubleTotal(total, soft)}
			if w == v {
				sit.PairValue = v // no resplit: the table falls back to the totals
			}
			switch c.t.Decide(sit) {
			case strategy.Hit:
				x = c.hit(up, hole, rem, v, h, s)
			case strategy.Double:
				ds := s
				ds.real += s.base
				x = c.double(up, hole, rem, v, h, ds)
			default:
				x = c.settle(c.dealer(up, hole, rem), up, total, 2, s, true)
			}
		}
		ev.addScaled(p, x, true)
	}
	return ev
}

// decided is the moments of the two-card hand v1, v2 played by the table.
func (c *calc) decided(up, hole, v1, v2 int) mom {
	rem := deal.Removed(0).Add(v1).Add(v2)
	h := hand{}.add(v1).add(v2)
	total, soft := h.total()
	rs := c.g.rs
	s := strategy.Situation{Total: total, Soft: soft, Cards: 2, Up: up,
		CanDouble: rs.CanDoubleTotal(total, soft), FreeDouble: rs.IsFreeDouble(total, soft)}
	if v1 == v2 {
		s.PairValue, s.CanSplit, s.FreeSplit = v1, c.g.splits, rs.FreeSplit && v1 != 10
	}
	switch c.t.Decide(s) {
	case strategy.Hit:
		return c.hit(up, hole, rem, 0, h, unit)
	case strategy.Double:
		ds := stake{real: 2, base: 1}
		if s.FreeDouble {
			ds = stake{real: 1, free: 1, base: 1}
		}
		return c.double(up, hole, rem, 0, h, ds)
	case strategy.Split:
		return c.split(up, hole, v1)
	}
	return c.settle(c.dealer(up, hole, rem), up, total, 2, unit, false)
}
