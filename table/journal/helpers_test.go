package journal_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/journal"
)

// base is the host time of record 0 in every test.
var base = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// recordsPerRound is how many records the generated rounds have.
const recordsPerRound = 5

// rec is the i-th record of a deterministic stream: rounds of five records,
// one second apart, two kinds, data that differs per record.
func rec(i int) journal.Record {
	kind := "card"
	if i%recordsPerRound == 3 {
		kind = "decision"
	}
	round := i / recordsPerRound
	return journal.Record{
		Time:     base.Add(time.Duration(i) * time.Second),
		DeviceMS: int64(1000 + i),
		Round:    fmt.Sprintf("#12:%02d:%02d", round/60%60, round%60),
		Shoe:     fmt.Sprintf("shoe-%d", i/100),
		Kind:     kind,
		Data:     []byte(fmt.Sprintf(`{"kind":%q,"data":{"n":%d}}`, kind, i)),
	}
}

// want is rec(i) as replay returns it: with its seq (records start at seq 1
// for i = 0).
func want(i int) journal.Record {
	r := rec(i)
	r.Seq = uint64(i + 1)
	return r
}

func testLog(t testing.TB) zerolog.Logger {
	return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
}

func open(t testing.TB, opts journal.Options) (*journal.Journal, journal.RecoveryReport) {
	t.Helper()
	j, rep, err := journal.Open(opts, testLog(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	return j, rep
}

// appendN appends rec(from) .. rec(to-1) and checks their seqs.
func appendN(t testing.TB, j *journal.Journal, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		seq, err := j.Append(rec(i))
		require.NoError(t, err)
		require.Equal(t, uint64(i+1), seq)
	}
}

func replayAll(t testing.TB, j *journal.Journal, from uint64) []journal.Record {
	t.Helper()
	var out []journal.Record
	require.NoError(t, j.Replay(from, func(r journal.Record) error {
		out = append(out, r)
		return nil
	}))
	return out
}

func wantRange(from, to int) []journal.Record {
	var out []journal.Record
	for i := from; i < to; i++ {
		out = append(out, want(i))
	}
	return out
}

// segments lists the segment files of dir in seq order.
func segments(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.ltj"))
	require.NoError(t, err)
	slices.Sort(m)
	return m
}

// recordsEnd is the offset where a segment's records end: its size
// without its trailer.
func recordsEnd(t testing.TB, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return int64(endOf(t, b))
}

// stripTrailers cuts the trailers off every segment in dir: the journal as
// a build before trailers wrote it.
func stripTrailers(t testing.TB, dir string) {
	t.Helper()
	for _, p := range segments(t, dir) {
		require.NoError(t, os.Truncate(p, recordsEnd(t, p)))
	}
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}

// copyDir copies the segment files of src into a new temporary directory.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	for _, p := range segments(t, src) {
		in, err := os.Open(p)
		require.NoError(t, err)
		out, err := os.Create(filepath.Join(dst, filepath.Base(p)))
		require.NoError(t, err)
		_, err = io.Copy(out, in)
		require.NoError(t, err)
		require.NoError(t, in.Close())
		require.NoError(t, out.Close())
	}
	return dst
}

// frame is the location of one record in a segment file.
type frame struct {
	off int64
	n   int // whole frame length
}

// headerSize and frameHeader restate the on-disk layout (doc.go) so the
// tests can damage files precisely.
const (
	headerSize  = 60
	frameHeader = 8
	hashSize    = 32
	fixedBody   = 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// trailerMagic starts a sealed segment's trailer, after its records.
var trailerMagic = []byte("LTJSEAL\n")

// frames locates the records of a segment file, up to its trailer.
func frames(t testing.TB, path string) []frame {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return framesOf(t, b)
}

// framesOf locates the records in a segment file's bytes.
func framesOf(t testing.TB, b []byte) []frame {
	t.Helper()
	var out []frame
	for off := headerSize; off+frameHeader <= len(b) && !bytes.HasPrefix(b[off:], trailerMagic); {
		n := int(binary.LittleEndian.Uint32(b[off:]))
		require.LessOrEqual(t, off+frameHeader+n, len(b), "frame at %d runs past the end", off)
		out = append(out, frame{off: int64(off), n: frameHeader + n})
		off += frameHeader + n
	}
	return out
}

// endOf is the offset where the records in a segment file's bytes end.
func endOf(t testing.TB, b []byte) int {
	t.Helper()
	fr := framesOf(t, b)
	if len(fr) == 0 {
		return headerSize
	}
	return int(fr[len(fr)-1].off) + fr[len(fr)-1].n
}

// fixCRC recomputes the CRC of the frame at off in b.
func fixCRC(b []byte, off int) {
	n := int(binary.LittleEndian.Uint32(b[off:]))
	c := crc32.Update(crc32.Checksum(b[off:off+4], castagnoli), castagnoli, b[off+frameHeader:off+frameHeader+n])
	binary.LittleEndian.PutUint32(b[off+4:], c)
}

// hashOf returns the stored hash of the frame at off and the offset of its
// content (the body without the hash).
func hashAt(b []byte, off int) (content []byte, hashOff int) {
	n := int(binary.LittleEndian.Uint32(b[off:]))
	body := b[off+frameHeader : off+frameHeader+n]
	return body[:n-hashSize], off + frameHeader + n - hashSize
}

func dataOffset(t testing.TB, b []byte, off int) int {
	t.Helper()
	p := off + frameHeader + fixedBody
	for range 4 { // batch position, kind, round, shoe
		n, w := binary.Uvarint(b[p:])
		require.Positive(t, w)
		p += w + int(n)
	}
	return p
}

func mutate(t testing.TB, path string, fn func(b []byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, fn(b), 0o644))
}

func sameFiles(t testing.TB, a, b string) {
	t.Helper()
	pa, pb := segments(t, a), segments(t, b)
	require.Equal(t, len(pa), len(pb))
	for i := range pa {
		x, err := os.ReadFile(pa[i])
		require.NoError(t, err)
		y, err := os.ReadFile(pb[i])
		require.NoError(t, err)
		require.True(t, slices.Equal(x, y), "%s changed", filepath.Base(pa[i]))
	}
}

// checkWriterSeqs checks the seqs concurrent writers got: each writer has
// each of them, no seq was given twice, and every writer's records are in
// the order it appended them.
func checkWriterSeqs(t *testing.T, seqs [][]uint64, each int) {
	t.Helper()
	seen := make(map[uint64]bool)
	for w := range seqs {
		require.Len(t, seqs[w], each)
		for i, s := range seqs[w] {
			require.False(t, seen[s], "seq %d given twice", s)
			seen[s] = true
			if i > 0 {
				require.Greater(t, s, seqs[w][i-1], "writer %d's records keep their order", w)
			}
		}
	}
}
