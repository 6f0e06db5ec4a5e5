package sidebets

import (
	"fmt"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
)

// statedFigures are the side-bet returns the five documents state, with the
// reading of each bet that variants.md records. Each must come out of the
// exact analysis within 0.01 percentage points.
var statedFigures = []struct {
	name   string
	kind   Kind
	pt     func() Paytable
	decks  int
	stated float64
}{
	{"000 perfect pairs", KindPerfectPairs, PerfectPairsPaytable, 8, 95.90},
	{"000 21+3", KindTwentyOnePlus3, TwentyOnePlus3Paytable, 8, 96.30},
	{"001 21+3", KindTwentyOnePlus3, TwentyOnePlus3Paytable, 6, 95.38},
	{"002 perfect pairs", KindPerfectPairs, PerfectPairsPaytable, 8, 95.90},
	{"002 21+3", KindTwentyOnePlus3, TwentyOnePlus3Paytable, 8, 96.30},
	{"002 hot 3", KindHot3, Hot3Paytable, 8, 94.60},
	{"002 bust it", KindBustIt, BustItPaytable, 8, 94.12},
	{"003 21+3", KindTwentyOnePlus3, TwentyOnePlus3Paytable, 8, 96.30},
	{"003 player pair", KindPerfectPairs, PerfectPairsPaytable, 8, 95.90},
	{"003 dealer pair", KindDealerPair, PerfectPairsPaytable, 8, 95.90},
	{"003 top 3", KindTop3, Top3Paytable, 8, 91.00},
	{"004 perfect pair", KindPerfectPairs, SisalPairsPaytable, 6, 94.21},
}

func TestReturnReproducesStatedFigures(t *testing.T) {
	for _, tt := range statedFigures {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Return(tt.kind, tt.pt(), tt.decks)
			require.NoError(t, err)
			assert.InDelta(t, tt.stated, a.Percent(), 0.01)
		})
	}
	t.Run("004 insurance", func(t *testing.T) {
		a, err := InsuranceReturn(6, 2)
		require.NoError(t, err)
		assert.InDelta(t, 92.60, a.Percent(), 0.01)
	})
	t.Run("001 21+3 to three decimals", func(t *testing.T) {
		a, err := Return(KindTwentyOnePlus3, TwentyOnePlus3Paytable(), 6)
		require.NoError(t, err)
		assert.InDelta(t, 95.379, a.Percent(), 0.0005)
	})
}

// TestReturnClosedForms checks the bets simple enough to count by hand.
// Pairs on N decks: after the first card, T-1 = 52N-1 cards remain, of which
// N-1 make a perfect pair, N a coloured one and 2N a mixed one.
func TestReturnClosedForms(t *testing.T) {
	pairs := func(decks int, perfect, coloured, mixed int64) *big.Rat {
		n := int64(decks)
		rest := 52*n - 1
		won := (n-1)*(1+perfect) + n*(1+coloured) + 2*n*(1+mixed)
		return big.NewRat(won, rest)
	}
	tests := []struct {
		name string
		got  func() (Analysis, error)
		want *big.Rat
	}{
		{"pairs 8 decks 25/12/6", func() (Analysis, error) { return Return(KindPerfectPairs, PerfectPairsPaytable(), 8) }, big.NewRat(398, 415)},
		{"pairs 6 decks 30/10/5", func() (Analysis, error) { return Return(KindPerfectPairs, SisalPairsPaytable(), 6) }, big.NewRat(293, 311)},
		{"pairs 1 deck formula", func() (Analysis, error) { return Return(KindDealerPair, PerfectPairsPaytable(), 1) }, pairs(1, 25, 12, 6)},
		{"pairs 6 decks formula", func() (Analysis, error) { return Return(KindPerfectPairs, PerfectPairsPaytable(), 6) }, pairs(6, 25, 12, 6)},
		{"insurance 6 decks", func() (Analysis, error) { return InsuranceReturn(6, 2) }, big.NewRat(3*96, 311)},
		{"insurance 8 decks", func() (Analysis, error) { return InsuranceReturn(8, 2) }, big.NewRat(3*128, 415)},
		{"insurance after two non-tens", func() (Analysis, error) {
			return InsuranceReturn(6, 2, card.MustParse("9s"), card.MustParse("7d"))
		}, big.NewRat(3*96, 309)},
		{"insurance after the last Ace of spades", func() (Analysis, error) {
			return InsuranceReturn(1, 2, card.MustParse("As"), card.MustParse("Ks"))
		}, big.NewRat(3*15, 49)},
		{"insurance after two tens", func() (Analysis, error) {
			return InsuranceReturn(6, 2, card.MustParse("Ks"), card.MustParse("Td"))
		}, big.NewRat(3*94, 309)},
		{"empty paytable returns nothing", func() (Analysis, error) { return Return(KindTop3, Paytable{}, 8) }, new(big.Rat)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := tt.got()
			require.NoError(t, err)
			assert.Equal(t, tt.want.RatString(), a.Return.RatString())
		})
	}
}

