package journal_test

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/journal/journaltest"
)

// TestPowerCut writes n records, then for every byte offset inside the last
// record cuts a copy of the journal there (as a power cut in the middle of
// its write would) and checks that Open recovers, that exactly the last
// record is lost, and that the next Append continues the seq and the chain.
func TestPowerCut(t *testing.T) {
	tests := []struct {
		name string
		opts journal.Options
		// n is the number of records; the last one is cut.
		n int
		// fromZero cuts from the start of the last segment, header
		// included (the last record is alone in a fresh segment).
		fromZero bool
	}{
		{name: "one segment", opts: journal.Options{}, n: 12},
		{name: "first record of a new segment", opts: journal.Options{SegmentBytes: 600}, fromZero: true},
		{name: "only record", opts: journal.Options{}, n: 1, fromZero: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := tc.opts
			opts.Dir = dir
			j, _ := open(t, opts)
			n := tc.n
			if n == 0 {
				// Append until a rotation leaves a fresh segment, then one
				// more record: it is alone in the last segment.
				for len(segments(t, dir)) < 2 {
					appendN(t, j, n, n+1)
					n++
				}
				require.Len(t, segments(t, dir), 2)
				appendN(t, j, n, n+1)
				n++
			} else {
				appendN(t, j, 0, n)
			}
			require.NoError(t, j.Close())
			segs := segments(t, dir)
			last := segs[len(segs)-1]
			fr := frames(t, last)
			end := fileSize(t, last)
			start := fr[len(fr)-1].off
			if tc.fromZero {
				require.Len(t, fr, 1)
				start = 0
			}
			for cut := start; cut < end; cut++ {
				cdir := copyDir(t, dir)
				cpath := filepath.Join(cdir, filepath.Base(last))
				require.NoError(t, os.Truncate(cpath, cut))

				j, rep, err := journal.Open(journal.Options{Dir: cdir, SegmentBytes: opts.SegmentBytes}, testLog(t))
				require.NoError(t, err, "cut at %d", cut)
				require.Equal(t, uint64(n-1), rep.LastSeq, "cut at %d", cut)
				require.Equal(t, uint64(n-1), j.LastSeq())
				clean := cut == fr[len(fr)-1].off // a whole record boundary: nothing torn
				if clean {
					require.Nil(t, rep.Tail, "cut at %d", cut)
				} else {
					require.NotNil(t, rep.Tail, "cut at %d", cut)
					require.ErrorIs(t, rep.Tail, journal.ErrTornTail)
					require.Equal(t, cut-rep.Tail.Offset, rep.CutBytes, "cut at %d", cut)
					// The records lost are named, not only the bytes.
					require.Equal(t, uint64(n), rep.Tail.Seq)
					require.Equal(t, uint64(n-1), rep.Tail.LastKept())
					if rep.Tail.Offset == 0 {
						require.Zero(t, rep.Tail.Records, "a torn header holds no record")
					} else {
						require.Equal(t, 1, rep.Tail.Records, "cut at %d", cut)
						require.Contains(t, rep.Tail.Error(), fmt.Sprintf("record %d lost, last whole record seq %d", n, n-1))
					}
				}
				require.Equal(t, wantRange(0, n-1), replayAll(t, j, 0), "cut at %d", cut)

				seq, err := j.Append(rec(n - 1))
				require.NoError(t, err)
				require.Equal(t, uint64(n), seq, "the seq continues")
				require.NoError(t, j.Close())
				vr, err := journal.Verify(cdir)
				require.NoError(t, err, "the chain continues (cut at %d)", cut)
				require.Equal(t, uint64(n), vr.LastSeq)
				require.NoError(t, os.RemoveAll(cdir))
			}
		})
	}
}

