package table

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSeqGapSaysChangeTheShoe: after a restore that lost events, the
// table's record of the shoe in play (the integrity book) is the
// backup's, without the cards dealt since; deploy.md says to change the
// shoe before resuming, but the paused table's line said only "table
// paused (published events lost ...)", and a supervisor who followed the
// console resumed on the shoe: its over-count and code checks missed the
// lost stretch's cards, and its count at shoe out could not match (tried
// on the binaries: 17 dealt in the record, 21 out of the shoe). The line
// now says to change it, until the shoe in play is another.
func TestSeqGapSaysChangeTheShoe(t *testing.T) {
	x := newMT(t)
	x.must(ShoeChanged{ShoeID: "S1"})
	gap := SeqGap{LostFrom: 40, LostTo: 50, By: "anna", Reason: "restored the 02:00 backup"}
	x.must(gap)
	st := x.m.State()
	require.True(t, st.Paused)
	assert.Contains(t, st.Round.Next, "change the shoe before resuming")
	assert.Contains(t, st.Round.Next, gap.Message(), "the loss still named")

	// A new shoe in play: the line no longer asks for it.
	x.must(ShoeChanged{ShoeID: "S2"})
	st = x.m.State()
	require.True(t, st.Paused)
	assert.NotContains(t, st.Round.Next, "change the shoe")

	// A table with no shoe in play at the gap has none to change.
	y := newMT(t)
	y.must(gap)
	assert.NotContains(t, y.m.State().Round.Next, "change the shoe")
}
