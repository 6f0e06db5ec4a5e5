package table

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
)

// TestRefusalsSurviveRestart: a refused command is not journaled, and its
// verdict still holds after a restart: the same id with the same body gets
// the same answer, word for word and with its sentinel, even where the
// table, asked afresh, would now take the command; the id with another
// body is refused as reused. Nothing refused reaches the journal.
func TestRefusalsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	j := &memJournal{}
	clk := clockwork.NewFakeClockAt(ckEpoch)
	rf, err := OpenRefusals(nil, dir, zerolog.Nop())
	require.NoError(t, err)
	h := startWith(t, "000", j, clk, func(o *Options) { o.Refusals = rf })
	h.waitPhase(PhaseBetting)

	resume := Supervisor{ID: "r1", Command: "resume", By: "sup"}
	correct := Supervisor{ID: "c1", Command: "correct", By: "sup", Card: card.MustParse("Qh")}
	h.ping() // the loop is idle: the journal holds what betting's opening wrote
	records := len(j.recs)
	errResume := h.submit(resume)
	require.ErrorIs(t, errResume, ErrNotPaused)
	errCorrect := h.submit(correct)
	require.ErrorIs(t, errCorrect, ErrNoMisread)
	assert.Len(t, j.recs, records, "a refused command is not journaled")

	require.NoError(t, h.submit(Supervisor{ID: "p1", Command: "pause", By: "sup", Reason: "camera"}))
	require.True(t, h.c.Snapshot().Paused)
	// Asked afresh, the paused table would take r1: it is answered as it was.
	err = h.submit(resume)
	require.ErrorIs(t, err, ErrNotPaused)
	assert.Equal(t, errResume.Error(), err.Error())
	assert.True(t, h.c.Snapshot().Paused, "the repeat changed nothing")
	h.stop()
	require.NoError(t, rf.Close())

	rf2, err := OpenRefusals(nil, dir, zerolog.Nop())
	require.NoError(t, err)
	defer rf2.Close()
	h2 := startWith(t, "000", j, clk, func(o *Options) { o.Refusals = rf2 })
	h2.ping()
	require.True(t, h2.c.Snapshot().Paused)

	for _, c := range []struct {
		in    Input
		first error
	}{{resume, errResume}, {correct, errCorrect}} {
		err := h2.submit(c.in)
		require.Error(t, err, "%+v after the restart", c.in)
		assert.Equal(t, c.first.Error(), err.Error(), "the same answer after the restart")
		for _, s := range []error{ErrNotPaused, ErrNoMisread} {
			assert.Equal(t, errors.Is(c.first, s), errors.Is(err, s), "the same sentinel after the restart")
		}
	}
	assert.True(t, h2.c.Snapshot().Paused)
	err = h2.submit(Supervisor{ID: "r1", Command: "void", By: "sup", Reason: "other body"})
	require.ErrorIs(t, err, ErrCommandIDReused, "an id refused before, with another body")
	assert.True(t, h2.c.Snapshot().Paused)

	// A new id is judged afresh.
	require.NoError(t, h2.submit(Supervisor{ID: "r2", Command: "resume", By: "sup"}))
	assert.False(t, h2.c.Snapshot().Paused)
}

// TestRefusalFileBounded: the file keeps the newest maxCommandIDs
// verdicts, however many were recorded, and a torn last line (a power cut
// mid-write) is skipped.
func TestRefusalFileBounded(t *testing.T) {
	dir := t.TempDir()
	rf, err := OpenRefusals(nil, dir, zerolog.Nop())
	require.NoError(t, err)
	n := 2*maxCommandIDs + 100
	for i := range n {
		rf.Record(Refusal{ID: fmt.Sprintf("id%d", i), Hash: uint64(i + 1), Reason: "refused"})
		if i%1000 == 999 {
			// Close writes what is queued (Record never waits for the disk,
			// and drops what a full queue cannot take).
			require.NoError(t, rf.Close())
			rf, err = OpenRefusals(nil, dir, zerolog.Nop())
			require.NoError(t, err)
		}
	}
	require.NoError(t, rf.Close())
	f, err := os.OpenFile(filepath.Join(dir, RefusalsName), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"id":"torn","ha`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	rf, err = OpenRefusals(nil, dir, zerolog.Nop())
	require.NoError(t, err)
	defer rf.Close()
	got, err := rf.Load()
	require.NoError(t, err)
	require.Len(t, got, maxCommandIDs)
	assert.Equal(t, fmt.Sprintf("id%d", n-maxCommandIDs), got[0].ID, "the oldest go first")
	assert.Equal(t, fmt.Sprintf("id%d", n-1), got[len(got)-1].ID)
	fi, err := os.Stat(filepath.Join(dir, RefusalsName))
	require.NoError(t, err)
	assert.Less(t, fi.Size(), int64(2*maxCommandIDs*80), "the file is rewritten, not grown")
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}
