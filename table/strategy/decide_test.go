package strategy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/strategy"
)

// two builds the situation of a fresh two-card hand with every action
// allowed (split only on a pair).
func two(v1, v2, up int) strategy.Situation {
	s := strategy.HandSituation([]int{v1, v2}, up)
	s.CanDouble = true
	s.CanSplit = s.PairValue != 0
	return s
}

func noDouble(s strategy.Situation) strategy.Situation { s.CanDouble = false; return s }
func noSplit(s strategy.Situation) strategy.Situation  { s.CanSplit = false; return s }

func free(s strategy.Situation) strategy.Situation {
	// 002: hard 9-11 doubles and non-ten splits are free.
	s.FreeDouble = !s.Soft && s.Total >= 9 && s.Total <= 11
	s.FreeSplit = s.PairValue != 0 && s.PairValue != 10
	return s
}

func cards(up int, vs ...int) strategy.Situation {
	return strategy.HandSituation(vs, up)
}

func TestDecide(t *testing.T) {
	const (
		S = strategy.Stand
		H = strategy.Hit
		D = strategy.Double
		P = strategy.Split
	)
	tests := []struct {
		name string
		game string
		s    strategy.Situation
		want strategy.Action
	}{
		{"000 hard 16 vs T hits", "000", two(10, 6, 10), H},
		{"000 hard 16 vs 6 stands", "000", two(9, 7, 6), S},
		{"000 three-card 16 vs T hits", "000", cards(10, 4, 5, 7), H},
		{"000 hard 12 vs 2 hits", "000", two(10, 2, 2), H},
		{"000 hard 12 vs 4 stands", "000", two(10, 2, 4), S},
		{"000 hard 11 vs A hits (8 decks S17)", "000", two(6, 5, 1), H},
		{"000 hard 11 vs T hits (late BJ takes the double)", "000", two(6, 5, 10), H},
		{"000 hard 11 vs 6 doubles", "000", two(6, 5, 6), D},
		{"000 hard 11 vs 6, three cards: hit", "000", cards(6, 2, 4, 5), H},
		{"000 hard 10 vs 9 doubles", "000", two(6, 4, 9), D},
		{"000 hard 9 vs 2 hits", "000", two(5, 4, 2), H},
		{"000 hard 9 vs 3 doubles", "000", two(5, 4, 3), D},
		{"000 soft 18 vs 9 hits", "000", two(1, 7, 9), H},
		{"000 soft 18 vs T hits", "000", two(1, 7, 10), H},
		{"000 soft 18 vs 2 stands", "000", two(1, 7, 2), S},
		{"000 soft 18 vs 4 doubles", "000", two(1, 7, 4), D},
		{"000 soft 18 vs 4 no double: stand", "000", noDouble(two(1, 7, 4)), S},
		{"000 soft 18 vs 4, three cards: stand", "000", cards(4, 1, 3, 4), S},
		{"000 soft 17 vs 3 no double: hit", "000", noDouble(two(1, 6, 3)), H},
		{"000 soft 19 vs 6 stands", "000", two(1, 8, 6), S},
		{"000 8-8 vs 9 splits", "000", two(8, 8, 9), P},
		{"000 8-8 vs A splits (peek)", "000", two(8, 8, 1), P},
		{"000 8-8 vs T hits (late BJ takes both hands)", "000", two(8, 8, 10), H},
		{"000 8-8 vs 6 no split: hard 16 stands", "000", noSplit(two(8, 8, 6)), S},
		{"000 A-A vs 6 splits", "000", two(1, 1, 6), P},
		{"000 A-A vs A splits", "000", two(1, 1, 1), P},
		{"000 T-T vs 6 stands", "000", two(10, 10, 6), S},
		{"000 9-9 vs 7 stands", "000", two(9, 9, 7), S},
		{"000 9-9 vs 8 splits", "000", two(9, 9, 8), P},
		{"000 5-5 vs 9 doubles", "000", two(5, 5, 9), D},
		{"000 5-5 vs 9 no double: hit", "000", noDouble(two(5, 5, 9)), H},
		{"000 4-4 vs 5 hits (no DAS)", "000", two(4, 4, 5), H},
		{"000 2-2 vs 3 hits (no DAS)", "000", two(2, 2, 3), H},
		{"000 hard 20 stands", "000", cards(5, 10, 4, 6), S},
		{"000 hard 21 stands", "000", cards(5, 10, 4, 7), S},
		{"000 soft 21 stands", "000", cards(5, 1, 4, 6), S},
		{"000 over 21 stands", "000", cards(5, 10, 9, 8), S},
		{"001 A-A vs A hits (no peek, all lost)", "001", two(1, 1, 1), H},
		{"001 hard 11 vs T doubles (double returned)", "001", two(6, 5, 10), D},
		{"001 4-4 vs 5 splits (DAS)", "001", two(4, 4, 5), P},
		{"002 free double on hard 9 vs 2", "002", free(two(5, 4, 2)), D},
		{"002 free double on hard 11 vs A", "002", free(two(6, 5, 1)), D},
		{"002 free split 2-2 vs T", "002", free(two(2, 2, 10)), P},
		{"002 free split 9-9 vs 7", "002", free(two(9, 9, 7)), P},
		{"002 5-5: free double, not split", "002", free(two(5, 5, 5)), D},
		{"002 T-T stands (paid split)", "002", free(two(10, 10, 6)), S},
		{"002 hard 12 vs 4 hits (dealer 22 pushes)", "002", free(two(10, 2, 4)), H},
		{"002 hard 16 vs 5 stands", "002", cards(5, 10, 2, 4), S},
		{"002 five-card hard 16 vs 5 hits for the charlie", "002", cards(5, 2, 3, 2, 4, 5), H},
		{"002 five-card soft 20 hits: no card busts it", "002", cards(10, 1, 2, 2, 2, 3), H},
		{"002 four-card soft 19 vs 6 stands", "002", cards(6, 1, 2, 2, 4), S},
		{"001 nine-card hard 15 hits for the charlie", "001", cards(6, 1, 1, 1, 1, 2, 2, 2, 2, 3), H},
		{"001 three-card hard 15 vs 6 stands", "001", cards(6, 3, 2, 10), S},
		{"003 hard 11 vs A doubles (H17)", "003", two(6, 5, 1), D},
		{"003 soft 19 vs 6 doubles (H17)", "003", two(1, 8, 6), D},
		{"003 soft 19 vs 6 no double: stand", "003", noDouble(two(1, 8, 6)), S},
		{"004 hard 11 vs T doubles (printed)", "004", two(6, 5, 10), D},
		{"004 hard 11 vs A hits", "004", two(6, 5, 1), H},
		{"004 soft 18 vs 3 doubles", "004", two(1, 7, 3), D},
		{"004 soft 18 vs 3 no double: hit (as the no-double table)", "004", noDouble(two(1, 7, 3)), H},
		{"004 8-8 vs 9 splits", "004", two(8, 8, 9), P},
		{"004 8-8 vs T hits", "004", two(8, 8, 10), H},
		{"004 9-9 vs 7 stands", "004", two(9, 9, 7), S},
		{"004 A-A vs 9 splits", "004", two(1, 1, 9), P},
		{"004 A-A vs T hits", "004", two(1, 1, 10), H},
		{"004 4-4 vs 5 splits", "004", two(4, 4, 5), P},
		{"004 2-2 vs 8 hits", "004", two(2, 2, 8), H},
		{"004 hard 12 vs 3 hits", "004", two(9, 3, 3), H},
		{"004 hard 8 vs 6 hits", "004", two(5, 3, 6), H},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := strategy.ForGame(tc.game)
			require.NoError(t, err)
			assert.Equal(t, tc.want, tab.Decide(tc.s), "situation %+v", tc.s)
		})
	}
}

