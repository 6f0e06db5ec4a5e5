package mqttlink

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table/vfs"
)

// The outbox is the durable queue between the controller's events and the
// broker. paho's own store cannot be trusted with ordering across
// reconnects, and loses whatever was queued before the first connection,
// so every event is written here first and the publisher sends in order
// from the head, up to Options.MaxInflight unacknowledged (see pump).
//
// The publisher may send a record before it is written and before its
// fsync has finished: Append hands the batch to the publisher, Flush then
// writes it, and SyncLoop, on its own
// goroutine, makes whatever has been written durable, at most once per
// OutboxSyncInterval (many batches per fsync). Neither intake nor
// publishing ever waits for the disk (an fsync is 0.15-0.3 ms here,
// several ms at p99, on every card's path before). Durability is not
// weakened: the outbox is not the source of truth for events, the
// controller's journal is. A power cut can lose only a tail the outbox
// wrote but never synced; on restart OutboxLastSeq is lower by that tail,
// tabled passes it as RepublishAfter, and the controller's replay derives
// those events again, identical, and publishes them once more
// (subscribers drop the duplicates by seq). A process crash loses only
// what the pump had not written yet (at most idleWrite after the broker
// acknowledged it, or flushBytes of a backlog), the same way; what was
// written is in the page cache.
//
// The other way round, a broker that acknowledges an event and then dies
// before storing it (mosquitto saves its state on a timer) loses that
// event after its acknowledgement: no publisher can see that. The backend
// does, by a gap in seq or by the state's seq running ahead of the last
// event it has, and asks for the missing events with a resend command
// (see resend.go).
//
// # Files
//
// events.log is a sequence of records:
//
//	u32 payload length | u32 CRC-32C of the rest | u64 pos | u64 seq | u8 flags | payload
//
// pos is the outbox's own position (strictly increasing, never reused); seq
// is the event's table sequence number. acked holds the last acknowledged
// pos and seq with a CRC. It is rewritten in place after each
// acknowledgement without fsync: a stale value after a power cut only
// causes events to be sent again, and subscribers drop duplicates by seq.
// When the acknowledged head of events.log grows past the compaction
// threshold, the unacknowledged tail is copied to a new file that replaces
// the old one by rename.
//
// # Memory
//
// The unacknowledged records are indexed in memory (pos, seq, where they
// end in events.log), but their payloads only up to memMax bytes
// (Options.OutboxMemoryBytes, 8 MiB): during a long broker outage the
// records past that are "spilled", their payload left in the file, and
// Pending reads each back when it reaches the publishing window. Opening
// an outbox streams the file the same way, so a daemon restarted with an
// hour of unsent events does not hold them all either.

