package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/journal"
)

// TestTimedFSPreallocates: the journal tabled opens, on the file system
// that times its fsyncs for the metrics, preallocates its active segment
// and writes records in place, as on the bare OS (the wrapper hid the
// capability, and tabled's journal appended and paid a size change in
// every card's fsync).
func TestTimedFSPreallocates(t *testing.T) {
	dir := t.TempDir()
	var syncs int
	opts := journal.DefaultOptions()
	opts.Dir = dir
	opts.FS = timedFS{observe: func(time.Duration) { syncs++ }}
	j, _, err := journal.Open(opts, zerolog.Nop())
	require.NoError(t, err)
	_, err = j.Append(journal.Record{Kind: "card", Data: []byte("As")})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	assert.Positive(t, syncs, "the fsyncs are timed")
	segs, err := filepath.Glob(filepath.Join(dir, "*.ltj"))
	require.NoError(t, err)
	require.Len(t, segs, 1)
	fi, err := os.Stat(segs[0])
	require.NoError(t, err)
	assert.GreaterOrEqual(t, fi.Size(), int64(1<<20), "the active segment is preallocated")
}
