package journal

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/livetable/livetable/table/vfs"
)

// segmentExt ends every segment file name; the name before it is the
// segment's first seq, zero-padded so names sort in seq order.
const segmentExt = ".ltj"

// markEvery is the spacing of the sparse seq→offset index kept per segment,
// so Replay(from) and Round seek to within markEvery records of a seq.
const markEvery = 256

func segmentName(firstSeq uint64) string {
	return fmt.Sprintf("%020d%s", firstSeq, segmentExt)
}

// mark is one entry of a segment's sparse index.
type mark struct {
	seq uint64
	off int64
}

// segment is what the journal knows about one segment file.
type segment struct {
	name     string
	firstSeq uint64
	prevHash [hashSize]byte
	lastSeq  uint64 // firstSeq-1 while empty
	lastHash [hashSize]byte
	// lastBatch is the seq that began the write batch of the last record.
	lastBatch uint64
	size      int64 // bytes up to the end of the last whole record
	newest    int64 // newest record time in Unix ns, 0 when none
	marks     []mark
	// kinds is the last seq of each kind in this segment, for its trailer.
	kinds kindIndex
	// runs are the segment's rounds, in order: kept for the active
	// segment (its trailer needs them) and for a segment checked record
	// by record until the round index is built; a sealed segment's come
	// from its trailer when the index is built (segmentRuns).
	runs []roundRun
	// sealed is set once the segment ends with a whole trailer (written
	// by this journal, or read and trusted by Open); trailer locates its
	// rounds.
	sealed  bool
	trailer *trailer
	// trailerAt is where a scan found a trailer's start mark after the
	// records (0 when none): a trailer that was not trusted.
	trailerAt int64
	// damaged is set when what follows the records is no trailer at all
	// (checkSegments lists it).
	damaged bool
}

func (s *segment) empty() bool { return s.lastSeq < s.firstSeq }

// addMark records off as the position of seq when seq falls on the sparse
// index's spacing.
func (s *segment) addMark(seq uint64, off int64) {
	if (seq-s.firstSeq)%markEvery == 0 {
		s.marks = append(s.marks, mark{seq: seq, off: off})
	}
}

// seek returns the last mark at or before seq (the first record when none).
func (s *segment) seek(seq uint64) mark {
	i, found := slices.BinarySearchFunc(s.marks, seq, func(m mark, seq uint64) int {
		switch {
		case m.seq < seq:
			return -1
		case m.seq > seq:
			return 1
		}
		return 0
	})
	if !found {
		i--
	}
	if i < 0 {
		return mark{seq: s.firstSeq, off: headerSize}
	}
	return s.marks[i]
}

// listSegments returns the segment files in dir in seq order, with firstSeq
// taken from their names. Other files are ignored.
func listSegments(fsys vfs.FS, dir string) ([]*segment, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("journal: list %s: %w", dir, err)
	}
	var segs []*segment
	for _, e := range entries {
		name := e.Name()
		base, ok := strings.CutSuffix(name, segmentExt)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		first, err := strconv.ParseUint(base, 10, 64)
		if err != nil || first == 0 || segmentName(first) != name {
			continue
		}
		segs = append(segs, &segment{name: name, firstSeq: first, lastSeq: first - 1})
	}
	slices.SortFunc(segs, func(a, b *segment) int {
		switch {
		case a.firstSeq < b.firstSeq:
			return -1
		case a.firstSeq > b.firstSeq:
			return 1
		}
		return 0
	})
	return segs, nil
}

// scanResult is what scanning one segment on its own found.
type scanResult struct {
	// bad is the segment's first problem; nil when every record is whole.
	bad *CorruptError
	// runs are the segment's records grouped by round, in order.
	runs []roundRun
	// kinds holds the last seq of each input kind in the segment.
	kinds kindIndex
	err   error
}

// addRun adds one record of round to the segment's runs, extending the
// last run when it is the same round.
func (s *segment) addRun(round string, seq uint64, ns int64) {
	if round == "" {
		return
	}
	if n := len(s.runs); n > 0 && s.runs[n-1].code == round {
		s.runs[n-1].add(seq, ns)
		return
	}
	s.runs = append(s.runs, roundRun{code: round, first: seq, last: seq, start: ns, end: ns, records: 1})
}

