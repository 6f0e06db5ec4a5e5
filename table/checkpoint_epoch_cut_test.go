package table

import (
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/simulators/disk"
	"github.com/livetable/livetable/table/journal"
)

// cutBeforeEpochMark is the table's journal on a simulated disk whose
// power is cut when the controller appends the rules_epoch record that
// follows a checkpoint: the checkpoint is durable, its epoch record never
// written.
type cutBeforeEpochMark struct {
	Journal
	d      *disk.Disk
	mu     sync.Mutex
	lastCk bool
	cut    bool
}

func (c *cutBeforeEpochMark) Append(e Entry) (uint64, error) {
	c.mu.Lock()
	if c.lastCk && e.Kind == (RulesEpoch{}).Kind() && !c.cut {
		c.cut = true
		c.d.PowerCut()
	}
	c.lastCk = e.Kind == CheckpointKind
	c.mu.Unlock()
	return c.Journal.Append(e)
}

func openSimJournal(t *testing.T, d *disk.Disk, clk clockwork.Clock) (*journal.Journal, journal.RecoveryReport) {
	t.Helper()
	o := journal.DefaultOptions()
	o.Dir, o.FS, o.Clock, o.AnchorKind = "/t1/journal", d, clk, CheckpointKind
	j, rep, err := journal.Open(o, zerolog.Nop())
	require.NoError(t, err)
	return j, rep
}

// kindsAfter is the kinds of the records of j from seq on.
func kindsAfter(t *testing.T, j *journal.Journal, seq uint64) []string {
	t.Helper()
	var kinds []string
	require.NoError(t, j.Replay(seq, func(r journal.Record) error {
		kinds = append(kinds, r.Kind)
		return nil
	}))
	return kinds
}

// TestPowerCutBetweenCheckpointAndEpoch: the power is cut after a
// checkpoint is durable and before the rules_epoch record after it is.
// The restart trusts the checkpoint (a whole, checksummed record naming
// its epoch) and judges the tail by that epoch, and it journals the epoch
// record the checkpoint lacks before any other input: a build before
// epochs, put back on the directory, replays from the newest checkpoint
// and must stop at that record instead of judging what follows by its own
// rules (TestCheckpointRepeatsRulesEpoch).
func TestPowerCutBetweenCheckpointAndEpoch(t *testing.T) {
	d := disk.New(disk.Options{Seed: 1})
	clk := clockwork.NewFakeClockAt(ckEpoch)
	jj, _ := openSimJournal(t, d, clk)
	cj := &cutBeforeEpochMark{Journal: NewJournal(jj), d: d}
	h := startWith(t, "000", cj, clk, func(o *Options) { o.CheckpointEvery = 1 })
	h.waitPhase(PhaseBetting)
	// The first checkpoint, when betting opened, lost its epoch record:
	// the power is off and the controller's loop stops at its next write.
	require.Eventually(t, d.IsCut, 5*time.Second, time.Millisecond)
	seq := h.c.Snapshot().Seq
	h.stop()
	_ = jj.Close()

	d.Reboot()
	jj, _ = openSimJournal(t, d, clk)
	ck := jj.LastOfKind(CheckpointKind)
	require.NotZero(t, ck)
	require.Equal(t, []string{CheckpointKind}, kindsAfter(t, jj, ck), "the checkpoint is the last durable record")

	h = startWith(t, "000", NewJournal(jj), clk, func(o *Options) { o.CheckpointEvery = 1 })
	h.ping()
	assert.Equal(t, CurrentRulesEpoch, h.c.m.Epoch(), "the tail is judged by the checkpoint's epoch")
	assert.Equal(t, seq, h.c.Snapshot().Seq, "the table the checkpoint holds")
	playRound(t, h, 0)
	h.stop()

	kinds := kindsAfter(t, jj, ck)
	require.GreaterOrEqual(t, len(kinds), 3)
	assert.Equal(t, []string{CheckpointKind, "rules_epoch"}, kinds[:2], "the epoch record follows the checkpoint before any input")
	var in Input
	require.NoError(t, jj.Replay(ck+1, func(r journal.Record) error {
		if in == nil {
			var err error
			in, err = DecodeInput(r.Data)
			return err
		}
		return nil
	}))
	assert.Equal(t, RulesEpoch{Epoch: CurrentRulesEpoch}, in)

	// Every checkpoint is followed by its epoch, and the journal replays
	// into the table that played.
	jj.Close()
	jj, _ = openSimJournal(t, d, clk)
	defer jj.Close()
	all := kindsAfter(t, jj, 1)
	for i, k := range all {
		if k == CheckpointKind {
			require.Less(t, i+1, len(all))
			assert.Equal(t, "rules_epoch", all[i+1], "after record %d", i+1)
		}
	}
	m, _, err := replayed(t, NewJournal(jj))
	require.NoError(t, err)
	assert.Equal(t, CurrentRulesEpoch, m.Epoch())
	assert.Equal(t, 1, m.State().Rounds)
}
