package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/rules"
)

// TestSalvageCommand: a segment lost from the middle of a table's journal
// (or a bad record in it) stopped tabled at start with the damage named
// and no command to get the table dealing again but an older backup.
// `tablectl journal salvage` moves the segments before a checkpoint past
// the damage aside; the table's numbers lose nothing.
func TestSalvageCommand(t *testing.T) {
	dataDir, c, stop := smallSegmentTable(t, 8)
	code, _, errOut := tablectl(t, "", "journal", "salvage", "--data-dir", dataDir, "--by", "anna", "--reason", "disk error")
	assert.Equal(t, 1, code, "the table runs")
	assert.Contains(t, errOut, "stop the table first")
	want := c.Snapshot().Seq
	stop()

	code, out, _ := tablectl(t, "", "journal", "salvage", "--data-dir", dataDir, "--by", "anna", "--reason", "disk error")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "nothing to salvage")
	code, _, _ = tablectl(t, "", "journal", "salvage", "--data-dir", dataDir, "--reason", "disk error")
	assert.Equal(t, 2, code, "--by is required")

	segs, err := filepath.Glob(filepath.Join(dataDir, "journal", "*.ltj"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(segs), 5)
	require.NoError(t, os.Remove(segs[1]))
	code, out, _ = tablectl(t, "", "journal", "verify", "--data-dir", dataDir)
	require.Equal(t, 1, code, out)
	assert.Contains(t, out, "bad sequence")

	code, out, errOut = tablectl(t, "", "journal", "salvage", "--data-dir", dataDir, "--by", "anna", "--reason", "disk error")
	require.Equal(t, 0, code, out+errOut)
	assert.Contains(t, out, "the table's state and event numbers lose nothing")
	note, err := filepath.Glob(filepath.Join(dataDir, "journal-salvaged-*", "SALVAGE.txt"))
	require.NoError(t, err)
	require.Len(t, note, 1)
	b, err := os.ReadFile(note[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), "by anna: disk error")
	assert.FileExists(t, filepath.Join(filepath.Dir(note[0]), filepath.Base(segs[0])), "moved, not deleted")

	code, out, _ = tablectl(t, "", "journal", "verify", "--data-dir", dataDir)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, fmt.Sprintf("the journal's events end at seq %d,", want))
	assert.Contains(t, out, "not checked against the broker", "a restored directory passes all else")
}

// smallSegmentTable runs a table of game 000 on a journal of 1 KiB
// segments in a new data directory, with a checkpoint after every input,
// and plays rounds rounds of 9s (the pause after each but the last
// ended, so bets are open again); stop ends the table and closes its
// journal. The journal commands' damage tests start from it.
func smallSegmentTable(t *testing.T, rounds int) (dataDir string, c *table.Controller, stop func()) {
	t.Helper()
	dataDir = t.TempDir()
	jo := journal.DefaultOptions()
	jo.Dir, jo.SegmentBytes, jo.AnchorKind = filepath.Join(dataDir, "journal"), 1024, table.CheckpointKind
	j, _, err := journal.Open(jo, zerolog.Nop())
	require.NoError(t, err)
	rs, err := rules.Game("000")
	require.NoError(t, err)
	opts := table.DefaultOptions(rs)
	clk := clockwork.NewFakeClockAt(time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC))
	opts.Journal, opts.Clock, opts.SettleDelay, opts.CheckpointEvery = table.NewJournal(j), clk, time.Millisecond, 1
	c, err = table.New(opts, zerolog.Nop())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, nil) }()
	for i := range rounds {
		playRound(t, ctx, c, "9s")
		if i < rounds-1 {
			// The pause after the settlement ends: bets open. Not after
			// the last round: the timer's input would race a seq read
			// after it.
			clk.Advance(time.Second)
		}
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, j.Close())
	}
	t.Cleanup(stop)
	return dataDir, c, stop
}
