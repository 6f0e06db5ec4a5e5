package ev

import (
	"fmt"

	"github.com/livetable/livetable/table/strategy"
	"github.com/livetable/livetable/table/strategy/internal/deal"
)

// Calc computes hand expectations for one rule set on a finite shoe. It
// memoises dealer distributions and hand values, so it is not safe for
// concurrent use; build one per goroutine.
type Calc struct {
	rules      Rules
	shoe       deal.Counts
	shoeSize   int
	dealerMemo map[dealerKey]*deal.Dist
	draws      *drawTable // scratch of dealerFrom, for one hole card
	best       *player    // composition-dependent optimal play
}

// New returns a calculator for the rules.
func New(r Rules) (*Calc, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	c := &Calc{rules: r, dealerMemo: make(map[dealerKey]*deal.Dist), draws: &drawTable{gen: 1}}
	for v := 1; v <= 9; v++ {
		c.shoe[v] = 4 * r.Decks
	}
	c.shoe[10] = 16 * r.Decks
	c.shoeSize = 52 * r.Decks
	c.best = c.newPlayer(nil)
	return c, nil
}

// hand is a player hand: hard total (aces as one), whether it holds an ace,
// and its number of cards.
type hand struct {
	hard int
	ace  bool
	n    int
}

func (h hand) add(v int) hand { return hand{hard: h.hard + v, ace: h.ace || v == 1, n: h.n + 1} }

// total is the best total and whether an ace counts eleven in it.
func (h hand) total() (int, bool) {
	if h.ace && h.hard+10 <= 21 {
		return h.hard + 10, true
	}
	return h.hard, false
}

// stake is what a hand risks: real money (lost on a loss), a free bet (paid
// on a win, never lost) and whether real includes a paid double (for the
// late-blackjack double-back rule).
type stake struct {
	real, free float64
	doubled    bool
}

var (
	unitStake  = stake{real: 1}
	freeStake  = stake{free: 1}
	paidDouble = stake{real: 2, doubled: true}
	freeDouble = stake{real: 1, free: 1}
)

// settle is the expected net result of a standing hand of total (at most
// 21) and n cards against the dealer distribution d.
func (c *Calc) settle(d *deal.Dist, up, total, n int, s stake) float64 {
	bjLoss := s.real
	if s.doubled && c.rules.late(up) == LateDoubleBack {
		bjLoss = s.real / 2
	}
	if c.rules.Charlie > 0 && n >= c.rules.Charlie {
		if c.rules.CharlieBeatsBJ {
			return s.real + s.free
		}
		return (s.real+s.free)*(1-d[deal.OutBJ]) - bjLoss*d[deal.OutBJ]
	}
	win := d[deal.OutBust]
	if !c.rules.Dealer22Push {
		win += d[deal.Out22]
	}
	lose := 0.0
	for k := 17; k <= 21; k++ {
		switch {
		case k < total:
			win += d[k-17]
		case k > total:
			lose += d[k-17]
		}
	}
	return (s.real+s.free)*win - s.real*lose - bjLoss*d[deal.OutBJ]
}

// player values hands under one way of playing: optimal when table is
// nil, else the table's decisions.
type player struct {
	c     *Calc
	table *strategy.Table
	memo  map[playKey]float64
}

type playKey struct {
	rem     deal.Removed
	up      int8
	partner int8 // the value of the split-off card still out of the shoe, 0 if none
	free    bool
}

func (c *Calc) newPlayer(t *strategy.Table) *player {
	return &player{c: c, table: t, memo: make(map[playKey]float64)}
}

// play is the value of hand h (whose cards, with partner, are rem) when the
// player may hit or stand.
func (p *player) play(up int, rem deal.Removed, partner int, h hand, s stake) float64 {
	k := playKey{rem: rem, up: int8(up), partner: int8(partner), free: s.free > 0}
	if v, ok := p.memo[k]; ok {
		return v
	}
	total, soft := h.total()
	v := p.c.settle(p.c.dealer(up, rem), up, total, h.n, s)
	if total < 21 {
		if p.table == nil {
			v = max(v, p.hit(up, rem, partner, h, s))
		} else if p.table.Decide(strategy.Situation{Total: total, Soft: soft, Cards: h.n, Up: up}) == strategy.Hit {
			v = p.hit(up, rem, partner, h, s)
		}
	}
	p.memo[k] = v
	return v
}

// hit is the value of taking one card and playing on.
func (p *player) hit(up int, rem deal.Removed, partner int, h hand, s stake) float64 {
	cnt, left := p.c.compose(up, rem)
	ev := 0.0
	for v := 1; v <= 10; v++ {
		if cnt[v] == 0 {
			continue
		}
		nh := h.add(v)
		var x float64
		switch t, _ := nh.total(); {
		case t > 21:
			x = -s.real
		case p.c.rules.Charlie > 0 && nh.n >= p.c.rules.Charlie:
			x = p.c.settle(p.c.dealer(up, rem.Add(v)), up, t, nh.n, s)
		default:
			x = p.play(up, rem.Add(v), partner, nh, s)
		}
		ev += float64(cnt[v]) / float64(left) * x
	}
	return ev
}