const (
	outboxLogName   = "events.log"
	outboxAckName   = "acked"
	recordHeaderLen = 4 + 4 + 8 + 8 + 1
	ackFileLen      = 8 + 8 + 4
	// maxRecordPayload rejects absurd lengths when reading back a damaged
	// file instead of allocating them.
	maxRecordPayload = 16 << 20

	flagState = 1 << 0
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// record is one event in the outbox.
type record struct {
	pos     uint64
	seq     uint64
	state   bool // published retained on the state topic
	payload []byte
	n       int   // payload length (payload is nil while spilled)
	spilled bool  // the payload is only in events.log
	end     int64 // offset just past the record in events.log
}

func (r *record) size() int64 { return int64(recordHeaderLen + r.n) }

// outbox is safe for one goroutine appending and acknowledging (the link's
// pump) and SyncLoop at a time: Append and compaction write the file only from the
// appender, and SyncLoop syncs it under fileMu.
type outbox struct {
	fs           vfs.FS
	dir          string
	log          zerolog.Logger
	maxBytes     int64
	compactBytes int64
	memMax       int64 // payload bytes of pending records held in memory

	// f is the open events.log; only the appending goroutine writes it.
	f    vfs.File
	ackf vfs.File

	dirty chan struct{} // cap 1: a record was written, not yet synced

	// fileMu keeps compaction from swapping f while SyncLoop syncs it.
	fileMu sync.Mutex
	syncs  atomic.Uint64

	mu sync.Mutex // guards the following
	// pending are the unacknowledged records in pos order.
	pending      []record
	pendingBytes int64
	// memBytes are the payload bytes of pending records held in memory
	// (not spilled).
	memBytes int64
	// written is how far events.log has been written: records ending
	// past it are still in unwritten.
	written int64
	// headOffset is where the first unacknowledged record starts in
	// events.log (everything before it is acknowledged).
	headOffset int64
	fileBytes  int64 // including unwritten
	nextPos    uint64
	lastSeq    uint64
	ackedPos   uint64
	ackedSeq   uint64
	// savedPos is the ackedPos the ack file holds (SaveAck).
	savedPos uint64
	closed   bool

	// unwritten are the records Append encoded and Flush has not written
	// yet; only the appending goroutine (and Close, after it) touches it.
	unwritten []byte
}

// openOutbox opens or creates the outbox in dir and loads the records that
// were not acknowledged yet. A torn or corrupt tail (a crash during an
// append) is cut off and logged: those events were never published.
// fsys nil means the operating system's files. memMax bounds the payload
// bytes of unacknowledged records held in memory (the rest are read back
// from the file when published).
func openOutbox(fsys vfs.FS, dir string, maxBytes, compactBytes, memMax int64, log zerolog.Logger) (*outbox, error) {
	fsys = vfs.OrOS(fsys)
	if err := fsys.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("mqttlink: outbox dir: %w", err)
	}
	ob := &outbox{
		fs: fsys, dir: dir, log: log, maxBytes: maxBytes, compactBytes: compactBytes, memMax: memMax,
		dirty: make(chan struct{}, 1),
	}
	ackf, err := fsys.OpenFile(filepath.Join(dir, outboxAckName), os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("mqttlink: open outbox ack file: %w", err)
	}
	ob.ackf = ackf
	ob.ackedPos, ob.ackedSeq = ob.readAck()
	ob.savedPos = ob.ackedPos

	f, err := fsys.OpenFile(filepath.Join(dir, outboxLogName), os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		_ = ackf.Close()
		return nil, fmt.Errorf("mqttlink: open outbox: %w", err)
	}
	ob.f = f
	if err := ob.load(); err != nil {
		_ = f.Close()
		_ = ackf.Close()
		return nil, err
	}
	if err := syncDir(fsys, dir); err != nil {
		_ = f.Close()
		_ = ackf.Close()
		return nil, err
	}
	if ob.headOffset > 0 {
		if err := ob.compact(); err != nil {
			_ = ob.f.Close()
			_ = ackf.Close()
			return nil, err
		}
	}
	return ob, nil
}

// readAck returns the persisted acknowledgement, or zeros (resend
// everything in the log) when the file is empty or damaged.
func (ob *outbox) readAck() (pos, seq uint64) {
	var b [ackFileLen]byte
	n, err := ob.ackf.ReadAt(b[:], 0)
	if n == 0 && (err == nil || errors.Is(err, io.EOF)) {
		return 0, 0
	}
	if n != ackFileLen || crc32.Checksum(b[:16], castagnoli) != binary.LittleEndian.Uint32(b[16:]) {
		ob.log.Warn().Int("bytes", n).Msg("outbox ack marker damaged; resending every logged event")
		return 0, 0
	}
	return binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:])
}

