package journal_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/simulators/disk"
	"github.com/livetable/livetable/table/journal"
)

// simWindow is the group commit window of the journals on the simulated
// disk: with a fake clock it makes every batch exactly the appends the
// workload queued together, so a seed is one run.
const simWindow = time.Millisecond

func simOptions(d *disk.Disk, clk clockwork.Clock) journal.Options {
	return journal.Options{Dir: "/table/journal", FS: d, SegmentBytes: 1 << 10, MaxBytes: 6 << 10,
		GroupCommitWindow: simWindow, Clock: clk, MaxBatch: 8}
}

// simRun is what a workload got from the journal.
type simRun struct {
	acked []journal.Record // appends that returned, with their seqs
	tried []journal.Record // every record appended, acknowledged or not, in order
	err   error            // the first failure
}

// simRecord is the i-th record of a seed's workload: sizes vary so that
// segments rotate at different records.
func simRecord(rng *rand.Rand, i int) journal.Record {
	r := rec(i)
	r.Data = fmt.Appendf(nil, `{"n":%d,"pad":%q}`, i, make([]byte, rng.IntN(200)))
	return r
}

// simWorkload appends n records in single appends and batches of up to
// five (drawn from seed) until one fails, and closes the journal.
func simWorkload(t *testing.T, d *disk.Disk, seed uint64, n int) simRun {
	t.Helper()
	var run simRun
	clk := clockwork.NewFakeClockAt(base)
	j, _, err := journal.Open(simOptions(d, clk), zerolog.Nop())
	if err != nil {
		run.err = err
		return run
	}
	defer j.Close()
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := 0; i < n && run.err == nil; {
		k := 1
		if rng.IntN(3) == 0 {
			k = 2 + rng.IntN(4)
		}
		var ps []*journal.Pending
		for range min(k, n-i) {
			r := simRecord(rng, i)
			run.tried = append(run.tried, r)
			ps = append(ps, j.AppendAsync(r))
			i++
		}
		for _, p := range ps {
			waitPending(t, clk, p)
			seq, err := p.Wait()
			if err != nil {
				if run.err == nil {
					run.err = err
				}
				continue
			}
			require.NoError(t, run.err, "an append succeeded after one before it failed")
			r := run.tried[len(run.acked)]
			r.Seq = seq
			run.acked = append(run.acked, r)
		}
	}
	return run
}

// waitPending advances the fake clock past the group commit window
// whenever the journal's writer waits on it, until p completes.
func waitPending(t *testing.T, clk *clockwork.FakeClock, p *journal.Pending) {
	t.Helper()
	now, cancel := context.WithCancel(context.Background())
	cancel() // BlockUntilContext then only says whether a timer waits
	bound := time.After(time.Minute)
	for {
		select {
		case <-p.Done():
			return
		default:
		}
		if clk.BlockUntilContext(now, 1) == nil {
			clk.Advance(simWindow)
			continue
		}
		select {
		case <-p.Done():
			return
		case <-time.After(50 * time.Microsecond):
		case <-bound:
			t.Fatal("an append never completed")
		}
	}
}

// checkRecovered opens the journal after a power cut or a fault and checks
// that nothing acknowledged was lost, that whatever is there beyond it is
// what was tried, in order, and that a torn tail names records never
// acknowledged.
func checkRecovered(t *testing.T, d *disk.Disk, run simRun, what string) (journal.RecoveryReport, *simJournal) {
	t.Helper()
	clk := clockwork.NewFakeClockAt(base)
	j, rep, err := journal.Open(simOptions(d, clk), zerolog.Nop())
	require.NoError(t, err, "%s: the journal must open after this", what)
	got := replayAll(t, j, 0)
	first := rep.FirstSeq
	require.GreaterOrEqual(t, rep.LastSeq, uint64(len(run.acked)), "%s: acknowledged records lost", what)
	require.LessOrEqual(t, rep.LastSeq, uint64(len(run.tried)), what)
	for k, r := range got {
		i := int(first) - 1 + k
		w := run.tried[i]
		w.Seq = uint64(i + 1)
		require.Equal(t, w, r, "%s: record %d", what, i+1)
	}
	if rep.Tail != nil {
		require.Equal(t, rep.LastSeq, rep.Tail.LastKept(), what)
		require.Greater(t, rep.Tail.Seq, uint64(len(run.acked)), "%s: a torn record was acknowledged", what)
		require.LessOrEqual(t, rep.Tail.Seq+uint64(rep.Tail.Records)-1, uint64(len(run.tried)), what)
	}
	return rep, &simJournal{Journal: j, t: t, clk: clk}
}

// simJournal is a journal on the simulated disk with its fake clock.
type simJournal struct {
	*journal.Journal
	t   *testing.T
	clk *clockwork.FakeClock
}

// append appends r, moving the clock past the group commit window.
func (j *simJournal) append(r journal.Record) (uint64, error) {
	p := j.AppendAsync(r)
	waitPending(j.t, j.clk, p)
	return p.Wait()
}