// scanSegment reads and checks one segment on its own: header, lengths,
// CRCs, the sequence from the header's first seq, and each record's hash
// against its predecessor's stored hash (the header's for the first). It
// fills seg's size, prevHash, lastSeq, lastHash, newest and marks from the
// whole records before the first problem. Checking each record against the
// stored hash before it is the same chain check as a sequential one, and it
// lets segments be checked in parallel; checkSegments links them.
func scanSegment(fsys vfs.FS, dir string, seg *segment, buf []byte, ch *chainer, runs bool) (scanResult, []byte) {
	var res scanResult
	path := filepath.Join(dir, seg.name)
	f, err := vfs.Open(fsys, path)
	if err != nil {
		res.err = fmt.Errorf("journal: open %s: %w", path, err)
		return res, buf
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		res.err = fmt.Errorf("journal: stat %s: %w", path, err)
		return res, buf
	}
	seg.size, seg.lastSeq, seg.marks, seg.newest, seg.trailerAt, seg.damaged = 0, seg.firstSeq-1, nil, 0, 0, false
	seg.sealed, seg.trailer, seg.kinds, seg.runs = false, nil, nil, nil
	bad := func(off int64, p Problem, detail string) (scanResult, []byte) {
		res.bad = &CorruptError{Segment: seg.name, Offset: off, Seq: seg.lastSeq + 1, Problem: p, Detail: detail}
		return res, buf
	}

	var hb [headerSize]byte
	if n, err := f.ReadAt(hb[:], 0); n < headerSize {
		if err != nil && !errors.Is(err, io.EOF) {
			res.err = fmt.Errorf("journal: read %s: %w", path, err)
			return res, buf
		}
		return bad(0, ProblemTorn, fmt.Sprintf("header is %d of %d bytes", n, headerSize))
	}
	h, ok := parseHeader(hb[:])
	if !ok {
		return bad(0, ProblemHeader, "bad magic, version or CRC")
	}
	if h.firstSeq != seg.firstSeq {
		// A whole header under the wrong name: renamed, not torn.
		return bad(0, ProblemSequence, fmt.Sprintf("header says first seq %d, name says %d", h.firstSeq, seg.firstSeq))
	}
	seg.prevHash, seg.lastHash, seg.size = h.prevHash, h.prevHash, headerSize

	rd := newReader(f, headerSize, fi.Size(), buf)
	defer func() { buf = rd.buf }()
	var run *roundRun
	for {
		body, off, p, err := rd.next()
		if errors.Is(err, io.EOF) {
			return res, rd.buf
		}
		if err != nil {
			res.err = err
			return res, rd.buf
		}
		if (p == ProblemLength || p == ProblemTorn) && atTrailer(rd.peek()) {
			// The records end here; what follows is the trailer.
			seg.trailerAt = off
			return res, rd.buf
		}
		if p != ProblemNone {
			return bad(off, p, "")
		}
		v, ok := parseBody(body)
		if !ok {
			return bad(off, ProblemFormat, "fields do not fit the body")
		}
		if v.seq != seg.lastSeq+1 {
			return bad(off, ProblemSequence, fmt.Sprintf("found seq %d", v.seq))
		}
		if want := ch.next(&seg.lastHash, v.content); [hashSize]byte(v.hash) != want {
			return bad(off, ProblemChain, fmt.Sprintf("stored %s, computed %s",
				hex.EncodeToString(v.hash), hex.EncodeToString(want[:])))
		}
		if v.seq-v.batchPos < seg.firstSeq {
			return bad(off, ProblemFormat, fmt.Sprintf("batch began at seq %d, before the segment", v.seq-v.batchPos))
		}
		seg.lastSeq, seg.lastHash, seg.lastBatch = v.seq, [hashSize]byte(v.hash), v.seq-v.batchPos
		seg.size = off + frameHeader + int64(len(body))
		seg.newest = max(seg.newest, v.timeNS)
		seg.addMark(v.seq, off)
		if !runs {
			continue
		}
		res.kinds.setBytes(v.kind, v.seq)
		if len(v.round) == 0 {
			continue
		}
		if run == nil || run.code != string(v.round) {
			res.runs = append(res.runs, roundRun{code: string(v.round), first: v.seq})
			run = &res.runs[len(res.runs)-1]
		}
		run.add(v.seq, v.timeNS)
	}
}

