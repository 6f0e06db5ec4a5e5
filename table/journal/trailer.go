package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"

	"github.com/livetable/livetable/table/vfs"
)

// A sealed segment ends with a trailer, written and fsync'd when the
// segment is sealed and before the next segment is created. It holds what
// Open would otherwise learn by reading and checking every record: where
// the records end, the last seq and hash (which the next segment's header
// must name), the newest record time, the last seq of each kind, the
// sparse seq→offset index and the segment's rounds. Open trusts a trailer
// only when its CRC matches, it agrees with the segment's header, and the
// next segment links to it; otherwise it checks the segment record by
// record as it did before trailers (segments written before them have
// none). Verify always checks every record, and checks each trailer
// against them.
//
// Layout, after the last record (all integers little endian):
//
//	magic   [8]byte  "LTJSEAL\n"
//	runs    the segment's rounds (only Rounds and Round read them)
//	meta    version uint32, recordsEnd, firstSeq, lastSeq, lastBatch uint64,
//	        prevHash, lastHash [32]byte, newest int64,
//	        kinds (uvarint count; each uvarint length, kind, seq uint64),
//	        marks (uvarint count; each seq, offset uint64)
//	footer  runsLen, metaLen, runsCRC uint32, metaCRC uint32 (CRC-32C of
//	        meta and the three fields before it), end magic [8]byte
//	        "LTJEND\r\n"
//
// runs: uvarint count; each uvarint length, code, first, last uint64,
// start, end int64, records uvarint.
//
// The start magic cannot begin a record (its first four bytes, read as a
// record length, exceed the largest body), so a scan of a segment finds
// where its records end and its trailer begins.
const (
	trailerVersion = 1
	footerSize     = 24
	// trailerReadAhead is what Open reads from a segment's end at first:
	// the footer and, for segments up to several hundred megabytes, the
	// whole meta part with it.
	trailerReadAhead = 64 << 10
)

var (
	trailerMagic = [8]byte{'L', 'T', 'J', 'S', 'E', 'A', 'L', '\n'}
	trailerEnd   = [8]byte{'L', 'T', 'J', 'E', 'N', 'D', '\r', '\n'}
)

// trailer is a decoded trailer.
type trailer struct {
	recordsEnd int64
	firstSeq   uint64
	prevHash   [hashSize]byte
	lastSeq    uint64
	lastBatch  uint64
	lastHash   [hashSize]byte
	newest     int64
	kinds      kindIndex
	marks      []mark
	// runsAt and runsLen locate the runs part in the file; runsCRC checks it.
	runsAt  int64
	runsLen uint32
	runsCRC uint32
}

// appendTrailer encodes seg's trailer; seg describes every record of the
// segment, its kinds and its rounds.
func appendTrailer(dst []byte, seg *segment) (out []byte, runsLen, runsCRC uint32) {
	dst = append(dst, trailerMagic[:]...)
	runsStart := len(dst)
	dst = binary.AppendUvarint(dst, uint64(len(seg.runs)))
	for _, r := range seg.runs {
		dst = binary.AppendUvarint(dst, uint64(len(r.code)))
		dst = append(dst, r.code...)
		dst = binary.LittleEndian.AppendUint64(dst, r.first)
		dst = binary.LittleEndian.AppendUint64(dst, r.last)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(r.start))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(r.end))
		dst = binary.AppendUvarint(dst, uint64(r.records))
	}
	runsLen = uint32(len(dst) - runsStart)
	runsCRC = crc32.Checksum(dst[runsStart:], castagnoli)
	metaStart := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, trailerVersion)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(seg.size))
	dst = binary.LittleEndian.AppendUint64(dst, seg.firstSeq)
	dst = binary.LittleEndian.AppendUint64(dst, seg.lastSeq)
	dst = binary.LittleEndian.AppendUint64(dst, seg.lastBatch)
	dst = append(dst, seg.prevHash[:]...)
	dst = append(dst, seg.lastHash[:]...)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(seg.newest))
	dst = binary.AppendUvarint(dst, uint64(len(seg.kinds)))
	for _, k := range seg.kinds {
		dst = binary.AppendUvarint(dst, uint64(len(k.kind)))
		dst = append(dst, k.kind...)
		dst = binary.LittleEndian.AppendUint64(dst, k.seq)
	}
	dst = binary.AppendUvarint(dst, uint64(len(seg.marks)))
	for _, m := range seg.marks {
		dst = binary.LittleEndian.AppendUint64(dst, m.seq)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(m.off))
	}
	metaLen := len(dst) - metaStart
	dst = binary.LittleEndian.AppendUint32(dst, runsLen)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(metaLen))
	dst = binary.LittleEndian.AppendUint32(dst, runsCRC)
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[metaStart:], castagnoli))
	return append(dst, trailerEnd[:]...), runsLen, runsCRC
}

