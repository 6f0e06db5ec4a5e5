package journal_test

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/simulators/disk"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/journal/journaltest"
	"github.com/livetable/livetable/table/vfs"
)

// TestPreallocatedSegment: the active segment is preallocated (up to
// SegmentBytes here), its records end at the first all-zero frame header,
// and a clean close, a reopen and Verify see the zeros as room, not as a
// torn tail; a reopen preallocates again. A sealed segment has no zeros:
// its trailer follows its last record.
func TestPreallocatedSegment(t *testing.T) {
	const segBytes = 8 << 10
	for _, n := range []int{0, 1, 2, 40} {
		t.Run(fmt.Sprintf("records=%d", n), func(t *testing.T) {
			dir := t.TempDir()
			opts := journal.Options{Dir: dir, SegmentBytes: segBytes}
			j, rep := open(t, opts)
			require.Nil(t, rep.Tail)
			appendN(t, j, 0, n)
			segs := segments(t, dir)
			last := segs[len(segs)-1]
			assert.Equal(t, int64(segBytes), fileSize(t, last), "the active segment is preallocated")
			// A reader of the live journal stops at the zero header.
			r, rrep := open(t, journal.Options{Dir: dir, ReadOnly: true})
			assert.Nil(t, rrep.Tail)
			assert.Equal(t, wantRange(0, n), replayAll(t, r, 0))
			require.NoError(t, r.Close())
			vr, err := journal.Verify(dir)
			require.NoError(t, err, "Verify while the journal is open")
			assert.Equal(t, uint64(n), vr.LastSeq)
			assert.Empty(t, vr.BadTrailers)
			require.NoError(t, j.Close())

			for _, p := range segs[:len(segs)-1] {
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				end := recordsEnd(t, p)
				assert.Equal(t, trailerMagic, b[end:end+int64(len(trailerMagic))], "%s: the trailer follows the last record", p)
			}
			j, rep = open(t, opts)
			assert.Nil(t, rep.Tail, "a clean zero tail is no torn tail")
			assert.Zero(t, rep.CutBytes)
			assert.Equal(t, uint64(n), rep.LastSeq)
			assert.Equal(t, int64(segBytes), fileSize(t, last), "preallocated again")
			appendN(t, j, n, n+1)
			require.NoError(t, j.Close())
			vr, err = journal.Verify(dir)
			require.NoError(t, err)
			assert.Equal(t, uint64(n+1), vr.LastSeq)
			assert.Equal(t, len(segs)-1, vr.Trailers)
			assert.Empty(t, vr.BadTrailers)
		})
	}
}

// TestPreviousLayoutOpens: a segment written before preallocation (no
// zeros after its records) opens as it is and is preallocated for the
// appends that follow.
func TestPreviousLayoutOpens(t *testing.T) {
	dir := t.TempDir()
	opts := journal.Options{Dir: dir, SegmentBytes: 8 << 10}
	j, _ := open(t, opts)
	appendN(t, j, 0, 7)
	require.NoError(t, j.Close())
	path := segments(t, dir)[0]
	stripTail(t, path)
	j, rep := open(t, opts)
	assert.Nil(t, rep.Tail)
	assert.Equal(t, uint64(7), rep.LastSeq)
	assert.Equal(t, int64(8<<10), fileSize(t, path))
	appendN(t, j, 7, 9)
	require.NoError(t, j.Close())
	_, err := journal.Verify(dir)
	require.NoError(t, err)
}

