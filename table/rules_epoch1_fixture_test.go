package table_test

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

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
	fix := filepath.Join("testdata", "epoch1-two-misreads")
	dir := filepath.Join(t.TempDir(), "journal")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	name := "00000000000000000001.ltj"
	b, err := os.ReadFile(filepath.Join(fix, "journal", name))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))

	f, err := os.Open(filepath.Join(fix, "events.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		want = append(want, sc.Text())
	}
	require.NoError(t, sc.Err())
	require.Len(t, want, 20)

	jr, err := table.OpenForHistory(dir, zerolog.Nop())
	require.NoError(t, err)
	defer jr.Close()
	rs, err := rules.Game("000")
	require.NoError(t, err)
	opts := table.DefaultOptions(rs)
	opts.Table, opts.Journal = "table1", table.NewJournal(jr)
	var got []string
	require.NoError(t, table.ReplayEvents(opts, func(ev table.Event) {
		if ev.Seq == 0 {
			return
		}
		enc, err := wire.Encode(ev)
		require.NoError(t, err)
		got = append(got, string(enc))
	}))
	assert.Equal(t, want, got, "the events seq 1-20 the epoch-1 build published")

	st, err := table.LastState(opts)
	require.NoError(t, err)
	assert.False(t, st.Paused, "resumed, as the epoch-1 build did")
	assert.EqualValues(t, 20, st.Seq)
	assert.Equal(t, 5, st.Shoe.Dealt)
}
