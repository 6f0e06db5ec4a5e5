package table

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
)

// crowdMT is a 002 machine with n players on seat 1 (p0..p{n-1}, slot i
// is p{i}), dealt 5 6 against 9 up and 8 in the hole: every player holds
// hard 11 and is asked.
func crowdMT(t *testing.T, n int) *mt {
	t.Helper()
	rs, err := rules.Game("002")
	require.NoError(t, err)
	m, err := NewMachine(MachineConfig{Table: "t1", Rules: rs, SettleDelay: 4 * time.Second,
		BetsGrace: 5 * time.Second, ResumeGrace: 5 * time.Second})
	require.NoError(t, err)
	x := &mt{t: t, m: m, at: ckEpoch}
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"}, BetsClosed{ID: "bets", Bets: crowdBets(n)})
	x.cards("5s", "9d", "6c", "8h")
	require.Equal(t, n, m.rnd.Awaiting())
	return x
}

func crowdBets(n int) []Bet {
	bets := make([]Bet, n)
	for i := range bets {
		bets[i] = Bet{Seat: 1, Player: fmt.Sprintf("p%d", i), Main: 1000}
	}
	return bets
}

// entries is a batch of one action for slots lo..hi-1.
func entries(lo, hi int, action string) []DecisionEntry {
	var es []DecisionEntry
	for i := lo; i < hi; i++ {
		es = append(es, DecisionEntry{Slot: i, Player: fmt.Sprintf("p%d", i), Action: action})
	}
	return es
}

// TestDecisionsApply: the pure Apply of a batch. One bad entry refuses
// that entry alone; a batch none of whose entries applies, for another
// round, over the cap, or on a paused table is refused whole and changes
// nothing; the batch's id applied again gets the first answer, and
// another body under the same id is refused.
func TestDecisionsApply(t *testing.T) {
	rej := func(pairs ...any) []RejectedEntry {
		var out []RejectedEntry
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, RejectedEntry{Index: pairs[i].(int), Code: pairs[i+1].(round.EntryCode)})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		prep     func(x *mt) // before the batch
		batch    Decisions
		err      error // the batch refused whole
		applied  int
		rejected []RejectedEntry
	}{
		{name: "all apply", batch: Decisions{ID: "d1", Entries: entries(0, 20, "stand")}, applied: 20},
		{name: "partial", batch: Decisions{ID: "d1", Entries: []DecisionEntry{
			{Slot: 0, Player: "p0", Action: "stand"},
			{Slot: 1, Player: "p2", Action: "hit"},    // slot 1 is p1
			{Slot: 2, Action: "jump"},                 // no such action
			{Slot: 3, Action: "split"},                // 5 6 is no pair
			{Slot: 0, Action: "hit"},                  // slot 0 again
			{Slot: 500, Action: "hit"},                // no such slot
			{Slot: -3, Action: "hit"},                 // no such slot
			{Slot: 4, Action: ActionInsurance},        // no insurance offered
			{Slot: 5, Player: "p5", Action: "double"}, // free double on 11
		}}, applied: 2, rejected: rej(1, round.EntryUnknownPlayer, 2, round.EntryMalformed, 3, round.EntryIllegal,
			4, round.EntryDuplicate, 5, round.EntryUnknownPlayer, 6, round.EntryUnknownPlayer, 7, round.EntryNotAwaited)},
		{name: "nothing applies", batch: Decisions{ID: "d1", Entries: []DecisionEntry{{Slot: 3, Action: "split"}, {Slot: 99, Action: "hit"}}},
			err: round.ErrOutOfTurn, rejected: rej(0, round.EntryIllegal, 1, round.EntryUnknownPlayer)},
		{name: "already decided", prep: func(x *mt) { x.must(Decisions{ID: "d0", Round: x.m.RoundID(), Entries: entries(0, 2, "stand")}) },
			batch: Decisions{ID: "d1", Entries: entries(0, 2, "hit")}, err: round.ErrOutOfTurn,
			rejected: rej(0, round.EntryNotAwaited, 1, round.EntryNotAwaited)},
		{name: "another round", batch: Decisions{ID: "d1", Round: "#00:00:00", Entries: entries(0, 1, "stand")}, err: round.ErrOutOfTurn},
		{name: "window closed", prep: func(x *mt) {
			x.must(Decisions{ID: "d0", Round: x.m.RoundID(), Entries: entries(0, 20, "stand")}) // the dealer stands on 17: settled
			require.Equal(x.t, PhaseSettled, x.m.phase)
		}, batch: Decisions{ID: "d1", Entries: entries(0, 1, "stand")}, err: round.ErrOutOfTurn},
		{name: "paused", prep: func(x *mt) { x.must(Supervisor{Command: "pause", By: "sup"}) },
			batch: Decisions{ID: "d1", Entries: entries(0, 1, "stand")}, err: ErrPaused},
		{name: "over the cap", batch: Decisions{ID: "d1", Entries: make([]DecisionEntry, MaxBatchEntries+1)}, err: errIllegal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := crowdMT(t, 20)
			roundID := x.m.RoundID()
			if tc.prep != nil {
				tc.prep(x)
			}
			if tc.batch.Round == "" {
				tc.batch.Round = roundID
			}
			before := x.fingerprint()
			st, err := x.apply(tc.batch)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				assert.Equal(t, before, x.fingerprint(), "a refused batch changes nothing")
				if tc.rejected != nil {
					require.NotNil(t, st.Batch)
					assert.Equal(t, tc.rejected, st.Batch.Rejected)
				}
				return
			}
			require.NoError(t, err)
			require.NotNil(t, st.Batch)
			assert.Equal(t, len(tc.batch.Entries), st.Batch.Entries)
			assert.Equal(t, tc.applied, st.Batch.Applied)
			assert.Equal(t, tc.rejected, st.Batch.Rejected)
			for _, ev := range st.Events {
				if re, ok := ev.Body.(round.Event); ok {
					assert.NotEqual(t, round.EvDecisionMade, re.Type, "no event per player of a crowd")
				}
			}
			first := *st.Batch

			// The same batch again: the first answer, nothing applied.
			after := x.fingerprint()
			again, err := x.apply(tc.batch)
			require.NoError(t, err)
			assert.True(t, again.Repeat)
			assert.Equal(t, first, *again.Batch)
			assert.Equal(t, after, x.fingerprint())

			// Another body under the id.
			other := tc.batch
			other.Entries = entries(10, 11, "hit")
			_, err = x.apply(other)
			require.ErrorIs(t, err, ErrCommandIDReused)
		})
	}
}