// load scans events.log, keeps the unacknowledged records (their payloads
// up to memMax, see Memory) and truncates a damaged tail. It streams the
// file: a large outbox is never read into memory whole.
func (ob *outbox) load() error {
	if _, err := ob.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("mqttlink: seek outbox: %w", err)
	}
	br := bufio.NewReaderSize(ob.f, 64<<10)
	var off int64
	var lastPos uint64
	var hdr [recordHeaderLen]byte
	var buf []byte
	for {
		rec, next, err := readRecord(br, hdr[:], &buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil && rec.pos <= lastPos {
			err = errBadRecord
		}
		if err != nil {
			if !errors.Is(err, errBadRecord) && !errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("%w: read %s: %w", ErrOutboxCorrupt, outboxLogName, err)
			}
			size, serr := ob.f.Seek(0, io.SeekEnd)
			if serr != nil {
				return fmt.Errorf("mqttlink: seek outbox: %w", serr)
			}
			ob.log.Warn().Int64("offset", off).Int64("dropped_bytes", size-off).
				Msg("outbox: torn or corrupt tail cut off")
			if err := ob.f.Truncate(off); err != nil {
				return fmt.Errorf("mqttlink: truncate outbox: %w", err)
			}
			if err := ob.f.Sync(); err != nil {
				return fmt.Errorf("mqttlink: sync outbox: %w", err)
			}
			break
		}
		off += next
		lastPos = rec.pos
		ob.lastSeq = max(ob.lastSeq, rec.seq)
		if rec.pos <= ob.ackedPos {
			ob.headOffset = off
			continue
		}
		rec.end = off
		if ob.memBytes+int64(rec.n) <= ob.memMax {
			rec.payload = bytes.Clone(buf)
			ob.memBytes += int64(rec.n)
		} else {
			rec.spilled = true
		}
		ob.pending = append(ob.pending, rec)
		ob.pendingBytes += int64(rec.n)
	}
	if _, err := ob.f.Seek(off, io.SeekStart); err != nil {
		return fmt.Errorf("mqttlink: seek outbox: %w", err)
	}
	ob.fileBytes, ob.written = off, off
	ob.nextPos = max(lastPos, ob.ackedPos) + 1
	ob.lastSeq = max(ob.lastSeq, ob.ackedSeq)
	return nil
}

// errBadRecord is a record that fails its checks: a torn or damaged tail.
var errBadRecord = errors.New("bad outbox record")

// readRecord reads the next record from r, its payload into *buf (reused),
// and returns it without payload, with its length on disk. io.EOF means a
// clean end; errBadRecord and io.ErrUnexpectedEOF a damaged or torn one.
func readRecord(r io.Reader, hdr []byte, buf *[]byte) (rec record, n int64, err error) {
	if _, err := io.ReadFull(r, hdr[:recordHeaderLen]); err != nil {
		return record{}, 0, err
	}
	plen := binary.LittleEndian.Uint32(hdr[0:])
	if plen > maxRecordPayload {
		return record{}, 0, errBadRecord
	}
	if cap(*buf) < int(plen) {
		*buf = make([]byte, plen)
	}
	*buf = (*buf)[:plen]
	if _, err := io.ReadFull(r, *buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return record{}, 0, err
	}
	crc := crc32.Update(crc32.Checksum(hdr[8:recordHeaderLen], castagnoli), castagnoli, *buf)
	if crc != binary.LittleEndian.Uint32(hdr[4:]) {
		return record{}, 0, errBadRecord
	}
	rec.pos = binary.LittleEndian.Uint64(hdr[8:])
	rec.seq = binary.LittleEndian.Uint64(hdr[16:])
	rec.state = hdr[24]&flagState != 0
	rec.n = int(plen)
	return rec, int64(recordHeaderLen) + int64(plen), nil
}

// decodeRecord reads one record from the front of b. ok is false for a
// short, oversized or checksum-failing record.
func decodeRecord(b []byte) (rec record, n int, ok bool) {
	if len(b) < recordHeaderLen {
		return record{}, 0, false
	}
	plen := binary.LittleEndian.Uint32(b[0:])
	if plen > maxRecordPayload || len(b) < recordHeaderLen+int(plen) {
		return record{}, 0, false
	}
	n = recordHeaderLen + int(plen)
	if crc32.Checksum(b[8:n], castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return record{}, 0, false
	}
	rec.pos = binary.LittleEndian.Uint64(b[8:])
	rec.seq = binary.LittleEndian.Uint64(b[16:])
	rec.state = b[24]&flagState != 0
	rec.payload = bytes.Clone(b[recordHeaderLen:n])
	rec.n = len(rec.payload)
	return rec, n, true
}

// appendRecord encodes rec onto buf.
func appendRecord(buf []byte, rec *record) []byte {
	start := len(buf)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(rec.payload)))
	buf = binary.LittleEndian.AppendUint32(buf, 0) // CRC, filled below
	buf = binary.LittleEndian.AppendUint64(buf, rec.pos)
	buf = binary.LittleEndian.AppendUint64(buf, rec.seq)
	var flags byte
	if rec.state {
		flags |= flagState
	}
	buf = append(buf, flags)
	buf = append(buf, rec.payload...)
	binary.LittleEndian.PutUint32(buf[start+4:], crc32.Checksum(buf[start+8:], castagnoli))
	return buf
}

