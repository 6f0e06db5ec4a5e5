package table

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/round"
)

// TestLastEventSeq: the seq a journal derives is the live table's, at
// every length of the journal, whether it ends on a checkpoint or not.
func TestLastEventSeq(t *testing.T) {
	j, _, h := playTable(t, 3, func(o *Options) { o.CheckpointEvery = 1 })
	opts := h.c.opts
	live := h.c.Snapshot().Seq
	require.Positive(t, live)
	got, err := LastEventSeq(opts)
	require.NoError(t, err)
	assert.Equal(t, live, got)
	assert.Equal(t, []string{CheckpointKind, "rules_epoch"}, j.kinds[len(j.kinds)-2:], "the journal ends on a checkpoint and the epoch after it")

	// Every shorter journal derives a seq no higher, and one that only
	// grows with it.
	prev := uint64(0)
	for n := 0; n <= len(j.recs); n++ {
		cut := &memJournal{recs: j.recs[:n], kinds: j.kinds[:n], at: j.at[:n], first: 1}
		opts.Journal = cut
		seq, err := LastEventSeq(opts)
		require.NoError(t, err, "%d records", n)
		assert.GreaterOrEqual(t, seq, prev, "%d records", n)
		assert.LessOrEqual(t, seq, live)
		prev = seq
	}
	assert.Equal(t, live, prev)
}

// TestSeqGap: a journal that lost the events the outbox published gets a
// SeqGap journaled before the table starts: numbering continues above the
// highest published seq, the table is paused, and an alarm names the lost
// seqs; after a resume play goes on above them, also across a restart.
func TestSeqGap(t *testing.T) {
	j, clk, h := playTable(t, 3, func(o *Options) { o.CheckpointEvery = 1 })
	published := h.c.Snapshot().Seq

	// The journal loses its last round: cut back to the first two.
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
	cut := &memJournal{recs: j.recs[:n], kinds: j.kinds[:n], at: j.at[:n], first: 1}
	opts := h.c.opts
	opts.Journal = cut
	behind, err := LastEventSeq(opts)
	require.NoError(t, err)
	require.Less(t, behind, published)

	gap := SeqGap{LostFrom: behind + 1, LostTo: published, By: "ops", Reason: "restored from backup"}
	data, err := EncodeInput(gap)
	require.NoError(t, err)
	_, err = cut.Append(Entry{At: clk.Now(), Kind: gap.Kind(), Data: data})
	require.NoError(t, err)

	h2 := startWith(t, "000", cut, clk, func(o *Options) { o.CheckpointEvery = 1; o.RepublishAfter = published })
	h2.ping()
	st := h2.c.Snapshot()
	assert.True(t, st.Paused)
	assert.Equal(t, PhasePaused, st.Phase)
	assert.Contains(t, st.PauseReason, gap.Message())
	assert.Contains(t, gap.Message(), fmt.Sprintf("seq %d-%d;", behind+1, published))
	assert.Greater(t, st.Seq, published)
	first := <-h2.events
	require.Equal(t, published+1, first.Seq, "numbering continues above the published seqs")
	alarm, ok := first.Body.(Alarm)
	require.True(t, ok, "the first event is the alarm: %T", first.Body)
	assert.Equal(t, "seq_gap", alarm.Code)
	assert.True(t, alarm.Pauses)

	// From outside it is not an input.
	require.ErrorIs(t, h2.submit(gap), round.ErrIllegalAction)

	require.NoError(t, h2.submit(Supervisor{Command: "resume", By: "ops"}))
	h2.waitPhase(PhaseBetting)
	playRound(t, h2, 7)
	for len(h2.events) > 0 {
		ev := <-h2.events
		if ev.Seq != 0 {
			require.Greater(t, ev.Seq, published)
		}
	}
	after := h2.c.Snapshot().Seq
	h2.stop()

	// A restart replays the gap: the same numbers.
	opts.Journal = cut
	seq, err := LastEventSeq(opts)
	require.NoError(t, err)
	assert.Equal(t, after, seq)
}

func TestSeqGapMessage(t *testing.T) {
	assert.Equal(t, "published events lost from the journal: seq 5; numbering continues at 6 (loss accepted by a: b)",
		SeqGap{LostFrom: 5, LostTo: 5, By: "a", Reason: "b"}.Message())
	in, err := DecodeInput(mustEncode(t, SeqGap{LostFrom: 3, LostTo: 9, By: "a", Reason: "b"}))
	require.NoError(t, err)
	assert.Equal(t, SeqGap{LostFrom: 3, LostTo: 9, By: "a", Reason: "b"}, in)
}

func mustEncode(t *testing.T, in Input) []byte {
	t.Helper()
	b, err := EncodeInput(in)
	require.NoError(t, err)
	return b
}
