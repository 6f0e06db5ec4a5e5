package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/livetable/livetable/table/vfs"
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

	return j.pipeline(spans, from, last, fn)
}

// replayBatch and replayQueue size the pipeline between the goroutine that
// reads, checks and decodes records and the caller's fn: decoding overlaps
// fn's work (JSON decoding, the round engine), which matters for a restart.
const (
	replayBatch = 256
	replayQueue = 4
)

// errStopped tells the reading goroutine that fn stopped the replay.
var errStopped = errors.New("journal: replay stopped")

// pipeline reads spans in a goroutine it owns and waits for, and calls fn
// with each record in seq order on the caller's goroutine.
func (j *Journal) pipeline(spans []span, from, last uint64, fn func(Record) error) (err error) {
	out := make(chan []Record, replayQueue)
	free := make(chan []Record, replayQueue+2)
	stop := make(chan struct{})
	var readErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(out)
		batch := make([]Record, 0, replayBatch)
		send := func() error {
			select {
			case out <- batch:
			case <-stop:
				return errStopped
			}
			select {
			case batch = <-free:
			default:
				batch = make([]Record, 0, replayBatch)
			}
			return nil
		}
		emit := func(r Record) error {
			batch = append(batch, r)
			if len(batch) < replayBatch {
				return nil
			}
			return send()
		}
		bp := getReadBuf()
		d := decoder{buf: *bp}
		defer func() { putReadBuf(bp, d.buf) }()
		for _, sp := range spans {
			done, err := d.span(j.fs, j.dir, sp, from, last, emit)
			if errors.Is(err, errStopped) {
				return
			}
			if err != nil {
				readErr = err
				break
			}
			if done {
				break
			}
		}
		if len(batch) > 0 {
			_ = send() // records before a read error are still delivered
		}
	})
	stopped := false
	halt := func() {
		if !stopped {
			stopped = true
			close(stop)
		}
	}
	// Also on a panic in fn: stop the reader and wait for it.
	defer func() {
		halt()
		for range out {
		}
		wg.Wait()
	}()
	for b := range out {
		for i := range b {
			if stopped {
				break
			}
			if ferr := fn(b[i]); ferr != nil {
				err = fmt.Errorf("journal: replay stopped at seq %d: %w", b[i].Seq, ferr)
				halt()
			}
		}
		clear(b) // let kept-or-dropped Data go; the slice is reused
		select {
		case free <- b[:0]:
		default:
		}
	}
	wg.Wait()
	if err != nil {
		return err
	}
	return readErr
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
func (d *decoder) span(fsys vfs.FS, dir string, sp span, from, last uint64, fn func(Record) error) (done bool, err error) {
	path := filepath.Join(dir, sp.name)
	f, err := vfs.Open(fsys, path)
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
			return true, err
		}
	}
}