// chainCheck is the outcome of checkSegments.
type chainCheck struct {
	// bad is the first problem in seq order and badIndex its segment;
	// bad is nil (badIndex -1) when the journal is whole.
	bad      *CorruptError
	badIndex int
	// lastSeq and lastHash are those of the last whole record before the
	// first problem (the anchor's when there is none).
	lastSeq  uint64
	lastHash [hashSize]byte
	// trailers lists the sealed segments whose trailer was missing, torn,
	// damaged or contradicted by the next segment, and why: they were
	// checked record by record.
	trailers []string
}

// maxScanWorkers bounds the goroutines that check segments at once.
const maxScanWorkers = 4

// checkSegments checks segs, then links them in order: each segment must
// start at the seq after the previous one's last and name its last hash.
// With useTrailers, a segment whose trailer is whole is taken from its
// trailer (sealedFromTrailer) rather than read record by record; one that
// the next segment then does not link to is checked record by record
// after all, so a wrong trailer costs time, never records. Without it
// (Verify), every record is read and checked. The others are scanned in
// parallel, each record against the hash stored before it.
//
// Damage after the last whole record of a segment that is not the last
// one, when the next segment links to that record, is a damaged trailer,
// not lost records: the link proves that nothing was between them.
func checkSegments(fsys vfs.FS, dir string, segs []*segment, useTrailers bool) (chainCheck, error) {
	results := make([]scanResult, len(segs))
	why := make([]error, len(segs)) // why a segment was scanned, nil for trusted ones
	trusted := make([]bool, len(segs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), maxScanWorkers, len(segs)) {
		wg.Go(func() {
			bp := getReadBuf()
			ch, buf := newChainer(), *bp
			defer func() { putReadBuf(bp, buf) }()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(segs) {
					return
				}
				if useTrailers {
					err := sealedFromTrailer(fsys, dir, segs[i])
					if err == nil {
						trusted[i] = true
						continue
					}
					if !errors.Is(err, errNoTrailer) {
						results[i].err = err
						continue
					}
					why[i] = err
				}
				results[i], buf = scanSegment(fsys, dir, segs[i], buf, ch, true)
			}
		})
	}
	wg.Wait()
	for i, res := range results {
		if res.err != nil {
			return chainCheck{badIndex: -1}, res.err
		}
		if !trusted[i] {
			segs[i].kinds, segs[i].runs = res.kinds, res.runs
		}
	}
	for {
		out, retry := linkSegments(segs, results, trusted)
		if retry < 0 {
			for i := range segs[:max(len(segs)-1, 0)] {
				if !trusted[i] && why[i] != nil && out.badIndex != i && (out.bad == nil || i < out.badIndex) {
					out.trailers = append(out.trailers, fmt.Sprintf("%s: %v", segs[i].name, why[i]))
				}
			}
			return out, nil
		}
		// A trusted trailer the next segment contradicts: check the
		// segment record by record, then link again.
		trusted[retry] = false
		why[retry] = fmt.Errorf("%w: the next segment does not follow its last record", errNoTrailer)
		results[retry], _ = scanSegment(fsys, dir, segs[retry], nil, newChainer(), true)
		if err := results[retry].err; err != nil {
			return chainCheck{badIndex: -1}, err
		}
		segs[retry].kinds, segs[retry].runs = results[retry].kinds, results[retry].runs
	}
}

