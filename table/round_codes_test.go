package table

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// playCodedRound plays one round of seat 1 to its settlement (stand on 16,
// the dealer 16 then 9) from bets closed at at, and opens betting again.
func playCodedRound(t *testing.T, x *mt, at time.Time, id string) string {
	t.Helper()
	x.at = at.Add(-time.Second) // must applies one second on
	x.must(BetsClosed{ID: "b" + id, Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	code := x.m.RoundID()
	x.cards("Ts", "6d", "7c", "5h")
	x.must(Decision{Seat: 1, Player: "p1", Action: "stand", ID: "d" + id})
	x.cards("9s")
	require.Equal(t, PhaseSettled, x.m.State().Phase)
	fireTimer(t, x)
	require.Equal(t, PhaseBetting, x.m.State().Phase)
	return code
}

// TestRoundCodesRepeatNone: a round's code is its start time (#HH:MM:SS)
// and a round started in the same second as the one before it gets a
// suffix. A wall clock stepped back (NTP correcting a clock that was
// ahead) past an earlier round's start named a later round with that
// round's code, as long as another round came between (only the code
// just before was looked at), and a void naming the first round (a
// signed void delayed within its window: the round fence compares codes)
// voided the second. From epochRoundCodes a round starting no later
// than the latest round start repeats none of the recent rounds' codes,
// and the void is refused (wrong_round); a clock going forward repeats a
// code the next day, as before.
func TestRoundCodesRepeatNone(t *testing.T) {
	x := newMT(t)
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"})
	at := x.at.Add(2 * time.Second)
	first := playCodedRound(t, x, at, "1")
	require.Equal(t, at.UTC().Format("#15:04:05"), first)
	// NTP steps the clock back 25 s: the next round starts before the
	// first did, the one after in the first one's second.
	second := playCodedRound(t, x, at.Add(-14*time.Second), "2")
	assert.NotEqual(t, first, second)
	third := playCodedRound(t, x, at, "3")
	assert.Equal(t, first+"-2", third, "the first round's second, the next suffix free")
	// Once more in that second, and a round started in the same second
	// as the one before it, as ever.
	fourth := playCodedRound(t, x, at, "4")
	assert.Equal(t, first+"-3", fourth)
	codes := []string{first, second, third, fourth}
	assert.Len(t, map[string]bool{first: true, second: true, third: true, fourth: true}, len(codes), "%v", codes)
	// A clock going forward repeats a code the next day, as ever: no
	// command naming a round lives that long (recall asks for the day).
	playCodedRound(t, x, at.Add(24*time.Hour-time.Minute), "m")
	assert.Equal(t, first, playCodedRound(t, x, at.Add(24*time.Hour), "n"))
	// Back again by a day and a minute: a round in the second of one of
	// the latest rounds still gets a code of its own.
	assert.Equal(t, first+"-4", playCodedRound(t, x, at, "b"))

	// The void a supervisor signed for the first round, reaching the
	// table in a round that started in its second.
	x.at = at.Add(24*time.Hour - time.Second)
	x.must(BetsClosed{ID: "b5", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	x.cards("Ts", "6d", "7c", "5h")
	require.NotEqual(t, first, x.m.RoundID())
	st, err := x.apply(Supervisor{Command: "void", By: "sup", Reason: "wrong payout", ID: "v1", Round: first})
	require.ErrorIs(t, err, ErrWrongRound)
	assert.Empty(t, st.Events)
	assert.Equal(t, PhaseDealing, x.m.State().Phase, "the round in play plays on")
}

// TestRoundCodesSurviveACheckpoint: the recent codes are checkpointed,
// so a round after a restart from a checkpoint repeats none of them
// either; a checkpoint written before they were kept gives the last
// code alone.
func TestRoundCodesSurviveACheckpoint(t *testing.T) {
	x := newMT(t)
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"})
	at := x.at.Add(2 * time.Second)
	first := playCodedRound(t, x, at, "1")
	second := playCodedRound(t, x, at.Add(time.Minute), "2")
	ck := x.m.Checkpoint()
	assert.Equal(t, []string{first, second}, ck.Codes)
	b, err := json.Marshal(ck)
	require.NoError(t, err)
	var back Checkpoint
	require.NoError(t, json.Unmarshal(b, &back))

	y := newMT(t)
	require.NoError(t, y.m.Restore(back))
	// The clock stepped back over the restart.
	assert.Equal(t, first+"-2", playCodedRound(t, y, at, "3"))

	old := back
	old.Codes, old.LastStart = nil, time.Time{}
	z := newMT(t)
	require.NoError(t, z.m.Restore(old))
	assert.Equal(t, second+"-2", playCodedRound(t, z, at.Add(time.Minute), "3"), "an older checkpoint: the last code")
	assert.Equal(t, first, playCodedRound(t, z, at, "4"), "which is all it knows")
}

// TestRecentCodesBounded: the machine keeps recentCodes codes, the
// latest, and checkpoints them.
func TestRecentCodesBounded(t *testing.T) {
	m := newMT(t).m
	var codes []string
	for i := range recentCodes + 5 {
		code := fmt.Sprintf("#10:%02d:%02d", i/60, i%60)
		codes = append(codes, code)
		m.rememberCode(code)
	}
	assert.Equal(t, codes[5:], m.codes)
	assert.Equal(t, codes[5:], m.Checkpoint().Codes)
}

// TestEpoch9RepeatedCodeReplays: testdata/epoch9-repeated-code is a
// journal a build before epochRoundCodes (b18c637, rules epoch 9) wrote,
// and the events it published replaying it: round #10:00:04 settles,
// NTP steps the clock back 24 s, round #09:59:50 settles, and the third
// round, started at 10:00:04 again, was named #10:00:04 too; a void a
// supervisor signed for the first round names it and voids the third.
// It replays into the same bytes under this build, labelled 9, 10 or 11
// (epochPhaseTimes and epochShoeMidRound judge no code). Labelled 12,
// the third round is
// #10:00:04-2 and the same void is refused, the round in play untouched.
func TestEpoch9RepeatedCodeReplays(t *testing.T) {
	const name = "epoch9-repeated-code"
	want := readFixtureLines(t, name, "events.jsonl")
	for _, epoch := range []int{epochRoundFence, epochPhaseTimes, epochShoeMidRound} {
		assert.Equal(t, want, replayedEvents(t, fixtureJSONL(t, name, epoch)), "epoch %d", epoch)
	}
	const voidAt = 24 // the void's record in journal.jsonl (its 25th line)
	for _, tt := range []struct {
		epoch int
		third string
		want  error
	}{{epochRoundFence, "#10:00:04", nil}, {epochPhaseTimes, "#10:00:04", nil}, {epochShoeMidRound, "#10:00:04", nil}, {epochRoundCodes, "#10:00:04-2", ErrWrongRound}} {
		j := fixtureJSONL(t, name, tt.epoch)
		in, err := DecodeInput(j.recs[voidAt])
		require.NoError(t, err)
		void := in.(Supervisor)
		require.Equal(t, "void", void.Command)
		require.Equal(t, "#10:00:04", void.Round, "named for the first round")
		voidTime := j.at[voidAt]
		j.recs, j.kinds, j.at = j.recs[:voidAt], j.kinds[:voidAt], j.at[:voidAt]
		m, _, err := replayed(t, j)
		require.NoError(t, err)
		require.Equal(t, tt.third, m.RoundID(), "epoch %d", tt.epoch)
		st, err := m.Apply(voidTime, void)
		if tt.want != nil {
			require.ErrorIs(t, err, tt.want, "epoch %d", tt.epoch)
			assert.Empty(t, st.Events)
			assert.Equal(t, PhaseDealing, m.State().Phase, "the third round plays on")
			continue
		}
		require.NoError(t, err, "epoch %d", tt.epoch)
		assert.True(t, settledIn(st.Events), "epoch %d voids the third round, as the epoch-9 build did", tt.epoch)
	}
}