func TestProbabilitiesSumToOne(t *testing.T) {
	for _, decks := range []int{1, 6, 8} {
		for _, k := range Kinds() {
			pt, err := DefaultPaytable(k)
			require.NoError(t, err)
			a, err := Return(k, pt, decks)
			require.NoError(t, err)
			sum := new(big.Rat)
			results, err := k.Results()
			require.NoError(t, err)
			for r, p := range a.Prob {
				assert.Contains(t, results, r, "%s produced a foreign result", k)
				assert.True(t, p.Sign() >= 0, "%s %s negative probability", k, r)
				sum.Add(sum, p)
			}
			assert.Equal(t, "1", sum.RatString(), "%s on %d decks", k, decks)
		}
	}
}

// TestThreeCardMatchesPhysicalShoe recounts the card-class enumeration by
// dealing every ordered triple of physical cards of a one-deck and a
// two-deck shoe.
func TestThreeCardMatchesPhysicalShoe(t *testing.T) {
	for _, decks := range []int{1, 2} {
		comp := card.NewComposition(decks)
		shoe := comp.Cards()
		counts := map[Kind]map[Result]int64{KindTwentyOnePlus3: {}, KindHot3: {}, KindPerfectPairs: {}}
		var triples, pairs int64
		for i := range shoe {
			for j := range shoe {
				if j == i {
					continue
				}
				pairs++
				counts[KindPerfectPairs][Pair(shoe[i], shoe[j])]++
				for l := range shoe {
					if l == i || l == j {
						continue
					}
					triples++
					counts[KindTwentyOnePlus3][ThreeCard(shoe[i], shoe[j], shoe[l])]++
					counts[KindHot3][Hot3(shoe[i], shoe[j], shoe[l])]++
				}
			}
		}
		for k, byResult := range counts {
			pt, err := DefaultPaytable(k)
			require.NoError(t, err)
			a, err := Return(k, pt, decks)
			require.NoError(t, err)
			total := triples
			if k == KindPerfectPairs {
				total = pairs
			}
			require.Len(t, a.Prob, len(byResult), "%s on %d decks", k, decks)
			for r, n := range byResult {
				require.Contains(t, a.Prob, r)
				assert.Equal(t, big.NewRat(n, total).RatString(), a.Prob[r].RatString(), "%s %s on %d decks", k, r, decks)
			}
		}
	}
}

// naiveBustIt is an independent float64 computation of Bust It: it walks
// every sequence of values (the seat's two cards, then the dealer's draws)
// with its probability, without grouping sequences into multisets.
func naiveBustIt(decks int, h17 bool, pt Paytable) float64 {
	var n [11]int // by value 1..10
	for v := 1; v <= 9; v++ {
		n[v] = 4 * decks
	}
	n[10] = 16 * decks
	total := 52 * decks
	var dealer func(hard int, ace bool, cards int) float64
	dealer = func(hard int, ace bool, cards int) float64 {
		best, soft := hard, false
		if ace && hard+10 <= 21 {
			best, soft = hard+10, true
		}
		switch {
		case hard > 21:
			c := min(cards, 8)
			return float64(1 + pt[Result(fmt.Sprintf("bust_%d_cards", c))])
		case cards >= 2 && (best > 17 || best == 17 && !(soft && h17)):
			return 0
		}
		ev := 0.0
		for v := 1; v <= 10; v++ {
			if n[v] == 0 {
				continue
			}
			p := float64(n[v]) / float64(total)
			n[v]--
			total--
			ev += p * dealer(hard+v, ace || v == 1, cards+1)
			n[v]++
			total++
		}
		return ev
	}
	ev := 0.0
	for a := 1; a <= 10; a++ {
		pa := float64(n[a]) / float64(total)
		n[a]--
		total--
		for b := a; b <= 10; b++ { // b < a is the same pair in the other order
			pb := float64(n[b]) / float64(total)
			if a != b {
				pb *= 2
			}
			if a == 1 && b == 10 {
				ev += pa * pb // the seat's blackjack pushes
				continue
			}
			n[b]--
			total--
			ev += pa * pb * dealer(0, false, 0)
			n[b]++
			total++
		}
		n[a]++
		total++
	}
	return 100 * ev
}

func TestBustItMatchesSequenceWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("walks every dealer sequence once per pair of seat cards")
	}
	for _, tt := range []struct {
		decks int
		h17   bool
	}{{1, false}, {1, true}, {8, false}} {
		var opts []Option
		if tt.h17 {
			opts = append(opts, DealerHitsSoft17())
		}
		a, err := Return(KindBustIt, BustItPaytable(), tt.decks, opts...)
		require.NoError(t, err)
		assert.InDelta(t, naiveBustIt(tt.decks, tt.h17, BustItPaytable()), a.Percent(), 1e-9, "%d decks h17=%v", tt.decks, tt.h17)
	}
}

// TestBustItConditioning pins down what the stated 94.12% assumes: the
// seat's own two cards leave the shoe before the dealer draws. Drawing the
// dealer's hand from the full shoe misses the figure.
func TestBustItConditioning(t *testing.T) {
	exact, err := Return(KindBustIt, BustItPaytable(), 8)
	require.NoError(t, err)
	full, err := Return(KindBustIt, BustItPaytable(), 8, IgnorePlayerCards())
	require.NoError(t, err)
	h17, err := Return(KindBustIt, BustItPaytable(), 8, DealerHitsSoft17())
	require.NoError(t, err)
	assert.InDelta(t, 94.12, exact.Percent(), 0.005)
	assert.Greater(t, 94.12-full.Percent(), 0.01, "full-shoe reading unexpectedly reproduces the figure")
	assert.Greater(t, h17.Percent(), 95.0, "H17 makes more multi-card busts")
}

func TestReturnErrors(t *testing.T) {
	tests := []struct {
		name    string
		kind    Kind
		pt      Paytable
		decks   int
		wantErr error
	}{
		{"zero decks", KindPerfectPairs, PerfectPairsPaytable(), 0, ErrDecks},
		{"too many decks", KindPerfectPairs, PerfectPairsPaytable(), MaxDecks + 1, ErrDecks},
		{"unknown kind", Kind("royal_match"), Paytable{}, 8, ErrUnknownKind},
		{"foreign paytable", KindHot3, PerfectPairsPaytable(), 8, ErrPaytable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Return(tt.kind, tt.pt, tt.decks)
			require.ErrorIs(t, err, tt.wantErr)
		})
	}
	t.Run("insurance decks", func(t *testing.T) {
		_, err := InsuranceReturn(0, 2)
		require.ErrorIs(t, err, ErrDecks)
	})
	t.Run("insurance negative pays", func(t *testing.T) {
		_, err := InsuranceReturn(6, -1)
		require.ErrorIs(t, err, ErrPaytable)
	})
	t.Run("insurance seen a card twice in one deck", func(t *testing.T) {
		as := card.MustParse("As")
		_, err := InsuranceReturn(1, 2, as, as)
		require.ErrorIs(t, err, card.ErrOverCount)
	})
	t.Run("insurance with no Ace left for the up card", func(t *testing.T) {
		_, err := InsuranceReturn(1, 2, cards(t, "As", "Ah", "Ad", "Ac")...)
		require.ErrorIs(t, err, card.ErrOverCount)
	})
	t.Run("insurance invalid seen card", func(t *testing.T) {
		_, err := InsuranceReturn(6, 2, card.Card{})
		require.ErrorIs(t, err, card.ErrSyntax)
	})
}

func TestAnalysisPercentOfZeroValue(t *testing.T) {
	assert.Zero(t, Analysis{}.Percent())
}
