package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// slabSize is the size of the blocks Replay carves record data from: one
// allocation per block instead of one per record keeps a replay of
// millions of records fast. A retained Data keeps its block alive.
const slabSize = 64 << 10

// Replay calls fn with every durable record from seq from on, in seq
// order, up to the last record durable when Replay was called. A from at or
// below FirstSeq (0 or 1 included) replays everything retained. Each record
// is checked against its CRC and the sequence; the hash chain was checked
// by Open (Verify checks it again). fn's error stops the replay and is
// returned wrapped. Records are owned by fn: Data may be kept.
func (j *Journal) Replay(from uint64, fn func(Record) error) error {
	return j.replay(from, ^uint64(0), fn)
}

// span is the part of one segment a replay reads.
type span struct {
	name  string
	start int64  // offset of the first record to read
	seq   uint64 // its seq
	size  int64
}

func (j *Journal) replay(from, to uint64, fn func(Record) error) error {
	j.sendMu.RLock()
	closed := j.closed
	j.sendMu.RUnlock()
	if closed {
		return ErrClosed
	}
	j.mu.Lock()
	last := min(j.lastSeq, to)
	from = max(from, j.segs[0].firstSeq)
	var spans []span
	for _, s := range j.segs {
		if s.empty() || s.lastSeq < from || s.firstSeq > last {
			continue
		}
		m := s.seek(from)
		spans = append(spans, span{name: s.name, start: m.off, seq: m.seq, size: s.size})
	}
	j.readers++
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		j.readers--
		j.mu.Unlock()
	}()

	d := decoder{buf: make([]byte, readBufSize)}
	for _, sp := range spans {
		done, err := d.span(j.dir, sp, from, last, fn)
		if err != nil || done {
			return err
		}
	}
	return nil
}

// decoder turns views into Records, sharing strings between consecutive
// records (kind, round and shoe repeat) and carving Data from slabs.
type decoder struct {
	buf               []byte
	kind, round, shoe string
	slab              []byte
}

func (d *decoder) intern(cur *string, b []byte) string {
	if *cur != string(b) {
		*cur = string(b)
	}
	return *cur
}

func (d *decoder) data(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	if len(b) > slabSize/4 {
		return bytes.Clone(b)
	}
	if len(d.slab) < len(b) {
		d.slab = make([]byte, slabSize)
	}
	out := d.slab[:len(b):len(b)]
	copy(out, b)
	d.slab = d.slab[len(b):]
	return out
}

func (d *decoder) record(v *view) Record {
	return Record{
		Seq:      v.seq,
		Time:     fromUnixNano(v.timeNS),
		DeviceMS: v.deviceMS,
		Round:    d.intern(&d.round, v.round),
		Shoe:     d.intern(&d.shoe, v.shoe),
		Kind:     d.intern(&d.kind, v.kind),
		Data:     d.data(v.data),
	}
}

// span replays the records of one segment with seq in [from, last]; done
// is true once last has been passed.
func (d *decoder) span(dir string, sp span, from, last uint64, fn func(Record) error) (done bool, err error) {
	path := filepath.Join(dir, sp.name)
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("journal: replay: open %s: %w", path, err)
	}
	defer f.Close()
	rd := newReader(f, sp.start, sp.size, d.buf)
	defer func() { d.buf = rd.buf }()
	expect := sp.seq
	for {
		body, off, p, err := rd.next()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("journal: replay: %w", err)
		}
		bad := func(p Problem, detail string) error {
			return &CorruptError{Segment: sp.name, Offset: off, Seq: expect, Problem: p, Detail: detail}
		}
		if p != ProblemNone {
			return false, bad(p, "")
		}
		v, ok := parseBody(body)
		if !ok {
			return false, bad(ProblemFormat, "fields do not fit the body")
		}
		if v.seq != expect {
			return false, bad(ProblemSequence, fmt.Sprintf("found seq %d", v.seq))
		}
		expect = v.seq + 1
		if v.seq > last {
			return true, nil
		}
		if v.seq < from {
			continue
		}
		if err := fn(d.record(&v)); err != nil {
			return true, fmt.Errorf("journal: replay stopped at seq %d: %w", v.seq, err)
		}
	}
}
