package table

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/livetable/livetable/table/card"
)

// TestShuffleFalseAlarmRate checks the package doc's formula against
// seeded random 8-deck shoes: the number of same-order runs of 3 or more
// between two shuffled shoes matches n·D·q², and no pair reaches the
// alarm threshold of 7.
func TestShuffleFalseAlarmRate(t *testing.T) {
	const pairs = 60
	rng := rand.New(rand.NewPCG(2026, 11))
	runs3, longest := 0, 0
	for range pairs {
		a := card.NewShoe(8, rng)
		b := card.NewShoe(8, rng)
		next := map[[2]card.Card]int{}
		for i := 0; i+1 < len(a); i++ {
			next[[2]card.Card{a[i], a[i+1]}]++
		}
		// Count alignments: for each start i in b and each position j in a
		// with a[j] == b[i], the run length.
		pos := map[card.Card][]int{}
		for j, c := range a {
			pos[c] = append(pos[c], j)
		}
		for i := range b {
			for _, j := range pos[b[i]] {
				if i > 0 && j > 0 && a[j-1] == b[i-1] {
					continue // not the start of a run
				}
				l := 1
				for i+l < len(b) && j+l < len(a) && a[j+l] == b[i+l] {
					l++
				}
				if l >= 3 {
					runs3++
				}
				longest = max(longest, l)
			}
		}
	}
	perPair := float64(runs3) / pairs
	want := ShuffleFalseAlarmRate(8, 3, 1)
	assert.InDelta(t, want, perPair, want*0.3, "runs of 3+ per pair: got %.2f, formula %.2f", perPair, want)
	assert.Less(t, longest, DefaultShuffleRun)
	assert.Less(t, ShuffleFalseAlarmRate(8, 7, 4), 1e-6)
}