// double is the value of taking exactly one card with stake s.
func (p *player) double(up int, rem deal.Removed, h hand, s stake) float64 {
	cnt, left := p.c.compose(up, rem)
	ev := 0.0
	for v := 1; v <= 10; v++ {
		if cnt[v] == 0 {
			continue
		}
		nh := h.add(v)
		x := -s.real
		if t, _ := nh.total(); t <= 21 {
			x = p.c.settle(p.c.dealer(up, rem.Add(v)), up, t, nh.n, s)
		}
		ev += float64(cnt[v]) / float64(left) * x
	}
	return ev
}

// doubleStake is the stake of a double of the two-card hand h before any
// split: free on hard 9-11 when the rules say so.
func (c *Calc) doubleStake(h hand) stake {
	if c.freeDoubleOK(h) {
		return freeDouble
	}
	return paidDouble
}

func (c *Calc) freeDoubleOK(h hand) bool {
	return c.rules.FreeDouble && h.n == 2 && !h.ace && h.hard >= 9 && h.hard <= 11
}

func (c *Calc) freeSplitOK(v int) bool { return c.rules.FreeSplit && v != 10 }

// split is the value of splitting a pair of value v: two hands of one card
// each, the second on a free bet where the rules make the split free. The
// two hands are valued independently, each with the pair and its own cards
// removed from the shoe (the other hand's draws are not).
func (p *player) split(up, v int) float64 {
	second := unitStake
	if p.c.freeSplitOK(v) {
		second = freeStake
	}
	return p.splitHand(up, v, unitStake) + p.splitHand(up, v, second)
}

func (p *player) splitHand(up, v int, s stake) float64 {
	rem0 := deal.Removed(0).Add(v).Add(v)
	cnt, left := p.c.compose(up, rem0)
	ev := 0.0
	for w := 1; w <= 10; w++ {
		if cnt[w] == 0 {
			continue
		}
		h := hand{}.add(v).add(w)
		rem := rem0.Add(w)
		total, soft := h.total()
		stand := p.c.settle(p.c.dealer(up, rem), up, total, 2, s)
		x := stand
		if v != 1 && total < 21 { // split aces get one card
			canDouble := p.c.rules.DAS && s.free == 0
			if p.table == nil {
				x = max(stand, p.hit(up, rem, v, h, s))
				if canDouble {
					x = max(x, p.double(up, rem, h, paidDouble))
				}
			} else {
				switch p.table.Decide(strategy.Situation{Total: total, Soft: soft, Cards: 2, Up: up, CanDouble: canDouble}) {
				case strategy.Hit:
					x = p.hit(up, rem, v, h, s)
				case strategy.Double:
					x = p.double(up, rem, h, paidDouble)
				}
			}
		}
		ev += float64(cnt[w]) / float64(left) * x
	}
	return ev
}

// EVs are the expectations, per unit of initial bet, of each action on a
// two-card hand, before any peek (a peeking game's values are conditioned
// on no dealer natural).
type EVs struct {
	Stand, Hit, Double float64
	Split              float64 // valid when Pair
	Pair               bool
}

// Hand returns the expectations of the actions on the two-card hand v1, v2
// (card values, 1 for an ace) against up card up, with optimal play after
// the first action. A natural is not a decision: it is rejected.
func (c *Calc) Hand(up, v1, v2 int) (EVs, error) {
	for _, v := range [3]int{up, v1, v2} {
		if v < 1 || v > 10 {
			return EVs{}, fmt.Errorf("%w: card value %d", ErrBadRules, v)
		}
	}
	if v1+v2 == 11 && (v1 == 1 || v2 == 1) {
		return EVs{}, fmt.Errorf("%w: %d,%d is a natural", ErrBadRules, v1, v2)
	}
	return c.best.root(up, v1, v2), nil
}

func (p *player) root(up, v1, v2 int) EVs {
	rem := deal.Removed(0).Add(v1).Add(v2)
	h := hand{}.add(v1).add(v2)
	total, _ := h.total()
	e := EVs{
		Stand:  p.c.settle(p.c.dealer(up, rem), up, total, 2, unitStake),
		Hit:    p.hit(up, rem, 0, h, unitStake),
		Double: p.double(up, rem, h, p.c.doubleStake(h)),
		Pair:   v1 == v2,
	}
	if e.Pair {
		e.Split = p.split(up, v1)
	}
	return e
}