// TestTornTailGarbage covers what a power cut leaves past the last whole
// record besides a short write: zeros (allocated but unwritten blocks) and
// noise.
func TestTornTailGarbage(t *testing.T) {
	noise := make([]byte, 300)
	for i := range noise {
		noise[i] = byte(i*7 + 3)
	}
	tests := []struct {
		name string
		tail []byte
	}{
		{"zeros", make([]byte, 4096)},
		{"noise", noise},
		{"a length and nothing else", []byte{100, 0, 0, 0}},
		{"a huge length", []byte{0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4, 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			j, _ := open(t, journal.Options{Dir: dir})
			appendN(t, j, 0, 5)
			require.NoError(t, j.Close())
			path := segments(t, dir)[0]
			size := fileSize(t, path)
			mutate(t, path, func(b []byte) []byte { return append(b, tc.tail...) })

			_, err := journal.Verify(dir)
			require.ErrorIs(t, err, journal.ErrTornTail)

			j, rep := open(t, journal.Options{Dir: dir})
			require.NotNil(t, rep.Tail)
			assert.Equal(t, size, rep.Tail.Offset)
			assert.Equal(t, int64(len(tc.tail)), rep.CutBytes)
			assert.Equal(t, size, fileSize(t, path))
			appendN(t, j, 5, 6)
			require.NoError(t, j.Close())
			_, err = journal.Verify(dir)
			require.NoError(t, err)
		})
	}
}

// TestCorruptMiddle damages records that are not the torn tail. Open
// must refuse with ErrCorrupt and leave every file as it was, when it
// reads the damaged record: in the active segment, or in a sealed one
// without a trailer (a journal from before trailers: stripped), or whose
// header or trailer the damage reached. A sealed segment with a whole
// trailer is not read by Open (that is what makes a restart independent
// of the journal's size): there a replay that reaches the record fails
// on it, and Verify finds it.
func TestCorruptMiddle(t *testing.T) {
	tests := []struct {
		name    string
		segment int // index among the segment files
		record  int // index among the segment's frames; -1 for the header
		mutate  func(b []byte, off int) []byte
		problem journal.Problem
		// trusted: with its trailer, Open takes the segment from it.
		trusted bool
	}{
		{"flipped data byte", 0, 2, func(b []byte, off int) []byte { b[off+frameHeader+40] ^= 1; return b }, journal.ProblemChecksum, true},
		{"flipped CRC", 0, 2, func(b []byte, off int) []byte { b[off+5] ^= 0x80; return b }, journal.ProblemChecksum, true},
		{"grown length", 0, 1, func(b []byte, off int) []byte { b[off] += 3; return b }, journal.ProblemChecksum, true},
		{"huge length", 0, 1, func(b []byte, off int) []byte { b[off+3] = 0x7f; return b }, journal.ProblemLength, true},
		{"length cut to zero", 1, 0, func(b []byte, off int) []byte { b[off], b[off+1] = 0, 0; return b }, journal.ProblemLength, true},
		{"flipped byte in the last segment, records follow", 2, 0, func(b []byte, off int) []byte { b[off+frameHeader+30] ^= 4; return b }, journal.ProblemChecksum, false},
		{"bad header of a middle segment", 1, -1, func(b []byte, off int) []byte { b[20] ^= 1; return b }, journal.ProblemHeader, false},
		{"zeroed record in the last segment", 2, 1, func(b []byte, off int) []byte {
			n := int(binary.LittleEndian.Uint32(b[off:]))
			clear(b[off : off+frameHeader+n])
			return b
		}, journal.ProblemLength, false},
		{"middle segment cut short", 1, 3, func(b []byte, off int) []byte { return b[:off+10] }, journal.ProblemTorn, false},
	}
	for _, tc := range tests {
		for _, stripped := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stripped=%v", tc.name, stripped), func(t *testing.T) {
				corruptMiddle(t, tc.segment, tc.record, tc.mutate, tc.problem, tc.trusted && !stripped, stripped)
			})
		}
	}
}

// corruptMiddle is one case of TestCorruptMiddle: damage the record-th
// frame (-1: the header) of the segment-th file and check what Open,
// a replay and Verify say.
func corruptMiddle(t *testing.T, segment, record int, damage func(b []byte, off int) []byte, problem journal.Problem, trusted, stripped bool) {
	dir := t.TempDir()
	j, _ := open(t, journal.Options{Dir: dir, SegmentBytes: 800})
	appendN(t, j, 0, 20)
	require.NoError(t, j.Close())
	if stripped {
		stripTrailers(t, dir)
	}
	segs := segments(t, dir)
	require.GreaterOrEqual(t, len(segs), 3)
	path := segs[segment]
	off := 0
	if record >= 0 {
		fr := frames(t, path)
		require.Greater(t, len(fr), record+1, "a record must follow the damaged one")
		off = int(fr[record].off)
	}
	mutate(t, path, func(b []byte) []byte { return damage(b, off) })
	orig := copyDir(t, dir)

	j, _, err := journal.Open(journal.Options{Dir: dir, ReadOnly: trusted}, testLog(t))
	if trusted {
		require.NoError(t, err, "Open does not read a sealed segment's records")
		err = j.Replay(0, func(journal.Record) error { return nil })
		require.NoError(t, j.Close())
	}
	require.ErrorIs(t, err, journal.ErrCorrupt)
	var ce *journal.CorruptError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, problem, ce.Problem)
	assert.Equal(t, filepath.Base(path), ce.Segment)
	assert.Equal(t, int64(off), ce.Offset)
	assert.False(t, ce.Tail)
	sameFiles(t, orig, dir)

	vr, err := journal.Verify(dir)
	require.ErrorIs(t, err, journal.ErrCorrupt)
	require.NotNil(t, vr.Bad)
	assert.Equal(t, problem, vr.Bad.Problem)
	assert.Equal(t, ce.Seq, vr.Bad.Seq)
	assert.Equal(t, ce.Seq-1, vr.LastSeq, "the report stops before the bad record")
}