// errNoTrailer is why a segment's trailer is not used: missing (a segment
// from before trailers, or the active one), torn or damaged.
var errNoTrailer = errors.New("no trailer")

// readTrailer reads and checks the trailer at the end of the segment file
// f of size size. Any problem is errNoTrailer wrapped with a reason, and
// the caller checks the segment record by record instead.
func readTrailer(f vfs.File, size int64) (trailer, error) {
	var t trailer
	no := func(format string, a ...any) (trailer, error) {
		return t, fmt.Errorf("%w: %s", errNoTrailer, fmt.Sprintf(format, a...))
	}
	if size < headerSize+int64(len(trailerMagic))+footerSize {
		return no("file too short")
	}
	n := min(size-headerSize, trailerReadAhead)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
		return t, fmt.Errorf("journal: read %s: %w", f.Name(), err)
	}
	foot := buf[len(buf)-footerSize:]
	if [8]byte(foot[16:]) != trailerEnd {
		return no("no end mark")
	}
	runsLen := binary.LittleEndian.Uint32(foot)
	metaLen := binary.LittleEndian.Uint32(foot[4:])
	t.runsCRC = binary.LittleEndian.Uint32(foot[8:])
	total := int64(len(trailerMagic)) + int64(runsLen) + int64(metaLen) + footerSize
	if total > size-headerSize {
		return no("lengths past the header")
	}
	if int64(metaLen)+footerSize > int64(len(buf)) {
		buf = make([]byte, int64(metaLen)+footerSize)
		if _, err := f.ReadAt(buf, size-int64(len(buf))); err != nil && !errors.Is(err, io.EOF) {
			return t, fmt.Errorf("journal: read %s: %w", f.Name(), err)
		}
		foot = buf[len(buf)-footerSize:]
	}
	meta := buf[len(buf)-footerSize-int(metaLen) : len(buf)-8]
	if crc32.Checksum(meta[:len(meta)-4], castagnoli) != binary.LittleEndian.Uint32(foot[12:]) {
		return no("bad checksum")
	}
	var magic [8]byte
	start := size - total
	if _, err := f.ReadAt(magic[:], start); err != nil && !errors.Is(err, io.EOF) {
		return t, fmt.Errorf("journal: read %s: %w", f.Name(), err)
	}
	if magic != trailerMagic {
		return no("no start mark")
	}
	t.runsAt, t.runsLen = start+int64(len(trailerMagic)), runsLen
	d := fieldReader{buf: meta[:metaLen]}
	if d.u32() != trailerVersion {
		return no("unknown version")
	}
	t.recordsEnd = int64(d.u64())
	t.firstSeq, t.lastSeq, t.lastBatch = d.u64(), d.u64(), d.u64()
	d.hash(&t.prevHash)
	d.hash(&t.lastHash)
	t.newest = int64(d.u64())
	for range d.count(9) {
		kind := string(d.bytes())
		t.kinds = append(t.kinds, kindLast{kind: kind, seq: d.u64()})
	}
	nm := d.count(16)
	t.marks = make([]mark, 0, nm)
	for range nm {
		t.marks = append(t.marks, mark{seq: d.u64(), off: int64(d.u64())})
	}
	switch {
	case d.bad || len(d.buf) != 0:
		return no("fields do not fit")
	case t.recordsEnd != start || t.recordsEnd < headerSize:
		return no("records end at %d, trailer starts at %d", t.recordsEnd, start)
	case t.lastSeq+1 < t.firstSeq || t.lastBatch > t.lastSeq:
		return no("impossible seqs")
	}
	return t, nil
}

