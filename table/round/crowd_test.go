package round

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// crowdRound starts a 002 round of n players on seat 1 (p0..p{n-1}, slot
// i is p{i}) and deals 5 6 to the seat, 9 up and 8 in the hole: every
// player holds hard 11 and is asked to decide.
func crowdRound(t *testing.T, n int) *Round {
	t.Helper()
	r := New(game(t, "002"))
	bets := make([]Bet, n)
	for i := range bets {
		bets[i] = Bet{Seat: 1, Player: fmt.Sprintf("p%d", i), Main: 1000}
	}
	evs, err := r.Start("r1", bets, nil)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	feed(t, r, "5s", "9d", "6c", "8h")
	require.Equal(t, n, r.Awaiting())
	return r
}

// TestDecideBatch: each entry of a batch gets its own verdict; a bad
// entry changes nothing and does not stop the others; a batch that
// applies nothing, or comes when no decision is open, is refused whole.
func TestDecideBatch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []SlotDecision
		codes   []EntryCode
		refused bool
	}{
		{"all apply", []SlotDecision{{Slot: 0, Action: ActStand}, {Slot: 1, Action: ActHit}, {Slot: 2, Action: ActDouble, Player: "p2"}},
			[]EntryCode{EntryApplied, EntryApplied, EntryApplied}, false},
		{"partial", []SlotDecision{
			{Slot: 0, Action: ActStand},
			{Slot: 99, Action: ActStand},                    // no such slot
			{Slot: -1, Action: ActStand},                    // no such slot
			{Slot: 1, Action: ActStand, Player: "p2"},       // slot 1 is p1
			{Slot: 0, Action: ActHit},                       // slot 0 again
			{Slot: 3, Action: ActSplit},                     // 5 6 is no pair
			{Slot: 4, Action: ActStand, Answer: AnswerTake}, // no insurance offered
			{Slot: 5, Action: ActHit},
		}, []EntryCode{EntryApplied, EntryUnknownPlayer, EntryUnknownPlayer, EntryUnknownPlayer, EntryDuplicate,
			EntryIllegal, EntryNotAwaited, EntryApplied}, false},
		{"nothing applies", []SlotDecision{{Slot: 3, Action: ActSplit}, {Slot: 40, Action: ActHit}},
			[]EntryCode{EntryIllegal, EntryUnknownPlayer}, true},
		{"empty", nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := crowdRound(t, 20)
			before := r.Snapshot()
			awaiting := r.Awaiting()
			evs, codes, applied, err := r.DecideBatch(tc.entries, nil, nil)
			assert.Equal(t, tc.codes, codes)
			if tc.refused {
				require.ErrorIs(t, err, ErrOutOfTurn)
				assert.Equal(t, before, r.Snapshot())
				assert.Equal(t, awaiting, r.Awaiting())
				return
			}
			require.NoError(t, err)
			n := 0
			for _, c := range tc.codes {
				if c == EntryApplied {
					n++
				}
			}
			assert.Equal(t, n, applied)
			assert.Equal(t, awaiting-n, r.Awaiting(), "each applied entry answers one player")
			assert.Empty(t, evs, "a crowd's decisions make no event per player")
		})
	}
}

// TestDecideBatchClosedWindow: before the deal is done and after the
// round is settled, a batch is refused whole.
func TestDecideBatchClosedWindow(t *testing.T) {
	r := New(game(t, "002"))
	_, err := r.Start("r1", []Bet{{Seat: 1, Player: "a", Main: 1000}}, nil)
	require.NoError(t, err)
	_, codes, _, err := r.DecideBatch([]SlotDecision{{Slot: 0, Action: ActStand}}, nil, nil)
	require.ErrorIs(t, err, ErrOutOfTurn, "dealing")
	assert.Empty(t, codes)
	feed(t, r, "Ts", "9d", "9c", "8h")
	_, _, _, err = r.DecideBatch([]SlotDecision{{Slot: 0, Action: ActStand}}, nil, nil)
	require.NoError(t, err)
	require.Equal(t, PhaseSettled, r.Phase())
	_, _, _, err = r.DecideBatch([]SlotDecision{{Slot: 0, Action: ActStand}}, nil, nil)
	require.ErrorIs(t, err, ErrOutOfTurn, "settled")
}

