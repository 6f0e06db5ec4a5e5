package table

import (
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestControllerCorrectAt: through the controller, a double click's
// second correct naming the card the first filled is refused, nothing is
// journaled for it, and after a restart (the journal replayed, the
// refusals reloaded) the table still waits for the next card at the same
// position, the repeat of the refused id gets the same answer and
// sentinel, and a correct naming the next card is taken.
func TestControllerCorrectAt(t *testing.T) {
	dir := t.TempDir()
	j := &memJournal{}
	clk := clockwork.NewFakeClockAt(ckEpoch)
	rf, err := OpenRefusals(nil, dir, zerolog.Nop())
	require.NoError(t, err)
	h := startWith(t, "000", j, clk, func(o *Options) { o.Refusals = rf })
	h.waitPhase(PhaseBetting)
	require.NoError(t, h.submit(ShoeChanged{ShoeID: "S1"}))
	require.NoError(t, h.submit(BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	require.NoError(t, h.card("Ts"))
	require.NoError(t, h.submit(misreadN(2)))
	require.NoError(t, h.submit(misreadN(3)))
	s := h.c.Snapshot()
	require.Equal(t, []int{2, 3}, s.MisreadsAt)

	require.NoError(t, h.submit(correctAt("c1", "anna", "6d", 2)))
	h.ping()
	records := len(j.recs)
	double := correctAt("c2", "anna", "6d", 2)
	errDouble := h.submit(double)
	require.ErrorIs(t, errDouble, ErrMisreadAt)
	assert.Contains(t, errDouble.Error(), "card 2 of the shoe was corrected already (6d); the next to correct is card 3")
	h.ping()
	assert.Len(t, j.recs, records, "a refused correct is not journaled")
	assert.Equal(t, 3, h.c.Snapshot().MisreadAt)
	h.stop()
	require.NoError(t, rf.Close())

	rf2, err := OpenRefusals(nil, dir, zerolog.Nop())
	require.NoError(t, err)
	defer rf2.Close()
	h2 := startWith(t, "000", j, clk, func(o *Options) { o.Refusals = rf2 })
	h2.ping()
	s = h2.c.Snapshot()
	assert.Equal(t, 3, s.MisreadAt, "the replay gives the waiting card the same position")
	assert.Equal(t, []int{3}, s.MisreadsAt)
	err = h2.submit(double)
	require.ErrorIs(t, err, ErrMisreadAt, "the same sentinel after the restart")
	assert.Equal(t, errDouble.Error(), err.Error(), "the same answer after the restart")
	require.NoError(t, h2.submit(correctAt("c3", "anna", "8h", 3)))
	s = h2.c.Snapshot()
	assert.Zero(t, s.MisreadsPending)
	assert.Equal(t, "Ts 8h", cardsOf(s.Round.Seats[0].Cards))
}
