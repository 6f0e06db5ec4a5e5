package journal_test

import (
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/journal/journaltest"
)

// waitFor polls cond until it holds; the deadline only bounds a broken
// test, no timing is asserted.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// frameSize is the on-disk size of rec(i).
func frameSize(i int) int64 {
	r := rec(i)
	return int64(frameHeader + fixedBody + 4 + len(r.Kind) + len(r.Round) + len(r.Shoe) + len(r.Data) + hashSize)
}

func TestWriteFailures(t *testing.T) {
	tests := []struct {
		name string
		// fault is applied after three records were appended.
		fault        func(fs *journaltest.FS)
		segmentBytes int64
		// okAfter is how many more appends succeed before the failure.
		okAfter  int
		diskFull bool
	}{
		{
			name:     "disk full inside a record",
			fault:    func(fs *journaltest.FS) { fs.SetBudget(frameSize(3) + frameSize(4)/2) },
			okAfter:  1,
			diskFull: true,
		},
		{
			name:     "disk full at a record boundary",
			fault:    func(fs *journaltest.FS) { fs.SetBudget(frameSize(3) + frameSize(4)) },
			okAfter:  2,
			diskFull: true,
		},
		{
			name:  "fsync fails",
			fault: func(fs *journaltest.FS) { fs.FailSync(syscall.EIO) },
		},
		{
			name: "disk full while rotating",
			// The fourth record fills the segment; the next segment's
			// header does not fit. The record is durable, later ones fail.
			segmentBytes: headerSize + frameSize(0) + frameSize(1) + frameSize(2) + 1,
			fault:        func(fs *journaltest.FS) { fs.SetBudget(frameSize(3) + 10) },
			okAfter:      1,
			diskFull:     true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fs := journaltest.NewFS()
			j, _ := open(t, journal.Options{Dir: dir, FS: fs, SegmentBytes: tc.segmentBytes})
			appendN(t, j, 0, 3)
			tc.fault(fs)
			appendN(t, j, 3, 3+tc.okAfter)
			acked := 3 + tc.okAfter

			_, err := j.Append(rec(acked))
			require.Error(t, err)
			assert.ErrorIs(t, err, journal.ErrFailed)
			assert.Equal(t, tc.diskFull, isDiskFull(err))
			var werr *journal.WriteError
			require.ErrorAs(t, err, &werr)

			// Refused until reopened, with the first failure's cause.
			_, err = j.Append(rec(acked + 1))
			require.ErrorIs(t, err, journal.ErrFailed)
			assert.Equal(t, tc.diskFull, isDiskFull(err))
			require.ErrorIs(t, j.Err(), journal.ErrFailed)
			assert.Equal(t, uint64(acked), j.LastSeq())
			require.NoError(t, j.Close())

			// Space is back: reopening finds exactly the acknowledged
			// records, nothing of the failed ones, and carries on.
			j, rep := open(t, journal.Options{Dir: dir, SegmentBytes: tc.segmentBytes})
			assert.Nil(t, rep.Tail, "the failed batch was cut off when it failed")
			assert.Equal(t, uint64(acked), rep.LastSeq)
			assert.Equal(t, wantRange(0, acked), replayAll(t, j, 0))
			appendN(t, j, acked, acked+2)
			require.NoError(t, j.Close())
			_, err = journal.Verify(dir)
			require.NoError(t, err)
		})
	}
}

func isDiskFull(err error) bool { return errors.Is(err, journal.ErrDiskFull) }

// TestGroupCommit holds the writer inside an fsync, queues appends behind
// it and checks they all share the next fsync.
func TestGroupCommit(t *testing.T) {
	const queued = 40
	fs := journaltest.NewFS()
	j, _ := open(t, journal.Options{Dir: t.TempDir(), FS: fs, MaxBatch: 64})
	syncsAtStart := fs.Syncs()
	release := fs.HoldSync()
	first := j.AppendAsync(rec(0))
	waitFor(t, "the writer to enter fsync", func() bool { return fs.Waiting() == 1 })
	var pend []*journal.Pending
	for i := 1; i <= queued; i++ {
		pend = append(pend, j.AppendAsync(rec(i)))
	}
	release()
	_, err := first.Wait()
	require.NoError(t, err)
	for i, p := range pend {
		seq, err := p.Wait()
		require.NoError(t, err)
		require.Equal(t, uint64(i+2), seq)
	}
	assert.Equal(t, 2, fs.Syncs()-syncsAtStart, "one fsync for the first record, one for the %d queued behind it", queued)
}

func TestMaxBatch(t *testing.T) {
	fs := journaltest.NewFS()
	j, _ := open(t, journal.Options{Dir: t.TempDir(), FS: fs, MaxBatch: 8})
	syncsAtStart := fs.Syncs()
	release := fs.HoldSync()
	first := j.AppendAsync(rec(0))
	waitFor(t, "the writer to enter fsync", func() bool { return fs.Waiting() == 1 })
	var pend []*journal.Pending
	for i := 1; i <= 8; i++ { // fills the queue (capacity MaxBatch) without blocking
		pend = append(pend, j.AppendAsync(rec(i)))
	}
	release()
	for _, p := range append(pend, first) {
		_, err := p.Wait()
		require.NoError(t, err)
	}
	// The queued eight fit one batch of MaxBatch.
	assert.Equal(t, 2, fs.Syncs()-syncsAtStart)
}

// TestAppendDirectKeepsCallOrder: an Append made while appends are queued
// (its caller's own AppendAsync, or another goroutine's) is not written
// ahead of them, and Appends mixed with AppendAsync from many goroutines
// give every record one seq, each goroutine's in call order.
func TestAppendDirectKeepsCallOrder(t *testing.T) {
	fs := journaltest.NewFS()
	j, _ := open(t, journal.Options{Dir: t.TempDir(), FS: fs, MaxBatch: 64})
	release := fs.HoldSync()
	first := j.AppendAsync(rec(0))
	waitFor(t, "the writer to enter fsync", func() bool { return fs.Waiting() == 1 })
	queued := j.AppendAsync(rec(1))
	direct := make(chan uint64, 1)
	go func() {
		seq, err := j.Append(rec(2))
		assert.NoError(t, err)
		direct <- seq
	}()
	release()
	s0, err := first.Wait()
	require.NoError(t, err)
	s1, err := queued.Wait()
	require.NoError(t, err)
	assert.Equal(t, []uint64{1, 2, 3}, []uint64{s0, s1, <-direct})

	const workers, each = 8, 50
	seqs := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				var seq uint64
				var err error
				if i%3 == 0 {
					seq, err = j.AppendAsync(rec(i)).Wait()
				} else {
					seq, err = j.Append(rec(i))
				}
				if !assert.NoError(t, err) {
					return
				}
				seqs[w] = append(seqs[w], seq)
			}
		}()
	}
	wg.Wait()
	checkWriterSeqs(t, seqs, each)
	assert.EqualValues(t, 3+workers*each, j.LastSeq())
}
