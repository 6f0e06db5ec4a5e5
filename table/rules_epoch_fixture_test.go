package table

import (
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/rules"
)

// TestOlderBuildsJournalReplays: testdata/epoch0-misread-resume is the
// journal tabled wrote at f837554 (before rules epochs), game 000, table
// t1: a round dealt three cards, the shoe reported a misread while the
// round waited for the hole card, a supervisor resumed (that build
// accepted it), the hole card came and insurance was offered; then it
// stopped. This build replays it into the events that build published
// (their seqs and kinds, read off its outbox) and the state it stopped
// in, not paused: before epochs the replay refused that resume, and the
// first start after the upgrade stopped with "journal behind the outbox:
// events 12-14 are lost". Any later change of judgement must keep this
// test passing.
func TestOlderBuildsJournalReplays(t *testing.T) {
	jr := fixtureJournal(t, "epoch0-misread-resume")
	rs, err := rules.Game("000")
	require.NoError(t, err)
	opts := DefaultOptions(rs)
	opts.Table, opts.Journal = "t1", NewJournal(jr)
	var got []string
	require.NoError(t, ReplayEvents(opts, func(ev Event) {
		if ev.Seq != 0 {
			got = append(got, ev.Kind())
		}
	}))
	assert.Equal(t, []string{"phase", "shoe_in_play", "phase", "round_started", "card_dealt", "card_dealt", "card_dealt",
		"alarm", "paused", "phase", "resumed", "phase", "card_dealt", "insurance_offered"}, got,
		"the events seq 1-14 the older build published")

	m, err := NewMachine(opts.machineConfig())
	require.NoError(t, err)
	_, err = replayInto(m, opts.Journal, 0, zerolog.Nop(), nil)
	require.NoError(t, err)
	assert.EqualValues(t, 14, m.Seq())
	assert.False(t, m.paused(), "resumed, as the older build did")
	assert.Equal(t, 0, m.Epoch(), "no rules_epoch record: the older build's rules")
}
