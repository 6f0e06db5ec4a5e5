package table

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// restoredTable plays rounds aa and ab, then restores the journal to the
// end of round aa (the backup), journals the loss an operator accepted
// (tablectl journal accept-loss: the SeqGap) and starts the table on it,
// resumed by a supervisor with betting open. published is the highest seq
// the backend had before the restore.
func restoredTable(t *testing.T) (h *harness, cut *memJournal, published uint64) {
	t.Helper()
	j, clk, h0 := playTable(t, 2, func(o *Options) { o.CheckpointEvery = 1 })
	published = h0.c.Snapshot().Seq
	n, cks := 0, 0
	for i, k := range j.kinds {
		if k == CheckpointKind {
			if cks++; cks == 2 {
				n = i + 1
				break
			}
		}
	}
	require.Positive(t, n)
	cut = &memJournal{recs: j.recs[:n], kinds: j.kinds[:n], at: j.at[:n], first: 1}
	opts := h0.c.opts
	opts.Journal = cut
	behind, err := LastEventSeq(opts)
	require.NoError(t, err)
	require.Less(t, behind, published)
	gap := SeqGap{LostFrom: behind + 1, LostTo: published, By: "ops", Reason: "restored the 02:00 backup"}
	_, err = cut.Append(Entry{At: clk.Now(), Kind: gap.Kind(), Data: mustEncode(t, gap)})
	require.NoError(t, err)
	h = startWith(t, "000", cut, clk, func(o *Options) { o.CheckpointEvery = 1; o.RepublishAfter = published })
	h.ping()
	require.True(t, h.c.Snapshot().Paused)
	require.NoError(t, h.submit(Supervisor{Command: "resume", By: "sup", ID: "resume-after-restore"}))
	h.waitPhase(PhaseBetting)
	return h, cut, published
}

// TestCommandsOfTheLostStretch: a journal restored from an older backup
// (or cut by salvage) forgets the ids of the commands applied after it:
// the command ledger is rebuilt from the journal. The backend (its MQTT
// session, QoS 1, or its own retry) sends round ab's bets_closed and
// decision again, same ids, same bodies. Until epoch 8 they were applied
// to the restored table's next round: the bets of a round the backend
// had settled taken again, a decision given to another round's hand. A
// command that says what its sender had seen (Seen) at or below the lost
// seqs is refused now (ErrStaleCommand), nothing changed; one made after
// the sender saw the gap is taken; the refusal holds across a restart.
func TestCommandsOfTheLostStretch(t *testing.T) {
	h, cut, published := restoredTable(t)
	bab := BetsClosed{ID: "bab", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}, Seen: published - 12}
	dab := Decision{ID: "dab", Seat: 1, Player: "p1", Action: "stand", Seen: published - 4}

	before := h.c.Snapshot()
	err := h.submit(bab)
	require.ErrorIs(t, err, ErrStaleCommand)
	assert.Equal(t, "stale", RefusalCode(err))
	assert.Contains(t, err.Error(), "events up to")
	after := h.c.Snapshot()
	assert.Equal(t, before.Seq, after.Seq, "nothing numbered")
	assert.Equal(t, PhaseBetting, after.Phase, "betting still open")
	require.ErrorIs(t, h.submit(bab), ErrStaleCommand, "the same answer again")

	// A sender that has seen events this table never numbered.
	ahead := BetsClosed{ID: "ahead", Bets: bab.Bets, Seen: after.Seq + 1}
	require.ErrorIs(t, h.submit(ahead), ErrStaleCommand)
	assert.Equal(t, PhaseBetting, h.c.Snapshot().Phase)

	// The backend read the seq_gap alarm and the state: its commands go.
	fresh := BetsClosed{ID: "b-new", Bets: bab.Bets, Seen: after.Seq}
	require.NoError(t, h.submit(fresh))
	for _, c := range []string{"Ts", "6d", "7c", "5h"} {
		require.NoError(t, h.card(c))
	}
	require.ErrorIs(t, h.submit(dab), ErrStaleCommand, "a decision of the lost round")
	require.NoError(t, h.submit(Decision{ID: "d-new", Seat: 1, Player: "p1", Action: "stand", Seen: after.Seq + 2}))
	require.NoError(t, h.card("9s"))
	advanceUntil(t, h, func(st State) bool { return st.Phase == PhaseBetting }, 4*time.Second)
	seq := h.c.Snapshot().Seq
	h.stop()

	// A restart, replaying from the checkpoint written since (which keeps
	// the gap), judges the same.
	ck := cut.LastOfKind(CheckpointKind)
	in, err := DecodeInput(cut.recs[ck-1])
	require.NoError(t, err)
	assert.Equal(t, published, in.(Checkpoint).GapTo)
	h2 := startWith(t, "000", cut, h.clk, func(o *Options) { o.CheckpointEvery = 1 })
	h2.ping()
	assert.Equal(t, seq, h2.c.Snapshot().Seq)
	require.ErrorIs(t, h2.submit(BetsClosed{ID: "bab2", Bets: bab.Bets, Seen: published}), ErrStaleCommand)
	require.NoError(t, h2.submit(BetsClosed{ID: "b-new2", Bets: bab.Bets, Seen: seq}))
}