// TestTamper changes records the way someone hiding a change would, fixing
// the CRC (and sometimes the hash): Verify and Open find the broken chain.
func TestTamper(t *testing.T) {
	const n = 10
	tests := []struct {
		name    string
		mutate  func(t *testing.T, b []byte, fr []frame) []byte
		problem journal.Problem
		badSeq  uint64
	}{
		{
			name: "data changed, CRC fixed",
			mutate: func(t *testing.T, b []byte, fr []frame) []byte {
				off := int(fr[4].off)
				b[dataOffset(t, b, off)+2] ^= 1
				fixCRC(b, off)
				return b
			},
			problem: journal.ProblemChain, badSeq: 5,
		},
		{
			name: "time changed, hash and CRC fixed",
			mutate: func(t *testing.T, b []byte, fr []frame) []byte {
				off := int(fr[4].off)
				b[off+frameHeader+8]++
				rehash(b, fr, 4)
				return b
			},
			problem: journal.ProblemChain, badSeq: 6,
		},
		{
			name: "last record changed, CRC fixed",
			mutate: func(t *testing.T, b []byte, fr []frame) []byte {
				off := int(fr[n-1].off)
				b[dataOffset(t, b, off)] ^= 0x20
				fixCRC(b, off)
				return b
			},
			problem: journal.ProblemChain, badSeq: n,
		},
		{
			name: "record removed",
			mutate: func(t *testing.T, b []byte, fr []frame) []byte {
				return append(b[:fr[3].off:fr[3].off], b[fr[4].off:]...)
			},
			problem: journal.ProblemSequence, badSeq: 4,
		},
		{
			name: "records swapped, seqs and CRCs fixed",
			mutate: func(t *testing.T, b []byte, fr []frame) []byte {
				out := append([]byte(nil), b[:fr[2].off]...)
				out = append(out, b[fr[3].off:fr[3].off+int64(fr[3].n)]...)
				out = append(out, b[fr[2].off:fr[2].off+int64(fr[2].n)]...)
				out = append(out, b[fr[4].off:]...)
				binary.LittleEndian.PutUint64(out[fr[2].off+frameHeader:], 3)
				fixCRC(out, int(fr[2].off))
				second := int(fr[2].off) + fr[3].n
				binary.LittleEndian.PutUint64(out[second+frameHeader:], 4)
				fixCRC(out, second)
				return out
			},
			problem: journal.ProblemChain, badSeq: 3,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			j, _ := open(t, journal.Options{Dir: dir})
			appendN(t, j, 0, n)
			require.NoError(t, j.Close())
			path := segments(t, dir)[0]
			fr := frames(t, path)
			mutate(t, path, func(b []byte) []byte { return tc.mutate(t, b, fr) })

			vr, err := journal.Verify(dir)
			require.ErrorIs(t, err, journal.ErrCorrupt)
			require.NotNil(t, vr.Bad)
			assert.Equal(t, tc.problem, vr.Bad.Problem)
			assert.Equal(t, tc.badSeq, vr.Bad.Seq)
			assert.False(t, vr.Bad.Tail)

			_, _, err = journal.Open(journal.Options{Dir: dir}, testLog(t))
			require.ErrorIs(t, err, journal.ErrCorrupt, "Open never cuts a tampered record")
		})
	}
}

