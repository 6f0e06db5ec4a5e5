package journal_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/journal"
)

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	w, _ := open(t, journal.Options{Dir: dir})
	appendN(t, w, 0, 20)

	// While the daemon holds the journal, tablectl can read it.
	r, rep := open(t, journal.Options{Dir: dir, ReadOnly: true})
	assert.Equal(t, uint64(20), rep.LastSeq)
	assert.Equal(t, wantRange(0, 20), replayAll(t, r, 0))
	recs, err := r.Round("#12:00:02")
	require.NoError(t, err)
	assert.Equal(t, wantRange(10, 15), recs)
	_, err = r.Append(rec(20))
	require.ErrorIs(t, err, journal.ErrReadOnly)
	require.NoError(t, r.Close())

	// The writer is unaffected.
	appendN(t, w, 20, 21)
}

func TestReadOnlyLeavesTornTail(t *testing.T) {
	dir := t.TempDir()
	w, _ := open(t, journal.Options{Dir: dir})
	appendN(t, w, 0, 5)
	require.NoError(t, w.Close())
	path := segments(t, dir)[0]
	mutate(t, path, func(b []byte) []byte { return b[:len(b)-7] })
	orig := copyDir(t, dir)

	r, rep := open(t, journal.Options{Dir: dir, ReadOnly: true})
	require.NotNil(t, rep.Tail)
	assert.Zero(t, rep.CutBytes)
	assert.Equal(t, uint64(4), r.LastSeq())
	assert.Equal(t, wantRange(0, 4), replayAll(t, r, 0))
	require.NoError(t, r.Close())
	sameFiles(t, orig, dir)
}

func TestReadOnlyEmptyAndMissing(t *testing.T) {
	dir := t.TempDir()
	r, rep := open(t, journal.Options{Dir: dir, ReadOnly: true})
	assert.Equal(t, journal.RecoveryReport{Segments: 0, FirstSeq: 1}, rep)
	assert.Empty(t, replayAll(t, r, 0))
	assert.Equal(t, uint64(1), r.FirstSeq())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "read-only writes nothing, not even a lock file")

	_, _, err = journal.Open(journal.Options{Dir: filepath.Join(dir, "missing"), ReadOnly: true}, testLog(t))
	require.ErrorIs(t, err, os.ErrNotExist)
}