// entry is what the appender hands to the outbox: one event's payload.
type entry struct {
	seq     uint64
	state   bool
	payload []byte
}

// LastSeq is the highest event seq ever appended (or acknowledged), so a
// controller replaying events after a restart is not published twice.
func (ob *outbox) LastSeq() uint64 {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return ob.lastSeq
}

// Full reports whether the unacknowledged records reach the outbox's
// bound: the link's pump then takes no more events until acknowledgements
// make room (Append itself never waits, so one batch may go past the
// bound).
func (ob *outbox) Full() bool {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return len(ob.pending) > 0 && ob.pendingBytes >= ob.maxBytes
}

// Append makes the entries visible to the publisher and encodes them for
// the next Flush, which writes them; SyncLoop makes them durable. It never
// waits and makes no system call: the pump launches the records first and
// writes them after, so the write overlaps the broker round trip instead
// of preceding it (a write stalls when its page is being written back, at
// the p99 of a card's path). The caller keeps to the bound with Full.
//
// Publishing before the write is safe for the reason the fsync may follow
// the publish (file comment): a crash before the write leaves an outbox
// whose last seq is lower, and the journal's replay derives the missing
// events again. An acknowledgement may come before the write: the ack mark
// then runs ahead of events.log, which load handles (acknowledged records
// are skipped, the next pos and seq continue past the mark).
func (ob *outbox) Append(entries []entry) error {
	if len(entries) == 0 {
		return nil
	}
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.closed {
		return ErrOutboxClosed
	}
	for _, e := range entries {
		r := record{pos: ob.nextPos, seq: e.seq, state: e.state, payload: e.payload, n: len(e.payload)}
		ob.unwritten = appendRecord(ob.unwritten, &r)
		ob.fileBytes += r.size()
		r.end = ob.fileBytes
		ob.nextPos++
		ob.lastSeq = max(ob.lastSeq, r.seq)
		if ob.memBytes+int64(r.n) > ob.memMax {
			// Past the memory bound: the payload stays in the file only
			// (see Memory); Pending reads it back.
			r.payload, r.spilled = nil, true
		} else {
			ob.memBytes += int64(r.n)
		}
		ob.pending = append(ob.pending, r)
		ob.pendingBytes += int64(r.n)
	}
	return nil
}

// Unwritten is how many bytes Append encoded that Flush has not written.
// Called by the appending goroutine.
func (ob *outbox) Unwritten() int { return len(ob.unwritten) }

// Flush writes what Append encoded since the last Flush, with one write,
// and compacts events.log when its acknowledged head has grown large.
// Called by the appending goroutine.
func (ob *outbox) Flush() error {
	if len(ob.unwritten) == 0 {
		return nil
	}
	k, err := ob.f.Write(ob.unwritten)
	if err != nil {
		return fmt.Errorf("mqttlink: outbox write: %w", err)
	}
	ob.unwritten = ob.unwritten[:0] // kept: no allocation per batch
	ob.mu.Lock()
	ob.written += int64(k)
	needCompact := ob.headOffset >= ob.compactBytes && ob.headOffset >= ob.fileBytes-ob.headOffset
	ob.mu.Unlock()
	signal(ob.dirty)
	if needCompact {
		return ob.compact()
	}
	return nil
}

// SyncLoop fsyncs what Append wrote, off the intake and publish paths (see
// the file comment for why publishing first loses nothing), until ctx ends.
// After each fsync it rests for about interval before the next one: the outbox
// fsync protects nothing the journal does not (a lost tail is derived
// again), so it only bounds how much a power cut makes the table publish
// twice, and every fsync it saves is one less flush competing with the
// journal's, which is on every card's path (two fsyncs per card made the
// card's p99 wait for the other file's commit). A failed fsync is
// returned: the link must stop, as the outbox can no longer promise
// anything.
func (ob *outbox) SyncLoop(ctx context.Context, interval time.Duration) error {
	var rest *time.Timer
	if interval > 0 {
		rest = time.NewTimer(interval)
		defer rest.Stop()
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ob.dirty:
		}
		if err := ob.sync(); err != nil {
			return err
		}
		if rest == nil {
			continue
		}
		// The rest is drawn from [interval/2, 3*interval/2): links started
		// together (a studio's tables after a power cut, or the load
		// benchmark's 100) would otherwise fsync together every interval
		// for ever, a burst on the disk that every table's journal waits
		// behind.
		rest.Reset(interval/2 + rand.N(interval))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-rest.C:
		}
	}
}

