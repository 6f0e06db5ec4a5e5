package ev

import (
	"github.com/livetable/livetable/table/strategy"
	"github.com/livetable/livetable/table/strategy/internal/deal"
)

// sums accumulates probability-weighted action values over the hands that
// share one chart cell.
type sums struct {
	stand, hit, double float64
	weight             float64
	canDouble          bool
}

func (s *sums) add(w float64, stand, hit, double float64, canDouble bool) {
	s.stand += w * stand
	s.hit += w * hit
	s.double += w * double
	s.weight += w
	s.canDouble = s.canDouble || canDouble
}

// code is the best of stand, hit and (when possible) double, with the
// double's fallback chosen by hit against stand.
func (s *sums) code() strategy.Code {
	hitBest := s.hit > s.stand
	if s.canDouble && s.double > max(s.hit, s.stand) {
		if hitBest {
			return strategy.CodeDouble
		}
		return strategy.CodeDoubleS
	}
	if hitBest {
		return strategy.CodeHit
	}
	return strategy.CodeStand
}

// Chart computes the total-dependent basic strategy of the rules.
//
// Each hard or soft cell is decided by summing, weighted by their chance
// of being dealt against that up card, the action values of the two-card
// hands with that total: non-pair hands where there are any (a pair has
// its own row), else the pairs (hard 4, hard 20, soft 12), else the
// three-card hands (hard and soft 21). A doubled cell falls back to hit or
// stand by the same sums, which is what a three-card hand of that total
// does. A pair row compares the split with the best other action of that
// pair alone. Play after the first card is composition-dependent optimal.
//
// When the rules make doubles free (002), the hard rows hold the paid
// double and free-hard rows 9-11 the free one; when splits are free, the
// pair rows hold the paid split and free-pair rows every non-ten pair.
//
// With a charlie of N cards, hands of N-2 and N-1 cards get rows of their
// own (hard-N, soft-N sections) where they differ from the plain rows,
// decided by the same sums over the hands of that many cards.
func (c *Calc) Chart(name string) strategy.Chart {
	ch := strategy.Chart{Name: name, DAS: c.rules.DAS}
	for up := 1; up <= 10; up++ {
		c.chartUp(&ch, up)
	}
	if n := c.rules.Charlie; n > 0 {
		for cards := max(strategy.FirstCards, n-2); cards < n && cards <= strategy.MaxCards; cards++ {
			c.cardsRows(&ch, cards)
		}
	}
	return ch
}

// cardsRows sets the rows of hands of exactly n cards that differ from the
// plain hard and soft rows.
func (c *Calc) cardsRows(ch *strategy.Chart, n int) {
	var hard, soft [strategy.LastTotal + 1][11]strategy.Code
	for up := 1; up <= 10; up++ {
		var sums [2][22]sums
		cnt, left := c.compose(up, 0)
		vs := make([]int, 0, n)
		var walk func(from, hardSum int)
		walk = func(from, hardSum int) {
			if len(vs) == n {
				c.addHand(&sums, up, cnt, left, vs)
				return
			}
			for v := from; v <= 10 && hardSum+v <= 21; v++ {
				vs = append(vs, v)
				walk(v, hardSum+v)
				vs = vs[:len(vs)-1]
			}
		}
		walk(1, 0)
		for t := strategy.HardFirst; t <= strategy.LastTotal; t++ {
			if sums[0][t].weight > 0 {
				hard[t][up] = sums[0][t].code()
			}
			if t >= strategy.SoftFirst && sums[1][t].weight > 0 {
				soft[t][up] = sums[1][t].code()
			}
		}
	}
	for t := strategy.HardFirst; t <= strategy.LastTotal; t++ {
		if hard[t][1] != strategy.None && !samePlay(&hard[t], &ch.Hard[t]) {
			ch.CardsHard[n][t] = hard[t]
		}
		if t >= strategy.SoftFirst && soft[t][1] != strategy.None && !samePlay(&soft[t], &ch.Soft[t]) {
			ch.CardsSoft[n][t] = soft[t]
		}
	}
}

// samePlay reports whether two rows play a hand of three or more cards
// (which cannot double) the same way.
func samePlay(a, b *[11]strategy.Code) bool {
	noDouble := func(c strategy.Code) strategy.Code {
		switch c {
		case strategy.CodeDouble:
			return strategy.CodeHit
		case strategy.CodeDoubleS:
			return strategy.CodeStand
		}
		return c
	}
	for up := 1; up <= 10; up++ {
		if noDouble(a[up]) != noDouble(b[up]) {
			return false
		}
	}
	return true
}

// addHand adds the stand and hit values of the hand of values vs against
// up to its cell's sums.
func (c *Calc) addHand(out *[2][22]sums, up int, cnt deal.Counts, left int, vs []int) {
	var h hand
	rem := deal.Removed(0)
	for _, v := range vs {
		h = h.add(v)
		rem = rem.Add(v)
	}
	total, isSoft := h.total()
	w := multisetProb(cnt, left, vs...)
	if w == 0 {
		return
	}
	stand := c.settle(c.dealer(up, rem), up, total, h.n, unitStake)
	hit := stand
	if total < 21 {
		hit = c.best.hit(up, rem, 0, h, unitStake)
	}
	soft := 0
	if isSoft {
		soft = 1
	}
	out[soft][total].add(w, stand, hit, 0, false)
}