func TestSisalNoDoubleNoSplit(t *testing.T) {
	const (
		S = strategy.Stand
		H = strategy.Hit
	)
	tab := strategy.SisalNoDoubleNoSplit()
	tests := []struct {
		name string
		s    strategy.Situation
		want strategy.Action
	}{
		{"hard 11 vs 6 hits instead of doubling", two(6, 5, 6), H},
		{"hard 12 vs 4 stands", two(10, 2, 4), S},
		{"hard 16 vs 7 hits", two(10, 6, 7), H},
		{"soft 18 vs 2 stands", two(1, 7, 2), S},
		{"soft 18 vs 4 hits (printed)", two(1, 7, 4), H},
		{"soft 18 vs 8 stands", two(1, 7, 8), S},
		{"8-8 vs 6 stands", two(8, 8, 6), S},
		{"8-8 vs 9 hits", two(8, 8, 9), H},
		{"A-A vs 5 stands (printed like hard 12)", two(1, 1, 5), S},
		{"A-A vs 3 hits", two(1, 1, 3), H},
		{"6-6 vs 3 hits", two(6, 6, 3), H},
		{"9-9 vs 7 stands", two(9, 9, 7), S},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tab.Decide(tc.s))
		})
	}
}

// TestDecideNeverIllegal walks every situation of every table and checks
// that a double or split is only returned when allowed.
func TestDecideNeverIllegal(t *testing.T) {
	tables := map[string]*strategy.Table{"004-auto": strategy.SisalNoDoubleNoSplit()}
	for _, code := range []string{"000", "001", "002", "003", "004"} {
		tab, err := strategy.ForGame(code)
		require.NoError(t, err)
		tables[code] = tab
	}
	for name, tab := range tables {
		splits, doubles := 0, 0
		for up := -1; up <= 12; up++ {
			for total := 0; total <= 30; total++ {
				for pair := -1; pair <= 11; pair++ {
					for flags := 0; flags < 32; flags++ {
						s := strategy.Situation{Total: total, Up: up, PairValue: pair, Cards: 2,
							Soft:       flags&1 != 0,
							CanDouble:  flags&2 != 0,
							CanSplit:   flags&4 != 0,
							FreeDouble: flags&8 != 0,
							FreeSplit:  flags&16 != 0,
						}
						a := tab.Decide(s)
						switch a {
						case strategy.Double:
							doubles++
							require.True(t, s.CanDouble, "%s: double when not allowed: %+v", name, s)
						case strategy.Split:
							splits++
							require.True(t, s.CanSplit, "%s: split when not allowed: %+v", name, s)
						}
					}
				}
			}
		}
		if name == "004-auto" {
			assert.Zero(t, splits+doubles, "the no-double no-split table doubled or split")
		} else {
			assert.Positive(t, splits, name)
			assert.Positive(t, doubles, name)
		}
	}
}