// sync is one of SyncLoop's fsyncs.
func (ob *outbox) sync() error {
	ob.fileMu.Lock()
	err := ob.f.Sync()
	ob.fileMu.Unlock()
	if err != nil {
		return fmt.Errorf("mqttlink: outbox fsync: %w", err)
	}
	ob.syncs.Add(1)
	return nil
}

// Syncs is how many fsyncs SyncLoop has done.
func (ob *outbox) Syncs() uint64 { return ob.syncs.Load() }

// Pending returns the i-th unacknowledged record (0 is the head), if there
// is one, without waiting.
//
// A spilled record is read back from events.log (and held in memory from
// then on, until acknowledged). One that is spilled and not written yet is
// not returned until the next Flush; one that cannot be read back is not
// returned either (logged: the outbox file was damaged under it).
func (ob *outbox) Pending(i int) (record, bool) {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.closed || i >= len(ob.pending) {
		return record{}, false
	}
	r := &ob.pending[i]
	if r.spilled {
		if r.end > ob.written {
			return record{}, false
		}
		payload, err := ob.readBackLocked(r)
		if err != nil {
			ob.log.Error().Err(err).Uint64("pos", r.pos).Uint64("seq", r.seq).Msg("outbox: cannot read a record back")
			return record{}, false
		}
		r.payload, r.spilled = payload, false
		ob.memBytes += int64(r.n)
	}
	return *r, true
}

// readBackLocked reads a spilled record's payload from events.log and
// checks it is the record indexed.
func (ob *outbox) readBackLocked(r *record) ([]byte, error) {
	b := make([]byte, r.size())
	ob.fileMu.Lock()
	_, err := ob.f.ReadAt(b, r.end-r.size())
	ob.fileMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("mqttlink: outbox read back: %w", err)
	}
	got, _, ok := decodeRecord(b)
	if !ok || got.pos != r.pos || got.seq != r.seq {
		return nil, fmt.Errorf("%w: record at %d does not read back", ErrOutboxCorrupt, r.end-r.size())
	}
	return got.payload, nil
}

// Ack marks the head record, which must be at pos, acknowledged by the
// broker. The mark is persisted by SaveAck (and Close), not here: the
// link writes it once the broker has acknowledged everything in flight,
// after the card's event and state rather than between them, where
// each write cost a system call on the pump's goroutine. A mark that
// lags only makes a restart publish again records the broker already
// had, which the contract allows (subscribers keep the highest seq).
func (ob *outbox) Ack(pos uint64) error {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.closed {
		return ErrOutboxClosed
	}
	if len(ob.pending) == 0 || ob.pending[0].pos != pos {
		return fmt.Errorf("mqttlink: outbox ack of pos %d is not the head", pos)
	}
	r := ob.pending[0]
	ob.pending[0] = record{}
	ob.pending = ob.pending[1:]
	ob.pendingBytes -= int64(r.n)
	if !r.spilled {
		ob.memBytes -= int64(r.n)
	}
	ob.headOffset = r.end
	ob.ackedPos, ob.ackedSeq = r.pos, max(ob.ackedSeq, r.seq)
	return nil
}

// AckLag is how many acknowledged records the ack file does not cover yet.
func (ob *outbox) AckLag() uint64 {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return ob.ackedPos - ob.savedPos
}

// SaveAck persists the acknowledgement mark, when it moved, without fsync
// (see the file comment).
func (ob *outbox) SaveAck() error {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.closed {
		return ErrOutboxClosed
	}
	return ob.saveAckLocked()
}

func (ob *outbox) saveAckLocked() error {
	if ob.ackedPos == ob.savedPos {
		return nil
	}
	if err := ob.writeAckLocked(); err != nil {
		return err
	}
	ob.savedPos = ob.ackedPos
	return nil
}