// TestCrowdPromptAndChunks: a crowd is asked by one CrowdPrompt per input
// that asks it, and its settlement goes out as a summary and chunks of at
// most ChunkPlayers players, every player once, in slot order, whose nets
// add up to the summary's.
func TestCrowdPromptAndChunks(t *testing.T) {
	n := 2*ChunkPlayers + 500
	x := crowdMT(t, n)
	// The deal's last card asked everyone.
	var es []DecisionEntry
	for i := range n {
		es = append(es, DecisionEntry{Slot: i, Action: []string{"stand", "hit", "double", "hit"}[i%4]})
	}
	x.must(Decisions{ID: "d1", Round: x.m.RoundID(), Entries: es})
	st, err := x.apply(CardDrawn{Card: card.MustParse("2c")}) // the hitters hold 13 and are asked again
	require.NoError(t, err)
	var prompts []CrowdPrompt
	for _, ev := range st.Events {
		if cp, ok := ev.Body.(CrowdPrompt); ok {
			prompts = append(prompts, cp)
		}
	}
	require.Len(t, prompts, 1)
	assert.Equal(t, n/2, prompts[0].Awaiting)
	assert.Equal(t, 9, prompts[0].Up)
	require.Len(t, prompts[0].Situations, 1)
	assert.EqualValues(t, 13, prompts[0].Situations[0].Total)

	st, err = x.apply(Decisions{ID: "d2", Round: x.m.RoundID(), Entries: entries(0, n, "stand")})
	require.NoError(t, err)
	assert.Equal(t, n/2, st.Batch.Applied)
	var sum *round.Settlement
	var chunks []SettlementChunk
	for _, ev := range st.Events {
		switch b := ev.Body.(type) {
		case round.Event:
			if b.Type == round.EvSettled {
				sum = b.Settlement()
			}
		case SettlementChunk:
			chunks = append(chunks, b)
		}
	}
	require.NotNil(t, sum)
	assert.Empty(t, sum.Seats)
	assert.Equal(t, n, sum.Players)
	assert.Equal(t, 3, sum.Chunks)
	require.Len(t, chunks, 3)
	var net int64
	slot := 0
	for i, c := range chunks {
		assert.Equal(t, i+1, c.Index)
		assert.Equal(t, 3, c.Chunks)
		assert.LessOrEqual(t, len(c.Players), ChunkPlayers)
		for _, p := range c.Players {
			assert.Equal(t, slot, p.Slot)
			assert.Equal(t, fmt.Sprintf("p%d", slot), p.Player)
			net += p.Net
			slot++
		}
	}
	assert.Equal(t, n, slot)
	assert.Equal(t, sum.Net, net)
	// Dealer 17: stand on 11 loses 1000; a free double on 11 (+2c = 13)
	// loses the original only; 13 stood loses.
	assert.Equal(t, PlayerNet{Slot: 2, Seat: 1, Player: "p2", Staked: 1000, Net: -1000,
		Outcomes: []round.Outcome{round.OutcomeLose}}, chunks[0].Players[2])
}

