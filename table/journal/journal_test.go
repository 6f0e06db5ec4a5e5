package journal_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/journal/journaltest"
)

func TestAppendReplay(t *testing.T) {
	dir := t.TempDir()
	j, rep := open(t, journal.Options{Dir: dir})
	assert.Equal(t, journal.RecoveryReport{Segments: 1, FirstSeq: 1}, rep)
	assert.Zero(t, j.LastSeq())
	const n = 1000 // several sparse-index marks
	appendN(t, j, 0, n)
	assert.Equal(t, uint64(n), j.LastSeq())

	tests := []struct {
		name string
		from uint64
		want []journal.Record
	}{
		{"from zero is everything", 0, wantRange(0, n)},
		{"from one", 1, wantRange(0, n)},
		{"from the middle of a mark interval", 300, wantRange(299, n)},
		{"from a mark", 257, wantRange(256, n)},
		{"from the last", n, wantRange(n-1, n)},
		{"past the end", n + 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, replayAll(t, j, tc.from))
		})
	}
}

func TestReplayStopsOnCallbackError(t *testing.T) {
	j, _ := open(t, journal.Options{Dir: t.TempDir()})
	const n = 2000 // several pipeline batches
	appendN(t, j, 0, n)
	stop := errors.New("stop here")
	tests := []struct {
		name   string
		stopAt uint64
	}{
		{"in the first batch", 4},
		{"at a batch boundary", 512},
		{"deep in", 1700},
		{"at the last record", n},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seen uint64
			err := j.Replay(0, func(r journal.Record) error {
				seen++
				require.Equal(t, seen, r.Seq)
				if r.Seq == tc.stopAt {
					return stop
				}
				return nil
			})
			require.ErrorIs(t, err, stop)
			assert.Equal(t, tc.stopAt, seen, "no record after the one that stopped the replay")
		})
	}
}

func TestReplayPanicInCallback(t *testing.T) {
	j, _ := open(t, journal.Options{Dir: t.TempDir()})
	appendN(t, j, 0, 2000)
	before := runtime.NumGoroutine()
	func() {
		defer func() { assert.Equal(t, "boom", recover()) }()
		_ = j.Replay(0, func(r journal.Record) error {
			if r.Seq == 700 {
				panic("boom")
			}
			return nil
		})
	}()
	// The reading goroutine was stopped and waited for. (Polled: goroutines
	// of earlier tests or of the runtime may come and go meanwhile.)
	waitFor(t, "goroutines back to the count before the replay", func() bool {
		return runtime.NumGoroutine() <= before
	})
	assert.Len(t, replayAll(t, j, 0), 2000)
}

func TestReplayKeepsData(t *testing.T) {
	j, _ := open(t, journal.Options{Dir: t.TempDir()})
	big := rec(0)
	big.Data = make([]byte, 40_000) // bigger than a slab share: cloned on its own
	for i := range big.Data {
		big.Data[i] = byte(i)
	}
	_, err := j.Append(big)
	require.NoError(t, err)
	appendN2 := func(from, to int) {
		for i := from; i < to; i++ {
			_, err := j.Append(rec(i))
			require.NoError(t, err)
		}
	}
	appendN2(1, 2000)
	got := replayAll(t, j, 0)
	require.Len(t, got, 2000)
	// Data kept from the callback stays intact after later records were
	// decoded (slabs are never reused).
	assert.Equal(t, big.Data, got[0].Data)
	for i := 1; i < 2000; i++ {
		require.Equal(t, rec(i).Data, got[i].Data)
	}
}

func TestReopenContinues(t *testing.T) {
	dir := t.TempDir()
	j, _ := open(t, journal.Options{Dir: dir})
	appendN(t, j, 0, 10)
	require.NoError(t, j.Close())
	require.NoError(t, j.Close(), "Close twice")

	j, rep := open(t, journal.Options{Dir: dir})
	assert.Equal(t, journal.RecoveryReport{Segments: 1, FirstSeq: 1, LastSeq: 10, Records: 10}, rep)
	appendN(t, j, 10, 20)
	assert.Equal(t, wantRange(0, 20), replayAll(t, j, 0))
	require.NoError(t, j.Close())

	vr, err := journal.Verify(dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(20), vr.Records)
	assert.Equal(t, uint64(20), vr.LastSeq)
	assert.Nil(t, vr.Bad)
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, _ = open(t, journal.Options{Dir: dir})
	tests := []struct {
		name string
		opts journal.Options
		want error
	}{
		{"no dir", journal.Options{}, journal.ErrNoDir},
		{"locked by another journal", journal.Options{Dir: dir}, journal.ErrLocked},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := journal.Open(tc.opts, testLog(t))
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestAppendErrors(t *testing.T) {
	j, _ := open(t, journal.Options{Dir: t.TempDir(), MaxRecordBytes: 200})
	big := rec(0)
	big.Data = make([]byte, 300)
	_, err := j.Append(big)
	require.ErrorIs(t, err, journal.ErrTooLarge)
	require.NoError(t, j.Err(), "a refused record does not fail the journal")
	seq, err := j.Append(rec(0))
	require.NoError(t, err)
	assert.Equal(t, uint64(1), seq)

	require.NoError(t, j.Close())
	_, err = j.Append(rec(1))
	require.ErrorIs(t, err, journal.ErrClosed)
	require.ErrorIs(t, j.Replay(0, func(journal.Record) error { return nil }), journal.ErrClosed)
}

func TestZeroAndEmptyFields(t *testing.T) {
	j, _ := open(t, journal.Options{Dir: t.TempDir()})
	r := journal.Record{Kind: "timer"} // no time, round, shoe or data
	_, err := j.Append(r)
	require.NoError(t, err)
	r.Seq = 1
	assert.Equal(t, []journal.Record{r}, replayAll(t, j, 0))
}

func TestConcurrentAppends(t *testing.T) {
	const writers, each = 16, 100
	dir := t.TempDir()
	j, _ := open(t, journal.Options{Dir: dir, SegmentBytes: 16 << 10, MaxBatch: 8})
	seqs := make([][]uint64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r := rec(w*each + i)
				seq, err := j.Append(r)
				if !assert.NoError(t, err) {
					return
				}
				seqs[w] = append(seqs[w], seq)
			}
		})
	}
	wg.Wait()
	checkWriterSeqs(t, seqs, each)
	got := replayAll(t, j, 0)
	require.Len(t, got, writers*each)
	for i, r := range got {
		require.Equal(t, uint64(i+1), r.Seq)
	}
	require.NoError(t, j.Close())
	_, err := journal.Verify(dir)
	require.NoError(t, err)
}

