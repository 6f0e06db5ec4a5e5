package exact

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/strategy"
	"github.com/livetable/livetable/table/strategy/internal/deal"
)

// brute is the expected net of one round of the real engine (table/round)
// dealt up, v1, v2 from the small shoe cnt and played by table t as the
// simulator plays it, by enumerating every order the rest of the shoe can
// come out in (value by value, each with its exact chance): no
// exchangeability argument, no shortcut. It returns E[X] and E[X^2] per
// unit bet.
type brute struct {
	rs  *rules.Set
	t   *strategy.Table
	bet int64
}

func valueCard(v int) card.Card {
	return card.New(card.Rank(v), card.Spades) // Rank(10) is the Ten
}

// replay plays the prefix of cards into a fresh round; it returns the
// round when it wants one more card, or the net when it is settled.
func (b *brute) replay(prefix []int) (wantsCard bool, net int64, err error) {
	r := round.New(b.rs)
	if _, err := r.Start("b", []round.Bet{{Seat: 1, Main: b.bet}}, nil); err != nil {
		return false, 0, err
	}
	pos := 0
	for r.Phase() != round.PhaseSettled {
		var err error
		switch {
		case r.Phase() == round.PhaseInsurance:
			_, err = r.Apply(round.Input{Type: round.InInsurance, Seat: 1}, nil)
		case r.Awaiting() > 0:
			w := r.Waiting(nil)[0]
			_, err = r.Apply(round.Input{Type: round.InDecision, Seat: 1, Action: b.decide(w)}, nil)
		default:
			if pos == len(prefix) {
				return true, 0, nil
			}
			_, err = r.Apply(round.Input{Type: round.InCard, Card: valueCard(prefix[pos])}, nil)
			pos++
		}
		if err != nil {
			return false, 0, err
		}
	}
	if pos != len(prefix) {
		return false, 0, fmt.Errorf("settled with %d of %d cards", pos, len(prefix))
	}
	net, _ = r.Net()
	return false, net, nil
}

// decide asks the table what bjsim rtp's player asks it.
func (b *brute) decide(w round.Waiter) round.Action {
	s := strategy.Situation{Total: w.Total, Soft: w.Soft, PairValue: w.PairValue, Cards: w.Cards, Up: w.Up,
		CanDouble: w.Options.Has(round.ActDouble), CanSplit: w.Options.Has(round.ActSplit)}
	s.FreeDouble = s.CanDouble && b.rs.IsFreeDouble(w.Total, w.Soft) && w.Cards == 2
	s.FreeSplit = s.CanSplit && b.rs.FreeSplit && w.PairValue != 10
	switch b.t.Decide(s) {
	case strategy.Hit:
		return round.ActHit
	case strategy.Double:
		return round.ActDouble
	case strategy.Split:
		return round.ActSplit
	}
	return round.ActStand
}

// walk sums prob * net (and net^2) over every continuation of prefix.
func (b *brute) walk(t *testing.T, prefix []int, cnt deal.Counts, left int, p float64, m1, m2 *float64) {
	more, net, err := b.replay(prefix)
	require.NoError(t, err)
	if !more {
		x := float64(net) / float64(b.bet)
		*m1 += p * x
		*m2 += p * x * x
		return
	}
	require.Positive(t, left, "the small shoe ran out")
	for v := 1; v <= 10; v++ {
		if cnt[v] == 0 {
			continue
		}
		q := float64(cnt[v]) / float64(left)
		cnt[v]--
		b.walk(t, append(prefix, v), cnt, left-1, p*q, m1, m2)
		cnt[v]++
	}
}

// TestExactMatchesEngine: on a small shoe, the analysis of a deal equals
// the real engine's expectation over every order of the remaining cards,
// to rounding, for each game's rules and table: peeks (the hole card
// comes out before the player's cards), late naturals, splits with both
// deal orders, doubles after splits, free doubles and splits, charlies,
// the dealer's 22. The second moment is compared too where the deal
// cannot split (a split's covariance is the one approximate term).
func TestExactMatchesEngine(t *testing.T) {
	// Shoes of 19 cards of five values and 18 of seven: big enough that no
	// round runs out, small enough to enumerate, and far from infinite, so
	// a card taken from the wrong place would show.
	var shoe, shoe7 deal.Counts
	shoe[1], shoe[3], shoe[5], shoe[8], shoe[10] = 3, 4, 3, 3, 6
	shoe7[1], shoe7[2], shoe7[4], shoe7[6], shoe7[7], shoe7[9], shoe7[10] = 2, 2, 2, 2, 2, 2, 6
	type dealt struct {
		up, v1, v2 int
		shoe       *deal.Counts
	}
	deals := []dealt{
		{10, 8, 8, nil}, {1, 8, 8, nil}, {5, 8, 8, nil}, {10, 5, 5, nil}, {3, 1, 1, nil}, {1, 5, 1, nil}, {10, 3, 8, nil},
		{1, 10, 3, nil}, {5, 3, 8, nil}, {8, 1, 3, nil}, {1, 1, 10, nil}, {10, 1, 10, nil}, {8, 10, 5, nil}, {1, 3, 8, nil},
	}
	for i := range deals {
		deals[i].shoe = &shoe
	}
	for _, d := range []dealt{{6, 10, 2, nil}, {10, 7, 9, nil}, {1, 6, 4, nil}, {7, 2, 2, nil}, {9, 1, 6, nil}, {2, 4, 9, nil}} {
		d.shoe = &shoe7
		deals = append(deals, d)
	}
	for _, code := range append(rules.Codes(), "004-auto") {
		rs, err := rules.Game(code[:3])
		require.NoError(t, err)
		rs.Charlie = min(rs.Charlie, 5)       // a charlie this shoe can reach: 3 3 A A A...
		st := strategy.SisalNoDoubleNoSplit() // the automatic play of 004
		if code != "004-auto" {
			st, err = strategy.ForGame(code)
			require.NoError(t, err)
		}
		g, err := newGame(rs)
		require.NoError(t, err)
		b := &brute{rs: rs, t: st, bet: 1000}
		for _, d := range deals {
			if d.shoe == &shoe7 && code != "004-auto" {
				continue // the seven-value shoe: one table is enough
			}
			t.Run(fmt.Sprintf("%s/up%d_%d_%d", code, d.up, d.v1, d.v2), func(t *testing.T) {
				c, err := newCalcShoe(g, st, *d.shoe)
				require.NoError(t, err)
				want := c.deal(d.up, d.v1, d.v2)
				cnt := *d.shoe
				cnt[d.v1]--
				cnt[d.up]--
				cnt[d.v2]--
				var m1, m2 float64
				// Physical order: player, up, player, then the rest.
				b.walk(t, []int{d.v1, d.up, d.v2}, cnt, c.size-3, 1, &m1, &m2)
				assert.InDelta(t, m1, want.m1, 1e-12, "E[X]")
				if d.v1 != d.v2 {
					assert.InDelta(t, m2, want.m2, 1e-12, "E[X^2]")
				}
			})
		}
	}
}