// TestRecordBeyondZeroGap: bytes after the first zero frame header are
// judged by the rule of a torn tail. A whole record of a later batch
// beyond zeros proves the batch before it was fsync'd: the zeros are lost
// acknowledged records, and Open refuses (*CorruptError). One of the same
// batch as the records before the gap (a batch torn by a power cut, its
// later pages on disk) is a torn tail, cut with an alarm.
func TestRecordBeyondZeroGap(t *testing.T) {
	tests := []struct {
		name      string
		batchPos  uint64 // the stale record's position in its batch
		wantTail  bool
		wantProbl journal.Problem
	}{
		{name: "record of a later batch", batchPos: 0, wantProbl: journal.ProblemLength},
		{name: "record of the batch cut short", batchPos: 1, wantTail: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := journal.Options{Dir: dir, SegmentBytes: 8 << 10}
			j, _ := open(t, opts)
			appendN(t, j, 0, 6) // one batch each
			require.NoError(t, j.Close())
			path := segments(t, dir)[0]
			fr := frames(t, path)
			gap, stale := fr[4], fr[5]
			mutate(t, path, func(b []byte) []byte {
				rec := append([]byte(nil), b[stale.off:stale.off+int64(stale.n)]...)
				clear(b[gap.off:])
				// Seq 6 again, 300 bytes further, with its batch position
				// set (the CRC fixed: a whole record as far as framing goes).
				at := int(stale.off) + 300
				copy(b[at:], rec)
				b[at+frameHeader+fixedBody] = byte(tc.batchPos)
				fixCRC(b, at)
				return b
			})
			orig := copyDir(t, dir)
			_, verr := journal.Verify(dir)
			j, rep, err := journal.Open(opts, testLog(t))
			if !tc.wantTail {
				require.ErrorIs(t, err, journal.ErrCorrupt)
				var ce *journal.CorruptError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, gap.off, ce.Offset)
				assert.Equal(t, tc.wantProbl, ce.Problem)
				assert.Equal(t, uint64(5), ce.Seq)
				assert.False(t, ce.Tail)
				sameFiles(t, orig, dir)
				require.ErrorIs(t, verr, journal.ErrCorrupt)
				return
			}
			require.ErrorIs(t, verr, journal.ErrTornTail)
			require.NoError(t, err)
			defer j.Close()
			require.NotNil(t, rep.Tail)
			assert.Equal(t, gap.off, rep.Tail.Offset)
			assert.Equal(t, uint64(4), rep.LastSeq)
			assert.Equal(t, 2, rep.Tail.Records, "seqs 5 and 6")
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, isZeros(b[gap.off:]), "nothing stale is left past the records")
			appendN(t, j, 4, 5)
		})
	}
}

// TestPreallocationFailureFallsBack: when the file system cannot
// preallocate (no fallocate, or no room for the preallocation), appends
// that fit on the disk still succeed: the segment grows as it is written.
func TestPreallocationFailureFallsBack(t *testing.T) {
	t.Run("no fallocate", func(t *testing.T) {
		dir := t.TempDir()
		fs := journaltest.NewFS()
		fs.NoAllocate()
		opts := journal.Options{Dir: dir, FS: fs, SegmentBytes: 8 << 10}
		j, _ := open(t, opts)
		appendN(t, j, 0, 5)
		path := segments(t, dir)[0]
		assert.Equal(t, recordsEnd(t, path), fileSize(t, path), "no room preallocated")
		require.NoError(t, j.Close())
		j, rep := open(t, opts)
		assert.Nil(t, rep.Tail)
		appendN(t, j, 5, 6)
		require.NoError(t, j.Close())
	})
	t.Run("ENOSPC on the simulated disk", func(t *testing.T) {
		d := disk.New(disk.Options{Seed: 1})
		opts := journal.Options{Dir: "/j", FS: d, SegmentBytes: 64 << 10}
		// Room for the header and a few records, not for the 64 KiB
		// preallocation.
		d.SetCapacity(2 << 10)
		j, _, err := journal.Open(opts, testLog(t))
		require.NoError(t, err)
		var n int
		for n = 0; n < 100; n++ {
			if _, err = j.Append(rec(n)); err != nil {
				break
			}
		}
		require.ErrorIs(t, err, journal.ErrDiskFull, "the disk fills up in the end")
		require.GreaterOrEqual(t, n, 10, "the appends that fit succeeded")
		require.NoError(t, j.Close())
		d.SetCapacity(0)
		j, rep, err := journal.Open(opts, testLog(t))
		require.NoError(t, err)
		assert.Equal(t, uint64(n), rep.LastSeq)
		require.NoError(t, j.Close())
	})
	t.Run("EIO from Allocate", func(t *testing.T) {
		d := disk.New(disk.Options{Seed: 1})
		d.Inject(disk.Fault{Op: disk.OpAllocate, Err: syscall.EIO, Every: true})
		j, _, err := journal.Open(journal.Options{Dir: "/j", FS: d, SegmentBytes: 1 << 10}, testLog(t))
		require.NoError(t, err)
		appendN(t, j, 0, 30) // several segments
		require.NoError(t, j.Close())
		_, err = journal.VerifyFS(d, "/j")
		require.NoError(t, err)
	})
}

