package exact

import (
	"fmt"
	"sort"

	"github.com/livetable/livetable/table/strategy/internal/deal"
)

// maxDraw bounds how many cards of one value, and how many in all, a
// dealer hand draws (eight 2s after a 2 up card make 18: well inside).
const maxDraw = 16

// term is one multiset of cards the dealer may draw to a final outcome:
// the number of orders in which he draws exactly those cards (every proper
// prefix leaving him to draw on) and, for each value present, the index
// v*maxDraw+k of its falling factorial in eval's table (index 0 holds 1:
// the unused slots point there, so every term is the same seven products).
type term struct {
	orders float64
	size   uint8
	idx    [maxVals]uint8
}

// maxVals bounds the distinct values in one dealer draw (a 2 up card
// drawing A, 3, 4, 5, 6... stands long before seven of them).
const maxVals = 7

// dealerTerms are the final draws of a dealer who holds given start cards.
// The probability of an outcome on a composition is the sum over its terms
// of orders * prod_v ff(cnt_v, mult_v) / ff(left, size), ff the falling
// factorial: a sum over draw multisets of the probability of each of its
// valid orders, which share one value. The orders do not depend on the
// composition, so the terms are built once per game and start hand, and
// evaluating them on a composition is a few thousand products. They are
// grouped by outcome (byOut[o] is the end of outcome o's terms).
type dealerTerms struct {
	terms   []term
	byOut   [deal.NumOut]int
	maxSize int
}

// buildTerms enumerates the draws of a dealer whose known cards sum to
// hard (aces as one; ace says one is among them). known is how many cards
// he holds: 1 (the up card; his first draw is the hole card, which makes
// a natural with an ace and a ten) or 2 (up and hole card known).
func buildTerms(hard int, ace bool, known int, hitSoft17 bool) (*dealerTerms, error) {
	type node struct {
		orders float64
		hard   int
		ace    bool
		size   int
	}
	dt := &dealerTerms{}
	if out := standing(hard, ace, hitSoft17); out >= 0 {
		// He stands on the cards he holds: one term, no draw.
		dt.terms = []term{{orders: 1}}
		for o := range dt.byOut {
			if o >= out {
				dt.byOut[o] = 1
			}
		}
		return dt, nil
	}
	type final struct {
		t   term
		out int
	}
	level := map[deal.Removed]*node{0: {orders: 1, hard: hard, ace: ace}}
	finals := map[deal.Removed]*final{}
	for len(level) > 0 {
		next := map[deal.Removed]*node{}
		for m, nd := range level {
			for v := 1; v <= 10; v++ {
				h, a := nd.hard+v, nd.ace || v == 1
				mv := m.Add(v)
				size := nd.size + 1
				if mv.Count(v) >= maxDraw || size >= maxDraw {
					return nil, fmt.Errorf("exact: a dealer draw of more than %d cards", maxDraw)
				}
				out := standing(h, a, hitSoft17)
				if known == 1 && size == 1 && out == deal.Out21 {
					out = deal.OutBJ // the hole card makes a natural
				}
				if out >= 0 {
					f, ok := finals[mv]
					if !ok {
						f = &final{t: term{size: uint8(size)}, out: out}
						nv := 0
						for w := 1; w <= 10; w++ {
							if k := mv.Count(w); k > 0 {
								if nv == maxVals {
									return nil, fmt.Errorf("exact: a dealer draw of more than %d values", maxVals)
								}
								f.t.idx[nv] = uint8(w*maxDraw + k)
								nv++
							}
						}
						finals[mv] = f
					}
					f.t.orders += nd.orders
					dt.maxSize = max(dt.maxSize, size)
					continue
				}
				if n, ok := next[mv]; ok {
					n.orders += nd.orders
					continue
				}
				next[mv] = &node{orders: nd.orders, hard: h, ace: a, size: size}
			}
		}
		level = next
	}
	keys := make([]deal.Removed, 0, len(finals))
	for m := range finals {
		keys = append(keys, m)
	}
	// By outcome, then a fixed order: the sums are the same run to run,
	// to the last bit.
	sort.Slice(keys, func(i, j int) bool {
		a, b := finals[keys[i]], finals[keys[j]]
		if a.out != b.out {
			return a.out < b.out
		}
		return keys[i] < keys[j]
	})
	for _, m := range keys {
		f := finals[m]
		dt.terms = append(dt.terms, f.t)
		for o := f.out; o < deal.NumOut; o++ {
			dt.byOut[o] = len(dt.terms)
		}
	}
	return dt, nil
}

// standing is the outcome of a dealer hand of hard total hard (ace: it
// holds one) if he draws no more, or -1 when he must draw.
func standing(hard int, ace, hitSoft17 bool) int {
	best, soft := hard, false
	if ace && hard+10 <= 21 {
		best, soft = hard+10, true
	}
	switch {
	case best == 22:
		return deal.Out22
	case best > 22:
		return deal.OutBust
	case best >= 17 && !(best == 17 && soft && hitSoft17):
		return best - 17
	}
	return -1
}

// eval is the outcome distribution of the dealer's draws from composition
// cnt of left cards.
func (dt *dealerTerms) eval(cnt *deal.Counts, left int) deal.Dist {
	// ff[v*maxDraw+k] = cnt_v (cnt_v - 1) ... (k factors); ff[0] = 1.
	var ff [11 * maxDraw]float64
	ff[0] = 1
	for v := 1; v <= 10; v++ {
		f := 1.0
		row := ff[v*maxDraw : (v+1)*maxDraw]
		row[0] = 1
		for k := 1; k < maxDraw; k++ {
			f *= float64(max(cnt[v]-k+1, 0))
			row[k] = f
		}
	}
	var inv [maxDraw + 1]float64 // 1 / ff(left, k)
	f := 1.0
	inv[0] = 1
	for k := 1; k <= dt.maxSize; k++ {
		f *= float64(left - k + 1)
		if f > 0 {
			inv[k] = 1 / f
		}
	}
	var d deal.Dist
	start := 0
	for o := range d {
		// Two sums, so consecutive terms do not wait on one addition.
		var a, b float64
		ts := dt.terms[start:dt.byOut[o]]
		i := 0
		for ; i+1 < len(ts); i += 2 {
			t, u := &ts[i], &ts[i+1]
			a += t.orders * inv[t.size] * (ff[t.idx[0]] * ff[t.idx[1]]) * (ff[t.idx[2]] * ff[t.idx[3]]) *
				((ff[t.idx[4]] * ff[t.idx[5]]) * ff[t.idx[6]])
			b += u.orders * inv[u.size] * (ff[u.idx[0]] * ff[u.idx[1]]) * (ff[u.idx[2]] * ff[u.idx[3]]) *
				((ff[u.idx[4]] * ff[u.idx[5]]) * ff[u.idx[6]])
		}
		if i < len(ts) {
			t := &ts[i]
			a += t.orders * inv[t.size] * (ff[t.idx[0]] * ff[t.idx[1]]) * (ff[t.idx[2]] * ff[t.idx[3]]) *
				((ff[t.idx[4]] * ff[t.idx[5]]) * ff[t.idx[6]])
		}
		d[o] = a + b
		start = dt.byOut[o]
	}
	return d
}