// TestCrowdReplay: a restart after a batch rebuilds the same table from
// the journal (one record for the batch, not one per player), and the
// batch sent again after the restart gets its first answer.
func TestCrowdReplay(t *testing.T) {
	jr, _, err := journal.Open(journal.Options{Dir: t.TempDir(), AnchorKind: CheckpointKind}, zerolog.Nop())
	require.NoError(t, err)
	defer jr.Close()
	j := NewJournal(jr)
	h := start(t, "002", j)
	h.waitPhase(PhaseBetting)
	require.NoError(t, h.submit(BetsClosed{ID: "bets", Bets: crowdBets(300)}))
	for _, c := range []string{"5s", "9d", "6c", "8h"} {
		require.NoError(t, h.card(c))
	}
	roundID := h.c.Snapshot().Round.ID
	var es []DecisionEntry
	for i := range 300 {
		es = append(es, DecisionEntry{Slot: i, Action: []string{"stand", "hit", "double"}[i%3]})
	}
	es = append(es, DecisionEntry{Slot: 7, Action: "stand"}) // a duplicate: refused alone
	batch := Decisions{ID: "d1", Round: roundID, Entries: es}
	res, err := h.c.SubmitBatch(context.Background(), batch)
	require.NoError(t, err)
	assert.Equal(t, 300, res.Applied)
	assert.Equal(t, []RejectedEntry{{Index: 300, Code: round.EntryDuplicate}}, res.Rejected)
	require.NoError(t, h.card("2c"))
	before := h.c.Snapshot()
	h.stop()

	kinds := map[string]int{}
	require.NoError(t, jr.Replay(0, func(r journal.Record) error {
		kinds[r.Kind]++
		return nil
	}))
	assert.Equal(t, 1, kinds["decisions"], "one journal record for the batch")
	assert.Zero(t, kinds["decision"])

	h2 := start(t, "002", j)
	require.Eventually(t, func() bool { return h2.c.Snapshot().Paused }, 5*time.Second, time.Millisecond)
	after := h2.c.Snapshot()
	assert.Equal(t, before.Round.Seats, after.Round.Seats)
	assert.Equal(t, before.Seq, after.Seq-2, "the restart's pause: a paused and a phase event")
	again, err := h2.c.SubmitBatch(context.Background(), batch)
	require.NoError(t, err)
	assert.Equal(t, res, again, "the batch's id after the restart: the first answer")
	require.NoError(t, h2.submit(Supervisor{Command: "resume", By: "sup"}))
	res, err = h2.c.SubmitBatch(context.Background(), Decisions{ID: "d2", Round: roundID, Entries: entries(0, 300, "stand")})
	require.NoError(t, err)
	assert.Equal(t, 100, res.Applied, "the 100 hitters were asked again")
	h2.waitPhase(PhaseSettled)
}