// linkSegments links checked segments in order. retry is the index of a
// segment taken from its trailer that the next one does not link to (-1
// when none): the caller checks it record by record and links again.
func linkSegments(segs []*segment, results []scanResult, trusted []bool) (out chainCheck, retry int) {
	out = chainCheck{badIndex: -1}
	if len(segs) > 0 {
		out.lastSeq = segs[0].firstSeq - 1
	}
	for i, seg := range segs {
		res := results[i]
		if trusted[i] {
			res = scanResult{}
		}
		linkBad := func(p Problem, detail string) *CorruptError {
			return &CorruptError{Segment: seg.name, Offset: 0, Seq: out.lastSeq + 1, Problem: p, Detail: detail}
		}
		headerOK := res.bad == nil || res.bad.Offset > 0
		switch {
		case !headerOK:
			res.bad.Seq = out.lastSeq + 1
			out.bad, out.badIndex = res.bad, i
			return out, -1
		case i > 0 && (seg.firstSeq != out.lastSeq+1 || seg.prevHash != out.lastHash) && trusted[i-1]:
			return out, i - 1
		case i > 0 && seg.firstSeq != out.lastSeq+1:
			out.bad, out.badIndex = linkBad(ProblemSequence,
				fmt.Sprintf("segment starts at seq %d, previous ended at %d", seg.firstSeq, out.lastSeq)), i
			return out, -1
		case i > 0 && seg.prevHash != out.lastHash:
			out.bad, out.badIndex = linkBad(ProblemChain, "segment's previous hash is not the previous record's hash"), i
			return out, -1
		}
		out.lastSeq, out.lastHash = seg.lastSeq, seg.lastHash
		if res.bad == nil {
			continue
		}
		if i+1 < len(segs) && frameProblem(res.bad.Problem) && linksTo(segs[i+1], results[i+1], trusted[i+1], seg) {
			// Damage after the last record of a sealed segment that the
			// next one follows on from: its trailer.
			seg.trailerAt, seg.damaged = res.bad.Offset, true
			out.trailers = append(out.trailers, fmt.Sprintf("%s: %s at offset %d, after its last record", seg.name, res.bad.Problem, res.bad.Offset))
			continue
		}
		out.bad, out.badIndex = res.bad, i
		return out, -1
	}
	return out, -1
}

// linksTo reports whether next, with a whole header, starts right after
// prev's last whole record.
func linksTo(next *segment, res scanResult, trusted bool, prev *segment) bool {
	headerOK := trusted || res.bad == nil || res.bad.Offset > 0
	return headerOK && next.firstSeq == prev.lastSeq+1 && next.prevHash == prev.lastHash
}

// isTail reports whether the bad spot at offset off of seg's file is a torn
// write: nothing after it but noise and records of the same write batch as
// the bad record. A power cut can leave any part of an unfinished batch
// unwritten, later records included, but a record of a later batch proves
// that the bad record's batch was fsync'd and acknowledged: then the damage
// is corruption, never cut. seg describes the whole records before off.
//
// For a torn tail, it also returns how many records began in the cut part:
// the one cut short (when any byte of it is there) and the whole ones of
// its batch after it, whose seq is the highest such. They were never
// acknowledged, and the cut loses them.
func isTail(fsys vfs.FS, path string, seg *segment, off int64) (tail bool, records int, err error) {
	f, err := vfs.Open(fsys, path)
	if err != nil {
		return false, 0, fmt.Errorf("journal: open %s: %w", path, err)
	}
	defer f.Close()
	rest, err := io.ReadAll(io.NewSectionReader(f, off, 1<<62))
	if err != nil {
		return false, 0, fmt.Errorf("journal: read %s: %w", path, err)
	}
	// The bad record has seq next; it either continues the batch of the
	// last whole record or begins a batch at next.
	next := seg.lastSeq + 1
	last := next - 1
	if off > 0 && len(rest) > 0 {
		last = next // the record cut short
	}
	for at := 1; at+frameHeader+minBody <= len(rest); at++ {
		if !validFrameAt(rest, at) {
			continue
		}
		n := int(binary.LittleEndian.Uint32(rest[at:]))
		v, ok := parseBody(rest[at+frameHeader : at+frameHeader+n])
		if !ok {
			return false, 0, nil
		}
		start := v.seq - v.batchPos
		sameBatch := v.seq > next && (start == next || (!seg.empty() && start == seg.lastBatch))
		if !sameBatch {
			return false, 0, nil
		}
		last = max(last, v.seq)
		at += frameHeader + n - 1
	}
	return true, int(last + 1 - next), nil
}

// syncDir makes a created, renamed or removed directory entry durable.
func syncDir(fsys vfs.FS, dir string) error {
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}
