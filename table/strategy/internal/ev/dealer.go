package ev

// Dealer outcomes: final totals 17..21, a natural, a total of exactly 22
// (a push in 002) and any other bust.
const (
	out17 = iota
	out18
	out19
	out20
	out21
	outBJ
	out22
	outBust
	numOut
)

// dist is the probability of each dealer outcome.
type dist [numOut]float64

// counts is a composition by card value: counts[1] aces .. counts[10] tens.
type counts [11]int

// removed packs a multiset of removed card values (5 bits per value, at
// most 31 of each: no hand holds more) into a map key.
type removed uint64

func (r removed) add(v int) removed { return r + 1<<(5*(v-1)) }

func (r removed) count(v int) int { return int(r>>(5*(v-1))) & 31 }

// dealerKey identifies a dealer distribution: up card and removed cards.
type dealerKey struct {
	rem removed
	up  int8
}

// dealer returns the dealer's outcome distribution with up card up when
// the cards rem (and the up card) are out of the shoe, conditioned on no
// natural when the rules peek with this up card. Memoised: the same
// removals recur across the player's hands.
func (c *Calc) dealer(up int, rem removed) *dist {
	k := dealerKey{rem: rem, up: int8(up)}
	if d, ok := c.dealerMemo[k]; ok {
		return d
	}
	cnt, left := c.compose(up, rem)
	d := new(dist)
	excl := 0 // the hole-card value a peek has ruled out
	if c.rules.peek(up) {
		excl = 11 - up // ace up excludes a ten; ten up excludes an ace
	}
	denom := left
	if excl != 0 {
		denom -= cnt[excl]
	}
	for v := 1; v <= 10; v++ {
		if cnt[v] == 0 || v == excl {
			continue
		}
		p := float64(cnt[v]) / float64(denom)
		if up+v == 11 && (up == 1 || v == 1) {
			d[outBJ] += p
			continue
		}
		cnt[v]--
		c.dealerDraw(&cnt, left-1, up+v, up == 1 || v == 1, p, d)
		cnt[v]++
	}
	c.dealerMemo[k] = d
	return d
}

// dealerDraw settles or extends a dealer hand of hard total hard (aces as
// one) with probability p, drawing from cnt.
func (c *Calc) dealerDraw(cnt *counts, left, hard int, ace bool, p float64, d *dist) {
	best, soft := hard, false
	if ace && hard+10 <= 21 {
		best, soft = hard+10, true
	}
	switch {
	case best == 22:
		d[out22] += p
		return
	case best > 22:
		d[outBust] += p
		return
	case best >= 17 && !(best == 17 && soft && c.rules.HitSoft17):
		d[best-17] += p
		return
	}
	for v := 1; v <= 10; v++ {
		if cnt[v] == 0 {
			continue
		}
		q := p * float64(cnt[v]) / float64(left)
		cnt[v]--
		c.dealerDraw(cnt, left-1, hard+v, ace || v == 1, q, d)
		cnt[v]++
	}
}

// compose returns the shoe less the up card and the removed cards.
func (c *Calc) compose(up int, rem removed) (counts, int) {
	cnt := c.shoe
	left := c.shoeSize - 1
	cnt[up]--
	for v := 1; v <= 10; v++ {
		n := rem.count(v)
		cnt[v] -= n
		left -= n
	}
	return cnt, left
}