// TestLiveReadersStopAtZeroHeader: a read-only open of a journal being
// written, between appends, reads every record written and no further,
// without reporting the room after them as a torn tail.
func TestLiveReadersStopAtZeroHeader(t *testing.T) {
	dir := t.TempDir()
	w, _ := open(t, journal.Options{Dir: dir, SegmentBytes: 4 << 10})
	for n := 1; n <= 30; n++ {
		appendN(t, w, n-1, n)
		r, rep := open(t, journal.Options{Dir: dir, ReadOnly: true})
		require.Nil(t, rep.Tail, "after %d records", n)
		require.Equal(t, uint64(n), rep.LastSeq)
		got := replayAll(t, r, uint64(n))
		require.Equal(t, wantRange(n-1, n), got)
		require.NoError(t, r.Close())
	}
}

// TestShortZeroTail: records that end less than a frame header before
// the end of the preallocated room (the last batch before the room runs
// out) end cleanly, however few zeros follow them.
func TestShortZeroTail(t *testing.T) {
	for _, room := range []int64{1, 3, 7, 8, 9} {
		t.Run(fmt.Sprintf("room=%d", room), func(t *testing.T) {
			dir := t.TempDir()
			opts := journal.Options{Dir: dir, SegmentBytes: 8 << 10}
			j, _ := open(t, opts)
			appendN(t, j, 0, 3)
			require.NoError(t, j.Close())
			path := segments(t, dir)[0]
			require.NoError(t, os.Truncate(path, recordsEnd(t, path)+room))
			_, err := journal.Verify(dir)
			require.NoError(t, err)
			j, rep := open(t, opts)
			assert.Nil(t, rep.Tail)
			assert.Equal(t, uint64(3), rep.LastSeq)
			appendN(t, j, 3, 4)
		})
	}
}

// TestLiveReaderRereadsARecordBeingWritten: a read-only open of a live
// journal can read a record while the writer is copying it in place
// (its header there, the rest still zeros). The scan reads the spot
// again before judging it, and then finds the record whole: no torn
// tail, nothing lost.
func TestLiveReaderRereadsARecordBeingWritten(t *testing.T) {
	dir := t.TempDir()
	// 128 KiB of room: Open's look for a trailer reads only the last
	// 64 KiB (zeros), and the scan is the first to read the records.
	w, _ := open(t, journal.Options{Dir: dir, SegmentBytes: 128 << 10})
	appendN(t, w, 0, 6)
	path := segments(t, dir)[0]
	fr := frames(t, path)
	last := fr[len(fr)-1]
	fs := &halfWrittenFS{at: last.off + frameHeader + 5}
	r, rep := open(t, journal.Options{Dir: dir, FS: fs, ReadOnly: true})
	require.Equal(t, 1, fs.torn, "the first read caught the record half written")
	assert.Nil(t, rep.Tail)
	assert.Equal(t, uint64(6), rep.LastSeq)
	assert.Equal(t, wantRange(0, 6), replayAll(t, r, 0))
}

// halfWrittenFS is the operating system's files, except that the first
// read of a segment's records (from the header's end: the scan's) that
// covers offset at returns zeros from there on: what a reader sees while
// the writer's copy has not got that far.
type halfWrittenFS struct {
	vfs.OS
	at   int64
	torn int
}

func (h *halfWrittenFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := h.OS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, ".ltj") {
		return f, err
	}
	return &halfWrittenFile{File: f, fs: h}, nil
}

type halfWrittenFile struct {
	vfs.File
	fs *halfWrittenFS
}

func (f *halfWrittenFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	if h := f.fs; h.torn == 0 && off == headerSize && h.at < off+int64(n) {
		h.torn++
		clear(p[h.at-off : n])
	}
	return n, err
}
