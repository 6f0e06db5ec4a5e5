package table_test

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/rules"
)

// TestEpoch1TwoMisreadsReplays: testdata/epoch1-two-misreads is the
// journal tabled wrote at 56978a1 (rules epoch 1), game 000, table table1,
// on a real mosquitto with shoesim driven by hand: a round dealt three
// cards, the shoe reported two misreads while the round waited for the
// hole card, a supervisor corrected one (that build took the correction
// as the hole card and resumed, the second unread card forgotten), the
// next card pulled (9c) did not fit the round (insurance) and paused the
// table, the supervisor resumed; then it stopped. events.jsonl is every
// numbered event that build published, as its outbox held them. Epoch 2
// keeps unread cards as a queue; this journal, of epoch 1, must replay
// into exactly those bytes (the same seqs, kinds and content), or the
// first start after the upgrade would publish other content under seqs
// the backend holds.
func TestEpoch1TwoMisreadsReplays(t *testing.T) {
	opts, want, got := replayFixture(t, "epoch1-two-misreads", "table1", 0)
	require.Len(t, want, 20)
	assert.Equal(t, want, got, "the events seq 1-20 the epoch-1 build published")

	st, err := table.LastState(opts)
	require.NoError(t, err)
	assert.False(t, st.Paused, "resumed, as the epoch-1 build did")
	assert.EqualValues(t, 20, st.Seq)
	assert.Equal(t, 5, st.Shoe.Dealt)
}

// TestEpoch0HeldCardReplays: testdata/epoch0-held-card is the data
// directory's journal the demo table (game 000, table t, seed 7,
// misread_every 3) wrote at 625778a (2026-11-24 16:04, before rules
// epochs) on a real mosquitto, and events.jsonl every numbered event that
// build published, read off the broker: a round dealt three cards, the
// shoe misread the fourth and paused the table, and the next card pulled
// (4c) was held, its card_while_paused alarm carrying no round (seq 12).
// The builds since c4d8cbc name the round in that alarm; a resend after
// the upgrade re-derived seq 12 with "round":"#07:55:45", a second
// content under a seq the backend held. Replayed under its epoch the
// journal gives the bytes that build published.
func TestEpoch0HeldCardReplays(t *testing.T) {
	opts, want, got := replayFixture(t, "epoch0-held-card", "t", 150*time.Millisecond)
	require.Len(t, want, 12)
	assert.Equal(t, want, got, "the events seq 1-12 the epoch-0 build published")

	st, err := table.LastState(opts)
	require.NoError(t, err)
	assert.True(t, st.Paused, "paused on the misread, as the epoch-0 build was")
	assert.EqualValues(t, 12, st.Seq)
}

// replayFixture replays testdata/<name>/journal (one segment), an older
// build's, as table tableID of game 000 (with the demo's betting window
// when betting is set, as tabled's demo.betting sets it), and returns the options it
// replayed with, the lines of testdata/<name>/events.jsonl (what that
// build published) and the numbered events the replay derives, encoded
// as the link publishes them.
func replayFixture(t *testing.T, name, tableID string, betting time.Duration) (opts table.Options, want, got []string) {
	t.Helper()
	fix := filepath.Join("testdata", name)
	dir := filepath.Join(t.TempDir(), "journal")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	seg := "00000000000000000001.ltj"
	b, err := os.ReadFile(filepath.Join(fix, "journal", seg))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, seg), b, 0o644))

	f, err := os.Open(filepath.Join(fix, "events.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		want = append(want, sc.Text())
	}
	require.NoError(t, sc.Err())

	jr, err := table.OpenForHistory(dir, zerolog.Nop())
	require.NoError(t, err)
	t.Cleanup(func() { jr.Close() })
	rs, err := rules.Game("000")
	require.NoError(t, err)
	if betting > 0 {
		rs.SetTimes(rules.Times{Betting: betting, LastCall: betting / 2})
	}
	opts = table.DefaultOptions(rs)
	opts.Table, opts.Journal = tableID, table.NewJournal(jr)
	require.NoError(t, table.ReplayEvents(opts, func(ev table.Event) {
		if ev.Seq == 0 {
			return
		}
		enc, err := wire.Encode(ev)
		require.NoError(t, err)
		got = append(got, string(enc))
	}))
	return opts, want, got
}