// TestSeenUnderOlderRules: the fence is epoch 8's; a journal at epoch 6
// or 7 (whose commands carry no seen: those builds took none) judges as before,
// and a command without seen is judged as before at every epoch.
func TestSeenUnderOlderRules(t *testing.T) {
	for _, tt := range []struct {
		name  string
		epoch int
		seen  uint64
		want  error
	}{
		{"epoch 8, seen before the gap", CurrentRulesEpoch, 5, ErrStaleCommand},
		{"epoch 8, seen after the gap", CurrentRulesEpoch, 1000, nil},
		{"epoch 8, no seen", CurrentRulesEpoch, 0, nil},
		{"epoch 7, seen before the gap", epochPauseWhy, 5, nil},
		{"epoch 6, seen before the gap", epochClockBack, 5, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := newMT(t)
			x.m.epoch = 0 // as a replay starts
			x.must(RulesEpoch{Epoch: tt.epoch}, ShoeIn{}, ShoeChanged{ShoeID: "S1"},
				SeqGap{LostFrom: 3, LostTo: 999, By: "ops", Reason: "restore"},
				Supervisor{Command: "resume", By: "sup"})
			require.Equal(t, PhaseBetting, x.m.State().Phase)
			seq := x.m.Seq()
			_, err := x.apply(BetsClosed{ID: "b", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}, Seen: tt.seen})
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				assert.Equal(t, seq, x.m.Seq())
				assert.Equal(t, PhaseBetting, x.m.State().Phase)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, PhaseDealing, x.m.State().Phase)
		})
	}
}

// TestEpoch6SeqGapReplays: testdata/epoch6-seq-gap is a journal written
// under rules epoch 6 (a build before epochSeenFence, 7f11321; its live machine
// journaled only what it applied) and the events it published: round
// #10:00:04 played, a seq gap of 20 events accepted (the restore), the
// supervisor's resume, and the lost round's bets_closed and decision
// (ids bab, dab) sent again, which that build applied to the next round.
// It replays into the same events under this build, whether its epoch
// record says 6, 7 or 8: the commands of an epoch-6 journal say no seen.
// The same bets_closed saying what its sender had seen before the gap
// goes under epochs 6 and 7 and is refused under epoch 8.
func TestEpoch6SeqGapReplays(t *testing.T) {
	want := readFixtureLines(t, "epoch6-seq-gap", "events.jsonl")
	for _, epoch := range []int{epochClockBack, epochPauseWhy, CurrentRulesEpoch} {
		assert.Equal(t, want, replayedEvents(t, fixtureJSONL(t, "epoch6-seq-gap", epoch)), "epoch %d", epoch)
	}
	for _, tt := range []struct {
		epoch int
		want  error
	}{{epochClockBack, nil}, {epochPauseWhy, nil}, {CurrentRulesEpoch, ErrStaleCommand}} {
		j := fixtureJSONL(t, "epoch6-seq-gap", tt.epoch)
		j.recs, j.kinds, j.at = j.recs[:13], j.kinds[:13], j.at[:13] // up to the resume
		m, alarms, err := replayed(t, j)
		require.NoError(t, err)
		require.Contains(t, alarms, "seq_gap")
		require.Equal(t, PhaseBetting, m.State().Phase)
		in, err := DecodeInput(fixtureJSONL(t, "epoch6-seq-gap", tt.epoch).recs[13])
		require.NoError(t, err)
		bab := in.(BetsClosed)
		require.Equal(t, "bab", bab.ID)
		bab.Seen = 20 // round #10:00:04 ended at 16; 17-36 (round ab) were lost
		_, err = m.Apply(j.at[12].Add(time.Second), bab)
		if tt.want != nil {
			require.ErrorIs(t, err, tt.want, "epoch %d", tt.epoch)
			assert.Equal(t, PhaseBetting, m.State().Phase)
			continue
		}
		require.NoError(t, err, "epoch %d", tt.epoch)
		assert.Equal(t, PhaseDealing, m.State().Phase)
	}
}
