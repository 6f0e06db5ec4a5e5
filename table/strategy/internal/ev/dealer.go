package ev

import "github.com/livetable/livetable/table/strategy/internal/deal"

// dealerKey identifies a dealer distribution: up card and removed cards.
type dealerKey struct {
	rem deal.Removed
	up  int8
}

// dealer returns the dealer's outcome distribution with up card up when
// the cards rem (and the up card) are out of the shoe, conditioned on no
// natural when the rules peek with this up card. Memoised: the same
// removals recur across the player's hands.
func (c *Calc) dealer(up int, rem deal.Removed) *deal.Dist {
	k := dealerKey{rem: rem, up: int8(up)}
	if d, ok := c.dealerMemo[k]; ok {
		return d
	}
	cnt, left := c.compose(up, rem)
	d := new(deal.Dist)
	excl := 0 // the hole-card value a peek has ruled out
	if c.rules.peek(up) {
		excl = 11 - up // ace up excludes a ten; ten up excludes an ace
	}
	denom := left
	if excl != 0 {
		denom -= cnt[excl]
	}
	// One composition: the dealer's cards (hole card included) determine
	// the rest of his draw.
	c.draws.reset()
	for v := 1; v <= 10; v++ {
		if cnt[v] == 0 || v == excl {
			continue
		}
		p := float64(cnt[v]) / float64(denom)
		if up+v == 11 && (up == 1 || v == 1) {
			d[deal.OutBJ] += p
			continue
		}
		h, a := up+v, up == 1 || v == 1
		best, soft := h, false
		if a && h+10 <= 21 {
			best, soft = h+10, true
		}
		if best >= 17 && !(best == 17 && soft && c.rules.HitSoft17) {
			d[best-17] += p
			continue
		}
		cnt[v]--
		sub := c.dealerFrom(&cnt, left-1, h, a, deal.Removed(0).Add(v))
		cnt[v]++
		for i := range d {
			d[i] += p * sub[i]
		}
	}
	c.dealerMemo[k] = d
	return d
}

// dealerFrom is the outcome distribution of a dealer hand of hard total
// hard (aces as one) that must still draw from cnt, drawn being the cards
// it holds besides the up card, hole card included. Hands reached by
// drawing the same cards in another order share a distribution, so it is
// memoised on drawn within one composition (c.draws, reset by dealer).
func (c *Calc) dealerFrom(cnt *deal.Counts, left, hard int, ace bool, drawn deal.Removed) deal.Dist {
	slot, found := c.draws.find(drawn)
	if found {
		return c.draws.vals[slot]
	}
	var d deal.Dist
	for v := 1; v <= 10; v++ {
		if cnt[v] == 0 {
			continue
		}
		q := float64(cnt[v]) / float64(left)
		h, a := hard+v, ace || v == 1
		best, soft := h, false
		if a && h+10 <= 21 {
			best, soft = h+10, true
		}
		switch {
		case best == 22:
			d[deal.Out22] += q
		case best > 22:
			d[deal.OutBust] += q
		case best >= 17 && !(best == 17 && soft && c.rules.HitSoft17):
			d[best-17] += q
		default:
			cnt[v]--
			sub := c.dealerFrom(cnt, left-1, h, a, drawn.Add(v))
			cnt[v]++
			for i := range d {
				d[i] += q * sub[i]
			}
		}
	}
	c.draws.store(slot, drawn, d)
	return d
}

// compose returns the shoe less the up card and the removed cards.
func (c *Calc) compose(up int, rem deal.Removed) (deal.Counts, int) {
	cnt := c.shoe
	left := c.shoeSize - 1
	cnt[up]--
	for v := 1; v <= 10; v++ {
		n := rem.Count(v)
		cnt[v] -= n
		left -= n
	}
	return cnt, left
}

// drawTable is an open-addressing hash table from drawn cards to dealer
// distributions, reset in O(1) by bumping a generation: it is reset for
// every composition, too often to clear a Go map.
type drawTable struct {
	gen  uint32
	n    int // keys stored in this generation
	gens [drawSlots]uint32
	keys [drawSlots]deal.Removed
	vals [drawSlots]deal.Dist
}

// drawSlots is a power of two well above the number of distinct dealer
// draws from one up card (about a thousand).
const drawSlots = 1 << 13

func (t *drawTable) reset() { t.gen, t.n = t.gen+1, 0 }

// find returns the slot of key and whether it holds key's value; when not,
// the slot is free for store. store keeps the table at most half full, so
// the probe ends.
func (t *drawTable) find(key deal.Removed) (int, bool) {
	i := int((uint64(key) * 0x9E3779B97F4A7C15) >> (64 - 13))
	for {
		if t.gens[i] != t.gen {
			return i, false
		}
		if t.keys[i] == key {
			return i, true
		}
		i = (i + 1) & (drawSlots - 1)
	}
}

// store records d for key in the slot find returned; past half full it
// stores nothing and the recursion just recomputes.
func (t *drawTable) store(slot int, key deal.Removed, d deal.Dist) {
	if t.n >= drawSlots/2 {
		return
	}
	t.n++
	t.gens[slot], t.keys[slot], t.vals[slot] = t.gen, key, d
}
