package mqttlink

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/simulators/disk"
)

const simOutboxDir = "/table/outbox"

// simOutboxRun is what a workload did to an outbox on the simulated disk.
type simOutboxRun struct {
	appended []entry // in pos order: pos is the index + 1
	synced   int     // records written before the last successful fsync
	acked    int     // records acknowledged
	err      error   // the first failure
}

func openSimOutbox(d *disk.Disk) (*outbox, error) {
	// Small bounds: compaction and payloads read back from the file come
	// up within a few dozen records.
	return openOutbox(d, simOutboxDir, 1<<20, 2<<10, 1<<10, zerolog.Nop())
}

// simOutboxWorkload appends, writes, fsyncs and acknowledges as the pump
// and SyncLoop do, in an order drawn from seed, until something fails.
func simOutboxWorkload(d *disk.Disk, seed uint64, n int) simOutboxRun {
	var run simOutboxRun
	ob, err := openSimOutbox(d)
	if err != nil {
		run.err = err
		return run
	}
	defer ob.Close()
	rng := rand.New(rand.NewPCG(seed, 3))
	fail := func(err error) bool {
		if err != nil && run.err == nil {
			run.err = err
		}
		return run.err != nil
	}
	for len(run.appended) < n && run.err == nil {
		var batch []entry
		for range 1 + rng.IntN(3) {
			seq := uint64(len(run.appended) + len(batch) + 1)
			batch = append(batch, entry{seq: seq, state: rng.IntN(4) == 0,
				payload: fmt.Appendf(nil, `{"seq":%d,"pad":%q}`, seq, bytes.Repeat([]byte{'x'}, rng.IntN(300)))})
		}
		if fail(ob.Append(batch)) {
			break
		}
		// Handed out: a failed Flush may still have written them (its
		// compaction failed), and Close writes what it did not.
		run.appended = append(run.appended, batch...)
		if fail(ob.Flush()) {
			break
		}
		if rng.IntN(3) == 0 { // SyncLoop's fsync
			ob.fileMu.Lock()
			err := ob.f.Sync()
			ob.fileMu.Unlock()
			if fail(err) {
				break
			}
			run.synced = len(run.appended)
		}
		for k := rng.IntN(4); k > 0 && run.acked < len(run.appended); k-- {
			r, ok := ob.Pending(0)
			if !ok {
				break
			}
			if fail(ob.Ack(r.pos)) {
				break
			}
			run.acked++
		}
		if rng.IntN(2) == 0 && fail(ob.SaveAck()) { // the link's settle
			break
		}
	}
	return run
}

// checkOutboxRecovered reopens the outbox: it must open, hold only records
// that were appended, in order, and hold every record that was fsync'd
// and not acknowledged; its last seq covers everything fsync'd.
func checkOutboxRecovered(t *testing.T, d *disk.Disk, run simOutboxRun, what string) *outbox {
	t.Helper()
	ob, err := openSimOutbox(d)
	require.NoError(t, err, "%s: the outbox must open", what)
	if run.synced > 0 {
		require.GreaterOrEqual(t, ob.LastSeq(), run.appended[run.synced-1].seq, "%s: last seq", what)
	}
	var got []record
	for i := 0; ; i++ {
		r, ok := ob.Pending(i)
		if !ok {
			break
		}
		got = append(got, r)
	}
	for k, r := range got {
		require.LessOrEqual(t, r.pos, uint64(len(run.appended)), "%s: record at pos %d never appended", what, r.pos)
		want := run.appended[r.pos-1]
		require.Equal(t, want.seq, r.seq, what)
		require.Equal(t, string(want.payload), string(r.payload), what)
		require.Equal(t, want.state, r.state, what)
		if k > 0 {
			require.Equal(t, got[k-1].pos+1, r.pos, "%s: records in order", what)
		}
	}
	// Everything fsync'd and not acknowledged is still to be published.
	for i := run.acked; i < run.synced; i++ {
		pos := uint64(i + 1)
		require.True(t, len(got) > 0 && got[0].pos <= pos && got[len(got)-1].pos >= pos,
			"%s: record %d was fsync'd, not acknowledged, and is gone (pending %d records)", what, pos, len(got))
	}
	return ob
}

// TestOutboxPowerLossOnSimulatedDisk runs the outbox on the simulated disk
// through a power cut at a seeded point of each run: what it promises
// (every record fsync'd and not acknowledged is published after the
// restart, nothing is published that was not appended, out of order or
// changed) holds, through compactions, acknowledgement marks written
// without fsync and torn tails.
func TestOutboxPowerLossOnSimulatedDisk(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 100
	}
	const n = 80
	for seed := range uint64(seeds) {
		opts := disk.Options{Seed: seed, KeepUnsynced: seed%4 != 0, TearZeros: seed%3 == 0}
		full := disk.New(opts)
		require.NoError(t, simOutboxWorkload(full, seed, n).err)
		total := full.Ops()
		d := disk.New(opts)
		at := 1 + rand.New(rand.NewPCG(seed, 5)).IntN(total)
		d.PowerCutAt(at)
		run := simOutboxWorkload(d, seed, n)
		what := fmt.Sprintf("seed %d, cut at op %d of %d", seed, at, total)
		if !d.IsCut() {
			d.PowerCut() // the cut fell on Close
		}
		d.Reboot()
		ob := checkOutboxRecovered(t, d, run, what)
		// It goes on: new records follow every position handed out.
		last := ob.LastSeq()
		require.NoError(t, ob.Append([]entry{{seq: last + 1, payload: []byte(`{}`)}}), what)
		require.NoError(t, ob.Flush(), what)
		require.NoError(t, ob.Close(), what)
	}
}

// TestOutboxDiskFaultsOnSimulatedDisk: EIO from a write or an fsync, and a
// full disk, come back as errors (the link then stops rather than
// pretend), and what was fsync'd before survives a power cut after.
func TestOutboxDiskFaultsOnSimulatedDisk(t *testing.T) {
	for seed := range uint64(90) {
		rng := rand.New(rand.NewPCG(seed, 13))
		d := disk.New(disk.Options{Seed: seed, KeepUnsynced: seed%2 == 0})
		var what string
		var cause error = syscall.EIO
		switch seed % 3 {
		case 0:
			nth := 1 + rng.IntN(40)
			d.Inject(disk.Fault{Op: disk.OpWrite, Path: outboxLogName, N: nth, Err: syscall.EIO})
			what = fmt.Sprintf("seed %d: EIO at write %d", seed, nth)
		case 1:
			nth := 1 + rng.IntN(15)
			d.Inject(disk.Fault{Op: disk.OpSync, Path: outboxLogName, N: nth, Err: syscall.EIO})
			what = fmt.Sprintf("seed %d: EIO at fsync %d", seed, nth)
		case 2:
			c := int64(500 + rng.IntN(10000))
			d.SetCapacity(c)
			cause = syscall.ENOSPC
			what = fmt.Sprintf("seed %d: a disk of %d bytes", seed, c)
		}
		run := simOutboxWorkload(d, seed, 80)
		if run.err == nil {
			continue
		}
		require.True(t, errors.Is(run.err, cause), "%s: %v", what, run.err)
		d.ClearFaults()
		d.SetCapacity(0)
		d.PowerCut()
		d.Reboot()
		ob := checkOutboxRecovered(t, d, run, what)
		require.NoError(t, ob.Close())
	}
}