func (c *Calc) chartUp(ch *strategy.Chart, up int) {
	p := c.best
	var hard, hardPair, soft, softPair [22]sums
	var freeHard [22]sums
	cnt, left := c.compose(up, 0)
	for v1 := 1; v1 <= 10; v1++ {
		for v2 := v1; v2 <= 10; v2++ {
			if v1 == 1 && v2 == 10 {
				continue // a natural
			}
			w := float64(cnt[v1]) / float64(left)
			if v1 == v2 {
				w *= float64(cnt[v2]-1) / float64(left-1)
			} else {
				w *= 2 * float64(cnt[v2]) / float64(left-1)
			}
			h := hand{}.add(v1).add(v2)
			total, isSoft := h.total()
			e := p.root(up, v1, v2)
			dbl := e.Double
			if c.freeDoubleOK(h) {
				// The hard row holds the paid double; the free one is
				// in free-hard.
				freeHard[total].add(w, e.Stand, e.Hit, e.Double, true)
				dbl = p.double(up, deal.Removed(0).Add(v1).Add(v2), h, paidDouble)
			}
			switch {
			case isSoft && v1 == v2:
				softPair[total].add(w, e.Stand, e.Hit, e.Double, true)
			case isSoft:
				soft[total].add(w, e.Stand, e.Hit, e.Double, true)
			case v1 == v2:
				hardPair[total].add(w, e.Stand, e.Hit, dbl, true)
			default:
				hard[total].add(w, e.Stand, e.Hit, dbl, true)
			}
			if v1 == v2 {
				c.pairCell(ch, up, v1, e)
			}
		}
	}
	var three [2][22]sums // [soft][total] of three-card hands, built on demand
	threeDone := false
	cellOf := func(s *sums, pair *sums, isSoft bool, total int) strategy.Code {
		switch {
		case s.weight > 0:
			return s.code()
		case pair.weight > 0:
			return pair.code()
		}
		if !threeDone {
			c.threeCard(up, &three)
			threeDone = true
		}
		soft := 0
		if isSoft {
			soft = 1
		}
		return three[soft][total].code()
	}
	for t := strategy.HardFirst; t <= strategy.LastTotal; t++ {
		ch.Hard[t][up] = cellOf(&hard[t], &hardPair[t], false, t)
		if freeHard[t].weight > 0 {
			ch.FreeHard[t][up] = freeHard[t].code()
		}
	}
	for t := strategy.SoftFirst; t <= strategy.LastTotal; t++ {
		ch.Soft[t][up] = cellOf(&soft[t], &softPair[t], true, t)
	}
}

// pairCell sets the pair row (and the free-pair row) of value v against up.
func (c *Calc) pairCell(ch *strategy.Chart, up, v int, e EVs) {
	other := sums{weight: 1, stand: e.Stand, hit: e.Hit, double: e.Double, canDouble: true}
	split := e.Split
	if c.freeSplitOK(v) {
		ch.FreePair[v][up] = other.code()
		if split > max(e.Stand, e.Hit, e.Double) {
			ch.FreePair[v][up] = strategy.CodeSplit
		}
		// The paid split, for the pair rows, values both hands as real.
		split = 2 * c.best.splitHand(up, v, unitStake)
	}
	ch.Pair[v][up] = other.code()
	if split > max(e.Stand, e.Hit, e.Double) {
		ch.Pair[v][up] = strategy.CodeSplit
	}
}

// threeCard sums stand and hit over all three-card hands, for the cells no
// two-card hand reaches.
func (c *Calc) threeCard(up int, out *[2][22]sums) {
	cnt, left := c.compose(up, 0)
	for v1 := 1; v1 <= 10; v1++ {
		for v2 := v1; v2 <= 10; v2++ {
			for v3 := v2; v3 <= 10; v3++ {
				if v1+v2+v3 <= 21 {
					c.addHand(out, up, cnt, left, []int{v1, v2, v3})
				}
			}
		}
	}
}

// multisetProb is the chance of drawing the multiset of values vs (in any
// order) from cnt.
func multisetProb(cnt deal.Counts, left int, vs ...int) float64 {
	p := 1.0
	for i, v := range vs {
		if cnt[v] <= 0 {
			return 0
		}
		p *= float64(cnt[v]) / float64(left-i)
		cnt[v]--
	}
	// Orderings: n! / prod(mult!).
	perm := 1.0
	for i := 2; i <= len(vs); i++ {
		perm *= float64(i)
	}
	seen := map[int]int{}
	for _, v := range vs {
		seen[v]++
		perm /= float64(seen[v])
	}
	return p * perm
}
