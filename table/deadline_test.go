package table

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStateDeadlineIsThePhases: the state's deadline is when the current
// phase ends by itself; it used to keep the betting deadline through
// dealing and settling.
func TestStateDeadlineIsThePhases(t *testing.T) {
	h := start(t, "000", nil)
	h.waitPhase(PhaseBetting)
	st := h.c.Snapshot()
	assert.Equal(t, h.clk.Now().Add(h.c.opts.Rules.BettingTime), st.Deadline, "betting: bets close")
	require.NoError(t, h.submit(BetsClosed{Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	assert.Equal(t, PhaseDealing, h.c.Snapshot().Phase)
	assert.True(t, h.c.Snapshot().Deadline.IsZero(), "dealing ends when the cards say")
	for _, c := range []string{"Ts", "6d", "7c", "5h"} {
		require.NoError(t, h.card(c))
	}
	require.NoError(t, h.submit(Decision{Seat: 1, Player: "p1", Action: "stand"}))
	require.NoError(t, h.card("9s"))
	h.waitPhase(PhaseSettled)
	assert.Equal(t, h.clk.Now().Add(h.c.opts.SettleDelay), h.c.Snapshot().Deadline, "settled: the next round opens")
}