func (ob *outbox) writeAckLocked() error {
	var b [ackFileLen]byte
	binary.LittleEndian.PutUint64(b[0:], ob.ackedPos)
	binary.LittleEndian.PutUint64(b[8:], ob.ackedSeq)
	binary.LittleEndian.PutUint32(b[16:], crc32.Checksum(b[:16], castagnoli))
	if _, err := ob.ackf.WriteAt(b[:], 0); err != nil {
		return fmt.Errorf("mqttlink: outbox ack write: %w", err)
	}
	return nil
}

// compact rewrites events.log with only the unacknowledged records: it
// copies the file's tail from the first of them, without reading the
// records into memory. Called from the appending goroutine after Flush
// (or before any goroutine starts), when everything appended is written.
func (ob *outbox) compact() error {
	ob.mu.Lock()
	head, end := ob.headOffset, ob.written
	ob.mu.Unlock()
	if len(ob.unwritten) > 0 {
		return fmt.Errorf("mqttlink: outbox compact with %d bytes not written", len(ob.unwritten))
	}

	tmp := filepath.Join(ob.dir, outboxLogName+".tmp")
	nf, err := ob.fs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return fmt.Errorf("mqttlink: outbox compact: %w", err)
	}
	if _, err := io.Copy(nf, io.NewSectionReader(ob.f, head, end-head)); err != nil {
		_ = nf.Close()
		return fmt.Errorf("mqttlink: outbox compact write: %w", err)
	}
	if err := nf.Sync(); err != nil {
		_ = nf.Close()
		return fmt.Errorf("mqttlink: outbox compact fsync: %w", err)
	}
	// The ack mark is made durable before the old file goes, so a restart
	// never looks for records the new file no longer has.
	if err := ob.ackf.Sync(); err != nil {
		_ = nf.Close()
		return fmt.Errorf("mqttlink: outbox ack fsync: %w", err)
	}
	if err := ob.fs.Rename(tmp, filepath.Join(ob.dir, outboxLogName)); err != nil {
		_ = nf.Close()
		return fmt.Errorf("mqttlink: outbox compact rename: %w", err)
	}
	if err := syncDir(ob.fs, ob.dir); err != nil {
		_ = nf.Close()
		return err
	}
	ob.mu.Lock()
	ob.fileMu.Lock()
	old := ob.f
	ob.f = nf
	ob.fileMu.Unlock()
	// Every offset moves down by head. Records acknowledged meanwhile (none
	// when the pump calls this, as it also acknowledges) have moved the head
	// within the copied part.
	for i := range ob.pending {
		ob.pending[i].end -= head
	}
	ob.headOffset -= head
	ob.fileBytes -= head
	ob.written -= head
	ob.mu.Unlock()

	if err := old.Close(); err != nil {
		return fmt.Errorf("mqttlink: outbox close old file: %w", err)
	}
	ob.log.Debug().Int64("dropped_bytes", head).Msg("outbox compacted")
	return nil
}

// Depth is the number of events not yet acknowledged by the broker.
func (ob *outbox) Depth() int {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return len(ob.pending)
}

// Close writes what is not written yet, flushes the ack mark and closes the
// files; later appends and acknowledgements return ErrOutboxClosed. Called
// once the appending goroutine has stopped.
func (ob *outbox) Close() error {
	ob.mu.Lock()
	if ob.closed {
		ob.mu.Unlock()
		return nil
	}
	ob.closed = true
	errSave := ob.saveAckLocked()
	ob.mu.Unlock()
	var errWrite error
	if len(ob.unwritten) > 0 {
		if _, err := ob.f.Write(ob.unwritten); err != nil {
			errWrite = fmt.Errorf("write: %w", err)
		}
	}
	errAck := ob.ackf.Sync()
	ob.fileMu.Lock()
	defer ob.fileMu.Unlock()
	errs := errors.Join(errWrite, errSave, errAck, ob.f.Sync(), ob.ackf.Close(), ob.f.Close())
	if errs != nil {
		return fmt.Errorf("mqttlink: close outbox: %w", errs)
	}
	return nil
}

// signal wakes one waiter on a cap-1 channel without ever blocking.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// syncDir makes a rename or a file creation in dir durable.
func syncDir(fsys vfs.FS, dir string) error {
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("mqttlink: %w", err)
	}
	return nil
}