func TestAppendAsyncPipelines(t *testing.T) {
	j, _ := open(t, journal.Options{Dir: t.TempDir()})
	var pend []*journal.Pending
	for i := range 50 {
		pend = append(pend, j.AppendAsync(rec(i)))
	}
	for i, p := range pend {
		seq, err := p.Wait()
		require.NoError(t, err)
		require.Equal(t, uint64(i+1), seq, "records keep the order of AppendAsync calls")
		select {
		case <-p.Done():
		default:
			t.Fatal("Done not closed after Wait")
		}
	}
	assert.Equal(t, wantRange(0, 50), replayAll(t, j, 0))
}

func TestGroupCommitWindow(t *testing.T) {
	clk := clockwork.NewFakeClock()
	fs := journaltest.NewFS()
	j, _ := open(t, journal.Options{Dir: t.TempDir(), FS: fs, Clock: clk,
		GroupCommitWindow: time.Millisecond, MaxBatch: 8})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	waitAll := func(pend []*journal.Pending) {
		for _, p := range pend {
			_, err := p.Wait()
			require.NoError(t, err)
		}
	}

	// The first append opens the window; those arriving within it join the
	// batch, and nothing is written until the window closes.
	syncs := fs.Syncs()
	pend := []*journal.Pending{j.AppendAsync(rec(0))}
	require.NoError(t, clk.BlockUntilContext(ctx, 1), "the writer waits out the window")
	for i := 1; i < 4; i++ {
		// Queued when AppendAsync returns, so in the batch when the window
		// closes, whether or not the writer took it yet.
		pend = append(pend, j.AppendAsync(rec(i)))
	}
	for _, p := range pend {
		select {
		case <-p.Done():
			t.Fatal("an append completed before the window closed")
		default:
		}
	}
	clk.Advance(time.Millisecond)
	waitAll(pend)
	assert.Equal(t, 1, fs.Syncs()-syncs, "four appends, one fsync")

	// A full batch does not wait for the window.
	syncs = fs.Syncs()
	pend = []*journal.Pending{j.AppendAsync(rec(4))}
	require.NoError(t, clk.BlockUntilContext(ctx, 1))
	for i := 5; i < 12; i++ {
		pend = append(pend, j.AppendAsync(rec(i)))
	}
	waitAll(pend) // no Advance: MaxBatch closed the batch
	assert.Equal(t, 1, fs.Syncs()-syncs)
	assert.Equal(t, wantRange(0, 12), replayAll(t, j, 0))
}

// TestConcurrentReaders replays, recalls and reads stats while appenders
// write and segments rotate and retire; -race checks the locking, and each
// replay must see a gap-free prefix of the journal.
func TestConcurrentReaders(t *testing.T) {
	const writers, each = 4, 150
	j, _ := open(t, journal.Options{Dir: t.TempDir(), SegmentBytes: 4 << 10, MaxBytes: 32 << 10})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := j.Append(rec(w*each + i)); !assert.NoError(t, err) {
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		last := j.LastSeq()
		var prev uint64
		require.NoError(t, j.Replay(last-min(last, 40), func(r journal.Record) error {
			if prev != 0 {
				require.Equal(t, prev+1, r.Seq)
			}
			prev = r.Seq
			return nil
		}))
		assert.GreaterOrEqual(t, prev, last, "a replay reaches what was durable when it began")
		for _, r := range j.Rounds(3) {
			if _, err := j.Round(r.Code); err != nil {
				require.ErrorIs(t, err, journal.ErrNotFound, "only retention may remove a listed round")
			}
		}
		st := j.Stats()
		assert.LessOrEqual(t, st.FirstSeq, st.LastSeq+1)
	}
	assert.Equal(t, uint64(writers*each), j.LastSeq())
}