// TestCrowdSameAsOneByOne: a crowd decided by batches settles exactly as
// the same decisions given one by one by player id, slot by slot, and
// its prompts count the waiting hands.
func TestCrowdSameAsOneByOne(t *testing.T) {
	a, b := crowdRound(t, 40), crowdRound(t, 40)
	prompts := a.Prompts(nil)
	require.Len(t, prompts, 1)
	assert.Equal(t, Prompt{Seat: 1, Hand: 1, Total: 11, Cards: 2, Options: a.options(&a.boxes[0].players[0], &a.boxes[0].players[0].hands[0]),
		Players: 40}, prompts[0])
	assert.True(t, prompts[0].Options.Has(ActDouble))
	actions := []Action{ActStand, ActHit, ActDouble, ActHit}
	var batch []SlotDecision
	for i := range 40 {
		batch = append(batch, SlotDecision{Slot: int32(i), Action: actions[i%4]})
		decide(t, b, 1, fmt.Sprintf("p%d", i), actions[i%4])
	}
	p0 := a.Prompted()
	_, _, applied, err := a.DecideBatch(batch, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 40, applied)
	feed(t, a, "2c")
	feed(t, b, "2c")
	assert.Greater(t, a.Prompted(), p0, "the hitters are asked again")
	prompts = a.Prompts(nil)
	require.Len(t, prompts, 1)
	assert.EqualValues(t, 20, prompts[0].Players, "the 20 hitters hold 13")
	assert.EqualValues(t, 13, prompts[0].Total)
	// Everyone left times out: hit to 11, stand above (002).
	_, err = a.Apply(Input{Type: InDecisionTimeout}, nil)
	require.NoError(t, err)
	_, err = b.Apply(Input{Type: InDecisionTimeout}, nil)
	require.NoError(t, err)
	require.Equal(t, PhaseSettled, a.Phase())
	require.Equal(t, a.Settlement(), b.Settlement())
	for i, sr := range a.Settlement().Seats {
		assert.Equal(t, i, sr.Slot)
		seat, id, ok := a.SlotPlayer(i)
		require.True(t, ok)
		assert.Equal(t, sr.Player, id)
		assert.Equal(t, 1, seat)
		assert.Equal(t, i, a.SlotOf(1, id))
	}
	assert.Equal(t, -1, a.SlotOf(1, "nobody"))
}

// TestCrowdInsurance: with an ace up a crowd answers insurance by batch;
// the last answer ends the offer (a count, no scan per answer), and the
// decisions later in the same batch meet the play.
func TestCrowdInsurance(t *testing.T) {
	r := New(game(t, "002"))
	bets := make([]Bet, 30)
	for i := range bets {
		bets[i] = Bet{Seat: 1, Player: fmt.Sprintf("p%d", i), Main: 1000}
	}
	_, err := r.Start("r1", bets, nil)
	require.NoError(t, err)
	feed(t, r, "5s", "As", "6c", "8h")
	require.Equal(t, PhaseInsurance, r.Phase())
	var batch []SlotDecision
	for i := range 30 {
		a := AnswerDecline
		if i%3 == 0 {
			a = AnswerTake
		}
		batch = append(batch, SlotDecision{Slot: int32(i), Answer: a})
	}
	_, codes, applied, err := r.DecideBatch(batch[:29], nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 29, applied)
	assert.Equal(t, PhaseInsurance, r.Phase(), "one answer is missing")
	_, codes, _, err = r.DecideBatch(append(batch[29:], SlotDecision{Slot: 0, Action: ActStand}, SlotDecision{Slot: 1, Answer: AnswerTake}), codes, nil)
	require.NoError(t, err)
	assert.Equal(t, []EntryCode{EntryApplied, EntryApplied, EntryNotAwaited}, codes)
	assert.Equal(t, PhasePlay, r.Phase())
	assert.Equal(t, 29, r.Awaiting())
}