// TestPowerLossOnSimulatedDisk runs the journal on the simulated disk and
// cuts the power at a seeded point of each run (a second time during
// recovery for some seeds): unsynced writes are dropped or kept in part
// and torn, directory changes without a directory fsync lost. After
// every cut the journal opens, keeps every acknowledged record, names
// the records a torn tail lost (never an acknowledged one), continues the
// seq and the hash chain.
func TestPowerLossOnSimulatedDisk(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 100
	}
	const n = 60
	tails, kept := 0, 0
	for seed := range uint64(seeds) {
		opts := disk.Options{Seed: seed, KeepUnsynced: seed%4 != 0, TearZeros: seed%3 == 0}
		// A run without a cut counts the operations to cut among.
		full := disk.New(opts)
		ref := simWorkload(t, full, seed, n)
		require.NoError(t, ref.err, "seed %d", seed)
		total := full.Ops()

		d := disk.New(opts)
		at := 1 + rand.New(rand.NewPCG(seed, 9)).IntN(total)
		d.PowerCutAt(at)
		run := simWorkload(t, d, seed, n)
		what := fmt.Sprintf("seed %d, cut at op %d of %d", seed, at, total)
		require.True(t, d.IsCut(), what)
		if run.err != nil { // else the cut fell on work after the last append (a rotation, retention)
			require.ErrorIs(t, run.err, disk.ErrPowerCut, what)
		}
		d.Reboot()
		if seed%5 == 1 {
			// A second cut while recovering (cutting the tail, appending).
			d.PowerCutAt(1 + int(seed%7))
			clk := clockwork.NewFakeClockAt(base)
			j, _, err := journal.Open(simOptions(d, clk), zerolog.Nop())
			if err == nil {
				// What this recovery kept is the run's past now; the
				// record it appends follows it.
				last := int(j.LastSeq())
				require.GreaterOrEqual(t, last, len(run.acked), "seed %d: the first recovery lost acknowledged records", seed)
				run.tried = append(run.tried[:last], rec(n+1))
				sj := &simJournal{Journal: j, t: t, clk: clk}
				if _, err := sj.append(rec(n + 1)); err == nil {
					run.acked = run.tried
				}
				_ = j.Close()
			}
			if !d.IsCut() {
				d.PowerCut()
			}
			d.Reboot()
			what += ", and again while recovering"
		}
		rep, j := checkRecovered(t, d, run, what)
		if rep.Tail != nil {
			tails++
		}
		if rep.LastSeq > uint64(len(run.acked)) {
			kept++
		}
		next := rec(n + 2)
		seq, err := j.append(next)
		require.NoError(t, err, what)
		require.Equal(t, rep.LastSeq+1, seq, what)
		require.NoError(t, j.Close())
		vr, err := journal.VerifyFS(d, "/table/journal")
		require.NoError(t, err, what)
		require.Equal(t, seq, vr.LastSeq, what)
	}
	t.Logf("%d seeds: %d torn tails cut, %d runs kept records never acknowledged", seeds, tails, kept)
	require.Positive(t, tails, "the seeds tear tails")
}

// TestDiskFaultsOnSimulatedDisk: EIO from a write or an fsync, or a full
// disk, fails the append that met it and every later one (ErrFailed, and
// ErrDiskFull for ENOSPC), never loses an acknowledged record (also
// across a power cut right after), and a reopened journal on a repaired
// disk goes on.
func TestDiskFaultsOnSimulatedDisk(t *testing.T) {
	for seed := range uint64(120) {
		opts := disk.Options{Seed: seed, KeepUnsynced: seed%2 == 0}
		full := disk.New(opts)
		require.NoError(t, simWorkload(t, full, seed, 40).err)
		rng := rand.New(rand.NewPCG(seed, 11))
		d := disk.New(opts)
		var what string
		switch kind := seed % 3; kind {
		case 0, 1:
			op := disk.OpWrite
			if kind == 1 {
				op = disk.OpSync
			}
			// The n-th operation of that kind on a segment.
			nth := 1 + rng.IntN(30)
			d.Inject(disk.Fault{Op: op, Path: ".ltj", N: nth, Err: syscall.EIO})
			what = fmt.Sprintf("seed %d: EIO at %s %d", seed, op, nth)
		case 2:
			c := int64(200 + rng.IntN(6000))
			d.SetCapacity(c)
			what = fmt.Sprintf("seed %d: a disk of %d bytes", seed, c)
		}
		run := simWorkload(t, d, seed, 40)
		if run.err == nil {
			continue // the fault fell after the workload
		}
		if len(run.tried) > 0 { // else Open itself failed, creating the first segment
			require.ErrorIs(t, run.err, journal.ErrFailed, what)
		}
		if seed%3 == 2 {
			require.ErrorIs(t, run.err, journal.ErrDiskFull, what)
		} else {
			require.ErrorIs(t, run.err, syscall.EIO, what)
		}
		// Reopened as it is, then after a power cut: nothing acknowledged
		// is lost.
		d.ClearFaults()
		d.SetCapacity(0)
		_, j := checkRecovered(t, d, run, what)
		require.NoError(t, j.Close())
		d.PowerCut()
		d.Reboot()
		_, j = checkRecovered(t, d, run, what+", then a power cut")
		_, err := j.append(rec(99))
		require.NoError(t, err, what)
		require.NoError(t, j.Close())
	}
}