// TestTamperRewritingTheChain shows the limit of a chain kept beside the
// data: rewriting every hash after a change verifies, but the last hash
// differs from one written down before, which is what an external anchor
// (the backend, a printed report) is for.
func TestTamperRewritingTheChain(t *testing.T) {
	dir := t.TempDir()
	j, _ := open(t, journal.Options{Dir: dir})
	appendN(t, j, 0, 6)
	require.NoError(t, j.Close())
	before, err := journal.Verify(dir)
	require.NoError(t, err)

	path := segments(t, dir)[0]
	fr := frames(t, path)
	mutate(t, path, func(b []byte) []byte {
		b[dataOffset(t, b, int(fr[1].off))] ^= 1
		for i := 1; i < len(fr); i++ {
			rehash(b, fr, i)
		}
		return b
	})
	after, err := journal.Verify(dir)
	require.NoError(t, err)
	assert.NotEqual(t, before.LastHash, after.LastHash)
}

// rehash recomputes record i's hash from record i-1's stored hash (the
// segment header's for i = 0) and fixes its CRC.
func rehash(b []byte, fr []frame, i int) {
	var prev []byte
	if i == 0 {
		prev = b[24:56]
	} else {
		_, ho := hashAt(b, int(fr[i-1].off))
		prev = b[ho : ho+hashSize]
	}
	content, ho := hashAt(b, int(fr[i].off))
	h := sha256.New()
	h.Write(prev)
	h.Write(content)
	copy(b[ho:], h.Sum(nil))
	fixCRC(b, int(fr[i].off))
}

func TestTornSegmentHeader(t *testing.T) {
	// A power cut while rotation created the next segment leaves a short
	// header: the file is removed and appends continue in the previous
	// segment with the next seq.
	for _, size := range []int64{0, 1, 30, headerSize - 1} {
		dir := t.TempDir()
		j, _ := open(t, journal.Options{Dir: dir})
		appendN(t, j, 0, 7)
		require.NoError(t, j.Close())
		next := filepath.Join(dir, "00000000000000000008.ltj")
		require.NoError(t, os.WriteFile(next, make([]byte, size), 0o644))

		j, rep := open(t, journal.Options{Dir: dir})
		require.NotNil(t, rep.Tail, "size %d", size)
		assert.Equal(t, []string{"00000000000000000008.ltj"}, rep.RemovedSegments)
		assert.Equal(t, uint64(7), rep.LastSeq)
		_, err := os.Stat(next)
		require.True(t, errors.Is(err, os.ErrNotExist))
		appendN(t, j, 7, 9)
		require.NoError(t, j.Close())
		_, err = journal.Verify(dir)
		require.NoError(t, err)
	}
}

// TestBrokenLinks damages what ties segments together rather than records.
func TestBrokenLinks(t *testing.T) {
	tests := []struct {
		name    string
		damage  func(t *testing.T, segs []string)
		problem journal.Problem
		segment int // index of the segment reported, in the damaged list
	}{
		{
			name:    "middle segment deleted",
			damage:  func(t *testing.T, segs []string) { require.NoError(t, os.Remove(segs[1])) },
			problem: journal.ProblemSequence,
			segment: 1,
		},
		{
			name: "previous hash in a header changed, header CRC fixed",
			damage: func(t *testing.T, segs []string) {
				mutate(t, segs[2], func(b []byte) []byte {
					b[30] ^= 1
					binary.LittleEndian.PutUint32(b[56:], crc32.Checksum(b[:56], castagnoli))
					return b
				})
			},
			problem: journal.ProblemChain,
			segment: 2,
		},
		{
			name: "last segment renamed",
			damage: func(t *testing.T, segs []string) {
				last := segs[len(segs)-1]
				require.NoError(t, os.Rename(last, last+".x"))
				require.NoError(t, os.Rename(last+".x", filepath.Join(filepath.Dir(last), "00000000000000000099.ltj")))
			},
			problem: journal.ProblemSequence,
			segment: -1,
		},
		{
			name: "segment renamed",
			damage: func(t *testing.T, segs []string) {
				require.NoError(t, os.Rename(segs[1], filepath.Join(filepath.Dir(segs[1]), "00000000000000000002.ltj")))
			},
			problem: journal.ProblemSequence,
			segment: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			j, _ := open(t, journal.Options{Dir: dir, SegmentBytes: 700})
			appendN(t, j, 0, 30)
			require.NoError(t, j.Close())
			tc.damage(t, segments(t, dir))
			segs := segments(t, dir)
			if tc.segment < 0 {
				tc.segment += len(segs)
			}

			vr, err := journal.Verify(dir)
			require.ErrorIs(t, err, journal.ErrCorrupt)
			assert.Equal(t, tc.problem, vr.Bad.Problem)
			assert.Equal(t, filepath.Base(segs[tc.segment]), vr.Bad.Segment)
			assert.Zero(t, vr.Bad.Offset)

			_, _, err = journal.Open(journal.Options{Dir: dir}, testLog(t))
			require.ErrorIs(t, err, journal.ErrCorrupt)
		})
	}
}

