package ev

import (
	"github.com/livetable/livetable/table/strategy"
	"github.com/livetable/livetable/table/strategy/internal/deal"
)

// Return is the expected net result of a whole hand per unit of initial bet
// (RTP = 1 + Return) when every decision follows the table t. Insurance is
// never taken. Splits are valued as in Calc.Hand (each split hand sees the
// pair and its own cards removed).
func (c *Calc) Return(t *strategy.Table) float64 {
	return c.ret(c.newPlayer(t))
}

// OptimalReturn is the expected result with the best action for every
// two-card hand and composition-dependent hitting after it: an upper bound
// that shows what the total-dependent table gives away.
func (c *Calc) OptimalReturn() float64 { return c.ret(c.best) }

func (c *Calc) ret(p *player) float64 {
	total := 0.0
	for up := 1; up <= 10; up++ {
		pUp := float64(c.shoe[up]) / float64(c.shoeSize)
		cnt, left := c.compose(up, 0)
		for v1 := 1; v1 <= 10; v1++ {
			for v2 := v1; v2 <= 10; v2++ {
				pr := float64(cnt[v1]) / float64(left)
				if v2 == v1 {
					pr *= float64(cnt[v2]-1) / float64(left-1)
				} else {
					pr *= 2 * float64(cnt[v2]) / float64(left-1)
				}
				total += pUp * pr * p.value(up, v1, v2)
			}
		}
	}
	return total
}

// value is the expectation of the initial hand v1, v2 against up, dealer
// naturals included.
func (p *player) value(up, v1, v2 int) float64 {
	c := p.c
	rem := deal.Removed(0).Add(v1).Add(v2)
	pBJ := 0.0
	if up == 1 || up == 10 {
		cnt, left := c.compose(up, rem)
		pBJ = float64(cnt[11-up]) / float64(left)
	}
	if v1+v2 == 11 && (v1 == 1 || v2 == 1) {
		return 1.5 * (1 - pBJ)
	}
	var ev float64
	if p.table == nil {
		e := p.root(up, v1, v2)
		ev = max(e.Stand, e.Hit, e.Double)
		if e.Pair {
			ev = max(ev, e.Split)
		}
	} else {
		ev = p.decided(up, v1, v2)
	}
	if c.rules.peek(up) {
		return -pBJ + (1-pBJ)*ev
	}
	return ev
}

// decided is the value of the two-card hand played by the table.
func (p *player) decided(up, v1, v2 int) float64 {
	c := p.c
	rem := deal.Removed(0).Add(v1).Add(v2)
	h := hand{}.add(v1).add(v2)
	total, soft := h.total()
	s := strategy.Situation{Total: total, Soft: soft, Cards: 2, Up: up, CanDouble: true,
		FreeDouble: c.freeDoubleOK(h)}
	if v1 == v2 {
		s.PairValue, s.CanSplit, s.FreeSplit = v1, true, c.freeSplitOK(v1)
	}
	switch p.table.Decide(s) {
	case strategy.Hit:
		return p.hit(up, rem, 0, h, unitStake)
	case strategy.Double:
		return p.double(up, rem, h, c.doubleStake(h))
	case strategy.Split:
		return p.split(up, v1)
	}
	return c.settle(c.dealer(up, rem), up, total, 2, unitStake)
}