// readRuns reads and checks the rounds part of a trailer.
func readRuns(f vfs.File, t *trailer) ([]roundRun, error) {
	buf := make([]byte, t.runsLen)
	if _, err := f.ReadAt(buf, t.runsAt); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("journal: read %s: %w", f.Name(), err)
	}
	if crc32.Checksum(buf, castagnoli) != t.runsCRC {
		return nil, fmt.Errorf("%w: rounds: bad checksum", errNoTrailer)
	}
	d := fieldReader{buf: buf}
	n := d.count(34)
	runs := make([]roundRun, 0, n)
	for range n {
		r := roundRun{code: string(d.bytes())}
		r.first, r.last = d.u64(), d.u64()
		r.start, r.end = int64(d.u64()), int64(d.u64())
		r.records = int(d.uvarint())
		runs = append(runs, r)
	}
	if d.bad || len(d.buf) != 0 {
		return nil, fmt.Errorf("%w: rounds: fields do not fit", errNoTrailer)
	}
	return runs, nil
}

// fieldReader reads a trailer's fields; bad is set, and zeros returned, once
// a field runs past the end.
type fieldReader struct {
	buf []byte
	bad bool
}

func (d *fieldReader) take(n int) []byte {
	if d.bad || n < 0 || n > len(d.buf) {
		d.bad = true
		return nil
	}
	b := d.buf[:n]
	d.buf = d.buf[n:]
	return b
}

func (d *fieldReader) u32() uint32 {
	if b := d.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *fieldReader) u64() uint64 {
	if b := d.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *fieldReader) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if d.bad || n <= 0 {
		d.bad = true
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// count reads a count of items of at least minSize bytes each, refusing
// one the rest cannot hold (so damage cannot ask for a huge allocation).
func (d *fieldReader) count(minSize int) int {
	n := d.uvarint()
	if n > uint64(len(d.buf)/minSize) {
		d.bad = true
		return 0
	}
	return int(n)
}

func (d *fieldReader) bytes() []byte { return d.take(int(d.uvarint())) }

func (d *fieldReader) hash(h *[hashSize]byte) { copy(h[:], d.take(hashSize)) }

// atTrailer reports whether b, the bytes where a scan expected a record,
// begin a trailer: its start mark, or at least four bytes of it followed
// by nothing or zeros (a trailer torn by a power cut while the segment was
// being sealed). Four bytes are what tell it from a record: a record's
// length never has its fourth byte set like the mark's.
func atTrailer(b []byte) bool {
	n := min(len(b), len(trailerMagic))
	k := 0
	for k < n && b[k] == trailerMagic[k] {
		k++
	}
	if k < 4 {
		return false
	}
	for _, c := range b[k:n] {
		if c != 0 {
			return false
		}
	}
	return true
}

// sealedFromTrailer fills seg from the trailer of its file, after checking
// the header against it. It returns errNoTrailer (wrapped) when the
// segment must be checked record by record.
func sealedFromTrailer(fsys vfs.FS, dir string, seg *segment) error {
	path := filepath.Join(dir, seg.name)
	f, err := vfs.Open(fsys, path)
	if err != nil {
		return fmt.Errorf("journal: open %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("journal: stat %s: %w", path, err)
	}
	var hb [headerSize]byte
	if n, err := f.ReadAt(hb[:], 0); n < headerSize {
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("journal: read %s: %w", path, err)
		}
		return fmt.Errorf("%w: torn header", errNoTrailer)
	}
	h, ok := parseHeader(hb[:])
	if !ok || h.firstSeq != seg.firstSeq {
		return fmt.Errorf("%w: bad header", errNoTrailer)
	}
	t, err := readTrailer(f, fi.Size())
	if err != nil {
		return err
	}
	if t.firstSeq != h.firstSeq || t.prevHash != h.prevHash {
		return fmt.Errorf("%w: trailer does not match the header", errNoTrailer)
	}
	if t.lastSeq < t.firstSeq && t.lastHash != t.prevHash {
		return fmt.Errorf("%w: empty segment with a last hash", errNoTrailer)
	}
	seg.prevHash, seg.lastSeq, seg.lastHash, seg.lastBatch = h.prevHash, t.lastSeq, t.lastHash, t.lastBatch
	seg.size, seg.newest, seg.marks, seg.kinds = t.recordsEnd, t.newest, t.marks, t.kinds
	seg.sealed, seg.trailer = true, &t
	return nil
}
