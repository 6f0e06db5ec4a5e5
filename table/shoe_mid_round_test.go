package table

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShoeInMidRound: a shoe put in while a round is dealt (another shoe
// body, another shuffled set: SHOE_IN, then its SHOE_ID) went unremarked:
// the round went on with the new shoe's cards. From rules epoch 11 the
// table pauses (shoe.changed_mid_round, for integrity) with what to do,
// and the new shoe's cards wait for the supervisor. The journal of the
// epoch-10 build (testdata/epoch10-shoe-mid-round, its events written by
// that build) replays as that build played it.
func TestShoeInMidRound(t *testing.T) {
	const name = "epoch10-shoe-mid-round"
	want := readFixtureLines(t, name, "events.jsonl")
	assert.Equal(t, want, replayedEvents(t, fixtureJSONL(t, name, epochPhaseTimes)), "epoch 10 replays as it was written")

	got := replayedEvents(t, fixtureJSONL(t, name, CurrentRulesEpoch))
	require.GreaterOrEqual(t, len(got), 6)
	assert.Equal(t, want[:6], got[:6], "the same up to the new shoe")
	var alarm, dealtAfter, paused int
	for _, l := range got[6:] {
		switch {
		case strings.Contains(l, `"code":"shoe.changed_mid_round"`):
			alarm++
			assert.Contains(t, l, "void the round")
			assert.Contains(t, l, `"pauses":true`)
		case strings.Contains(l, `"kind":"card_dealt"`):
			dealtAfter++
		case strings.Contains(l, `"kind":"paused"`):
			paused++
		}
	}
	assert.Equal(t, 2, alarm, "one for the shoe going in, one for its id")
	assert.Equal(t, 1, paused, "one pause")
	assert.Zero(t, dealtAfter, "no card of the new shoe dealt to the round: %v", got[6:])

	// A shoe in before the round's first card (a demo's shoe connecting
	// after the bets closed) is the round's shoe: no alarm.
	j := fixtureJSONL(t, name, CurrentRulesEpoch)
	const firstCard = 4 // the line of the first card in journal.jsonl
	j.recs, j.kinds, j.at = j.recs[:firstCard], j.kinds[:firstCard], j.at[:firstCard]
	m, _, err := replayed(t, j)
	require.NoError(t, err)
	require.True(t, m.MidRound())
	at := time.Date(2026, 11, 25, 10, 0, 5, 0, time.UTC)
	for _, in := range []Input{ShoeIn{}, ShoeChanged{ShoeID: "S2"}} {
		st, err := m.Apply(at, in)
		require.NoError(t, err)
		for _, e := range st.Events {
			if a, ok := e.Body.(Alarm); ok {
				t.Errorf("alarm for a shoe in before the round's first card: %v", a)
			}
		}
	}
	assert.Empty(t, m.Paused())

	// Between rounds a shoe change is the ordinary one: no alarm.
	between := replayedEvents(t, fixtureJSONL(t, "epoch8-late-void", CurrentRulesEpoch))
	for _, l := range between {
		assert.NotContains(t, l, "shoe.changed_mid_round")
	}
}