func TestHandSituation(t *testing.T) {
	tests := []struct {
		name string
		vs   []int
		want strategy.Situation
	}{
		{"hard", []int{10, 6}, strategy.Situation{Total: 16, Cards: 2, Up: 7}},
		{"soft", []int{1, 6}, strategy.Situation{Total: 17, Soft: true, Cards: 2, Up: 7}},
		{"aces", []int{1, 1}, strategy.Situation{Total: 12, Soft: true, PairValue: 1, Cards: 2, Up: 7}},
		{"ten pair", []int{10, 10}, strategy.Situation{Total: 20, PairValue: 10, Cards: 2, Up: 7}},
		{"soft turned hard", []int{1, 6, 9}, strategy.Situation{Total: 16, Cards: 3, Up: 7}},
		{"bust", []int{10, 6, 9}, strategy.Situation{Total: 25, Cards: 3, Up: 7}},
		{"bad values are not a pair", []int{11, 11}, strategy.Situation{Total: 22, Cards: 2, Up: 7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, strategy.HandSituation(tc.vs, 7))
		})
	}
}

func TestSituationOf(t *testing.T) {
	hand := []card.Card{card.MustParse("Ks"), card.MustParse("Qh")}
	s := strategy.SituationOf(hand, card.MustParse("As"))
	assert.Equal(t, strategy.Situation{Total: 20, PairValue: 10, Cards: 2, Up: 1}, s)
	s = strategy.SituationOf([]card.Card{card.MustParse("Ad"), card.MustParse("6c"), card.MustParse("4c")}, card.MustParse("9s"))
	assert.Equal(t, strategy.Situation{Total: 21, Soft: true, Cards: 3, Up: 9}, s)
	s = strategy.SituationOf([]card.Card{{}, {}}, card.Card{})
	assert.Equal(t, strategy.Situation{Cards: 2}, s, "invalid cards are value 0, not a pair")
	assert.Equal(t, strategy.Stand, strategy.Sisal().Decide(s))
	ace := card.MustParse("As")
	allocs := testing.AllocsPerRun(100, func() { _ = strategy.SituationOf(hand, ace) })
	assert.Zero(t, allocs)
}

func TestActionString(t *testing.T) {
	for a, want := range map[strategy.Action]string{
		strategy.Stand: "stand", strategy.Hit: "hit", strategy.Double: "double",
		strategy.Split: "split", strategy.Action(9): "Action(9)",
	} {
		assert.Equal(t, want, a.String())
	}
}

func TestDecideAllocs(t *testing.T) {
	tab, err := strategy.ForGame("000")
	require.NoError(t, err)
	s := two(8, 8, 10)
	allocs := testing.AllocsPerRun(1000, func() { _ = tab.Decide(s) })
	assert.Zero(t, allocs)
}

func BenchmarkDecide(b *testing.B) {
	tab, err := strategy.ForGame("002")
	require.NoError(b, err)
	var sits []strategy.Situation
	for up := 1; up <= 10; up++ {
		for v1 := 1; v1 <= 10; v1++ {
			for v2 := v1; v2 <= 10; v2++ {
				sits = append(sits, free(two(v1, v2, up)))
			}
		}
	}
	b.ReportAllocs()
	var sink strategy.Action
	i := 0
	for b.Loop() {
		sink ^= tab.Decide(sits[i])
		i++
		if i == len(sits) {
			i = 0
		}
	}
	_ = sink
}
