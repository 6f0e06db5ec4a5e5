package table

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hasMonotonic reports whether t carries a monotonic clock reading, which
// time.Time's String shows as "m=±seconds".
func hasMonotonic(t time.Time) bool { return strings.Contains(t.String(), " m=") }

// TestMachineKeepsWallTimesOnly: the live table applies inputs at
// time.Now(), which carries a monotonic reading, while a replay applies
// them at the journal's times, which do not; time.Time's Sub, Before and
// After use the monotonic readings when both sides have one. Kept, they
// made the live machine measure its windows (the coalesced alarm's
// minute, a frozen timer's time left) on another clock than the replay
// of the same journal, and a wall-clock step between two inputs (NTP
// correcting a box that booted with a wrong clock) could then make a
// replay refuse an alarm the live table journaled and published: fewer
// events, lower seqs than the outbox's, a table that does not start.
// So the machine keeps wall times only, as a replay has them.
func TestMachineKeepsWallTimesOnly(t *testing.T) {
	x := newMT(t)
	x.at = time.Now() // a live time
	require.True(t, hasMonotonic(x.at), "the test needs a live time")
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"},
		BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	x.cards("Ts", "6d", "7c", "8h")
	timer := x.m.Timer()
	require.Equal(t, TimerDecision, timer.Name, "a decision timer runs")
	x.must(refusedHello(1))
	kept := map[string]time.Time{"now": x.m.now, "decision timer": timer.At, "alarm window": x.m.repeatAt["shoe.device_refused"]}
	for name, tm := range kept {
		require.False(t, tm.IsZero(), name)
		assert.False(t, hasMonotonic(tm), "%s keeps a monotonic reading: %s", name, tm)
	}
}
