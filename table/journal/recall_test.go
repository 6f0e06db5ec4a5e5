package journal_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/journal"
)

func TestRounds(t *testing.T) {
	dir := t.TempDir()
	j, _ := open(t, journal.Options{Dir: dir})
	appendN(t, j, 0, 50) // ten rounds of five records

	check := func(t *testing.T, j *journal.Journal) {
		got := j.Rounds(3)
		require.Len(t, got, 3)
		assert.Equal(t, journal.RoundSummary{
			Code: "#12:00:09", FirstSeq: 46, LastSeq: 50,
			Start: base.Add(45 * time.Second), End: base.Add(49 * time.Second), Records: 5,
		}, got[0])
		assert.Equal(t, "#12:00:08", got[1].Code)
		assert.Equal(t, "#12:00:07", got[2].Code)
		assert.Len(t, j.Rounds(100), 10)
		assert.Empty(t, j.Rounds(0))
		assert.Empty(t, j.Rounds(-1))

		recs, err := j.Round("#12:00:04")
		require.NoError(t, err)
		assert.Equal(t, wantRange(20, 25), recs)

		_, err = j.Round("#99:99:99")
		require.ErrorIs(t, err, journal.ErrNotFound)
	}
	t.Run("live", func(t *testing.T) { check(t, j) })
	require.NoError(t, j.Close())
	j, _ = open(t, journal.Options{Dir: dir})
	t.Run("rebuilt by Open", func(t *testing.T) { check(t, j) })
}

func TestRoundInterleavingAndReuse(t *testing.T) {
	j, _ := open(t, journal.Options{Dir: t.TempDir()})
	at := base
	add := func(round, kind string) uint64 {
		at = at.Add(time.Second)
		seq, err := j.Append(journal.Record{Time: at, Round: round, Kind: kind, Data: []byte(`{}`)})
		require.NoError(t, err)
		return seq
	}
	add("A", "bets_closed")
	add("", "shoe_changed") // not part of any round
	add("A", "card")
	add("B", "bets_closed")
	late := add("A", "supervisor") // a correction to the round just finished
	add("B", "card")

	recs, err := j.Round("A")
	require.NoError(t, err)
	require.Len(t, recs, 3)
	assert.Equal(t, late, recs[2].Seq)
	assert.Equal(t, "supervisor", recs[2].Kind)
	assert.Len(t, j.Rounds(10), 2)

	// Game codes repeat (a start time recurs every day): far enough back,
	// the same code starts a new round, and Round returns the newest.
	for i := range 10 {
		add(fmt.Sprintf("R%d", i), "card")
	}
	again := add("A", "bets_closed")
	recs, err = j.Round("A")
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, again, recs[0].Seq)
	assert.Equal(t, "A", j.Rounds(1)[0].Code)
}

func TestLastOfKind(t *testing.T) {
	dir := t.TempDir()
	opts := journal.Options{Dir: dir, SegmentBytes: 800, MaxBytes: 2500}
	j, _ := open(t, opts)
	appendN(t, j, 0, 12) // kinds: card, except every fifth from 3 is a decision
	check := func(t *testing.T, j *journal.Journal) {
		assert.Equal(t, uint64(12), j.LastOfKind("card"))
		assert.Equal(t, uint64(9), j.LastOfKind("decision"))
		assert.Zero(t, j.LastOfKind("shoe_changed"))
	}
	t.Run("live", func(t *testing.T) { check(t, j) })
	require.NoError(t, j.Close())
	j, _ = open(t, opts)
	t.Run("rebuilt by Open", func(t *testing.T) { check(t, j) })

	// Retention forgets kinds whose last record it deleted.
	_, err := j.Append(journal.Record{Kind: "shoe_changed", Time: base})
	require.NoError(t, err)
	for i := 13; i < 80; i++ {
		r := rec(i)
		r.Kind = "card"
		_, err := j.Append(r)
		require.NoError(t, err)
	}
	require.Greater(t, j.FirstSeq(), uint64(13))
	assert.Zero(t, j.LastOfKind("shoe_changed"))
	assert.Zero(t, j.LastOfKind("decision"))
	assert.Equal(t, uint64(80), j.LastOfKind("card"))
}
