package journal

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
	size     int64 // bytes up to the end of the last whole record
	newest   int64 // newest record time in Unix ns, 0 when none
	marks    []mark
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
func listSegments(dir string) ([]*segment, error) {
	entries, err := os.ReadDir(dir)
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

// scanner checks segments in order, carrying the sequence and the hash chain
// from one segment to the next.
type scanner struct {
	dir     string
	ch      *chainer
	buf     []byte
	started bool
	seq     uint64         // last seq seen
	hash    [hashSize]byte // its hash
	// visit, when set, sees every whole record after its checks passed.
	visit func(seg *segment, v *view, off int64)
}

func newScanner(dir string) *scanner {
	return &scanner{dir: dir, ch: newChainer(), buf: make([]byte, readBufSize)}
}

// scan reads and checks one segment, filling seg's size, lastSeq, lastHash,
// newest and marks from its whole records. It returns the first problem as
// a *CorruptError (Tail not yet decided), with seg.size the end of the last
// whole record before it; err is for I/O failures only.
func (sc *scanner) scan(seg *segment) (*CorruptError, error) {
	path := filepath.Join(sc.dir, seg.name)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("journal: open %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("journal: stat %s: %w", path, err)
	}
	bad := func(off int64, p Problem, detail string) *CorruptError {
		return &CorruptError{Segment: seg.name, Offset: off, Seq: sc.seq + 1, Problem: p, Detail: detail}
	}
	seg.size, seg.lastSeq, seg.marks, seg.newest = 0, seg.firstSeq-1, seg.marks[:0], 0

	var hb [headerSize]byte
	if n, err := f.ReadAt(hb[:], 0); n < headerSize {
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("journal: read %s: %w", path, err)
		}
		return bad(0, ProblemTorn, fmt.Sprintf("header is %d of %d bytes", n, headerSize)), nil
	}
	h, ok := parseHeader(hb[:])
	if !ok {
		return bad(0, ProblemHeader, "bad magic, version or CRC"), nil
	}
	if h.firstSeq != seg.firstSeq {
		return bad(0, ProblemHeader, fmt.Sprintf("header says first seq %d, name says %d", h.firstSeq, seg.firstSeq)), nil
	}
	if sc.started {
		if h.firstSeq != sc.seq+1 {
			return bad(0, ProblemSequence, fmt.Sprintf("segment starts at seq %d, previous ended at %d", h.firstSeq, sc.seq)), nil
		}
		if h.prevHash != sc.hash {
			return bad(0, ProblemChain, "segment's previous hash is not the previous record's hash"), nil
		}
	} else {
		// The oldest retained segment anchors the chain: what came before
		// it was deleted by retention.
		sc.started, sc.seq, sc.hash = true, h.firstSeq-1, h.prevHash
	}
	seg.prevHash, seg.lastHash, seg.size = h.prevHash, h.prevHash, headerSize

	rd := newReader(f, headerSize, fi.Size(), sc.buf)
	defer func() { sc.buf = rd.buf }()
	for {
		body, off, p, err := rd.next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if p != ProblemNone {
			return bad(off, p, ""), nil
		}
		v, ok := parseBody(body)
		if !ok {
			return bad(off, ProblemFormat, "fields do not fit the body"), nil
		}
		if v.seq != sc.seq+1 {
			return bad(off, ProblemSequence, fmt.Sprintf("found seq %d", v.seq)), nil
		}
		if want := sc.ch.next(&sc.hash, v.content); [hashSize]byte(v.hash) != want {
			return bad(off, ProblemChain, fmt.Sprintf("stored %s, computed %s",
				hex.EncodeToString(v.hash), hex.EncodeToString(want[:]))), nil
		}
		sc.seq, sc.hash = v.seq, [hashSize]byte(v.hash)
		seg.lastSeq, seg.lastHash = v.seq, sc.hash
		seg.size = off + frameHeader + int64(len(body))
		seg.newest = max(seg.newest, v.timeNS)
		seg.addMark(v.seq, off)
		if sc.visit != nil {
			sc.visit(seg, &v, off)
		}
	}
}

// isTail reports whether nothing whole follows offset off in the segment
// file: no position after it starts a frame with a matching CRC. Only then
// is a bad spot a torn tail rather than damage in the middle.
func isTail(path string, off int64) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("journal: open %s: %w", path, err)
	}
	defer f.Close()
	rest, err := io.ReadAll(io.NewSectionReader(f, off, 1<<62))
	if err != nil {
		return false, fmt.Errorf("journal: read %s: %w", path, err)
	}
	for at := 1; at+frameHeader+minBody <= len(rest); at++ {
		if validFrameAt(rest, at) {
			return false, nil
		}
	}
	return true, nil
}

// syncDir makes a created, renamed or removed directory entry durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("journal: open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("journal: sync dir %s: %w", dir, err)
	}
	return nil
}