// TestTornBatch covers a power cut that persisted a later part of an
// unfinished write batch but not an earlier one (pages reach the disk in
// any order before fsync). Records of the same batch after the hole were
// never acknowledged, so the hole is a torn tail; a record of a later batch
// proves the hole's batch was fsync'd, so the hole is corruption.
func TestTornBatch(t *testing.T) {
	tests := []struct {
		name     string
		hole     int  // seq of the record whose bytes never reached the disk
		laterRec bool // one more record, in its own batch, after the batch
		wantLast uint64
		corrupt  bool
	}{
		{name: "first record of the last batch", hole: 5, wantLast: 4},
		{name: "middle of the last batch", hole: 7, wantLast: 6},
		{name: "last record of the last batch", hole: 9, wantLast: 8},
		{name: "middle of a batch followed by another", hole: 7, laterRec: true, corrupt: true},
		{name: "a batch of one, followed by another", hole: 2, corrupt: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fs := journaltest.NewFS()
			j, _ := open(t, journal.Options{Dir: dir, FS: fs})
			appendN(t, j, 0, 3) // seqs 1-3, one batch each
			release := fs.HoldSync()
			first := j.AppendAsync(rec(3)) // seq 4, alone
			waitFor(t, "the writer to enter fsync", func() bool { return fs.Waiting() == 1 })
			var pend []*journal.Pending
			for i := 4; i < 9; i++ { // seqs 5-9 queue up: one batch
				pend = append(pend, j.AppendAsync(rec(i)))
			}
			release()
			for _, p := range append(pend, first) {
				_, err := p.Wait()
				require.NoError(t, err)
			}
			if tc.laterRec {
				appendN(t, j, 9, 10)
			}
			require.NoError(t, j.Close())

			path := segments(t, dir)[0]
			fr := frames(t, path)
			hole := fr[tc.hole-1]
			mutate(t, path, func(b []byte) []byte {
				clear(b[hole.off : hole.off+int64(hole.n)])
				return b
			})

			j2, rep, err := journal.Open(journal.Options{Dir: dir}, testLog(t))
			if tc.corrupt {
				require.ErrorIs(t, err, journal.ErrCorrupt)
				return
			}
			require.NoError(t, err)
			defer j2.Close()
			require.NotNil(t, rep.Tail)
			assert.Equal(t, hole.off, rep.Tail.Offset)
			assert.Equal(t, tc.wantLast, rep.LastSeq)
			// The hole and the whole records of its batch after it are lost:
			// seqs wantLast+1 to 9, all counted.
			assert.Equal(t, 9-int(tc.wantLast), rep.Tail.Records)
			assert.Equal(t, tc.wantLast, rep.Tail.LastKept())
			assert.Equal(t, wantRange(0, int(tc.wantLast)), replayAll(t, j2, 0))
		})
	}
}

func TestVerifyDirectories(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string) string
		records uint64
		wantErr error
	}{
		{"empty", func(t *testing.T, dir string) string { return dir }, 0, nil},
		{"missing", func(t *testing.T, dir string) string { return filepath.Join(dir, "nope") }, 0, os.ErrNotExist},
		{"stray files are ignored", func(t *testing.T, dir string) string {
			j, _ := open(t, journal.Options{Dir: dir})
			appendN(t, j, 0, 3)
			require.NoError(t, j.Close())
			for _, name := range []string{"notes.txt", "1.ltj", "x0000000000000000001.ltj", "00000000000000000000.ltj"} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("junk"), 0o644))
			}
			return dir
		}, 3, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.setup(t, t.TempDir())
			vr, err := journal.Verify(dir)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.records, vr.Records)
			assert.Nil(t, vr.Bad)
			j, rep := open(t, journal.Options{Dir: dir})
			assert.Equal(t, tc.records, rep.Records)
			require.NoError(t, j.Close())
		})
	}
}
