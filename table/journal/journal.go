package journal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table/vfs"
)

// Record is one journaled input with the context needed to replay and
// recall it without decoding Data.
type Record struct {
	// Seq is assigned by Append: it starts at 1 and increases by one per
	// record. The value passed to Append is ignored.
	Seq uint64
	// Time is the host time the caller's clock gave the input. The journal
	// never reads a clock itself, so replays and tests are deterministic.
	// It is stored in Unix nanoseconds and read back in UTC; the zero Time
	// round-trips (and so 1970-01-01T00:00:00Z reads back as the zero Time).
	Time time.Time
	// DeviceMS is the device's own time in milliseconds, 0 when not given.
	DeviceMS int64
	// Round is the round id or game code, empty outside a round.
	Round string
	// Shoe is the shoe id, may be empty.
	Shoe string
	// Kind is the input kind ("card", "decision", ...), kept beside the
	// data so recall can filter without decoding.
	Kind string
	// Data is the encoded input (table.EncodeInput), opaque to the journal.
	Data []byte
}

// RecoveryReport says what Open found and repaired. A non-nil Tail means a
// torn tail was cut: the controller raises an alarm for it.
type RecoveryReport struct {
	// Segments is the number of segment files after recovery.
	Segments int
	// FirstSeq and LastSeq bound the retained records; LastSeq is 0 for an
	// empty journal and FirstSeq is then the seq the next record gets.
	FirstSeq, LastSeq uint64
	// Records is the number of whole records retained.
	Records uint64
	// Tail locates the torn tail that was cut, nil when there was none.
	Tail *CorruptError
	// CutBytes is how many bytes the cut removed.
	CutBytes int64
	// RemovedSegments lists segment files removed because their header was
	// torn (a power cut while a segment was being created).
	RemovedSegments []string
	// Retired lists segments deleted by retention during Open.
	Retired []string
	// Rescanned lists the sealed segments Open checked record by record
	// because their trailer was missing (written before trailers), torn,
	// damaged or contradicted by the next segment, each with the reason.
	Rescanned []string
	// TrailerCut names the last segment whose torn trailer was cut (a
	// power cut while it was being sealed); no record was lost.
	TrailerCut string
	// Ahead is how far the newest record time of all is past the clock
	// at Open, when that is more than AheadWarning (else 0): records
	// written while the wall clock was ahead (a box that ran on a wrong
	// battery clock, then NTP set it back), or a clock now behind. Nothing
	// is lost: retention by age keeps the segments holding them until
	// the clock passes their time by MaxAge (it never ages a segment from
	// a time ahead of the clock), and Open logs a warning.
	Ahead time.Duration
}

// AheadWarning is how far past the clock at Open a record time must be
// for Open to report it (RecoveryReport.Ahead) and warn: more than an
// NTP correction of a clock kept in sync, far less than any retention.
const AheadWarning = time.Minute

// Truncated reports whether a torn tail was cut.
func (r RecoveryReport) Truncated() bool { return r.Tail != nil }

// Journal is an append-only, checksummed, hash-chained log of inputs in
// segment files. Append is safe for concurrent use. Writing is done under
// writeMu: by the journal's writer goroutine (stopped by Close) for queued
// appends, or by an Append's own goroutine when nothing is queued (see
// Append).
type Journal struct {
	opts Options
	log  zerolog.Logger
	dir  string
	fs   vfs.FS
	lock io.Closer

	reqs chan *Pending
	done chan struct{} // closed when the writer goroutine has returned

	sendMu sync.RWMutex // guards closed and every send on reqs
	closed bool

	mu      sync.Mutex // guards the following
	segs    []*segment // oldest first; the last one is active
	lastSeq uint64
	// newest is "now" for retention by age, Unix ns: the last record's
	// time (at Open, the newest of the newest segment that has records),
	// not the newest of all records (see retainLocked).
	newest int64
	// ageBase and ageStart cap "now" for retention by age: the newest
	// record time at Open (no later than the clock then) plus the time
	// the monotonic clock has run since ageStart. A record time past that
	// came from a wall clock stepped ahead (retainLocked).
	ageBase  int64
	ageStart time.Time
	// rounds is the round index, built on first use (roundsReady): Open
	// does not read the rounds of sealed segments (see ensureRounds).
	rounds      roundIndex
	roundsReady bool
	kinds       kindIndex
	failed      error // first write failure; appends are refused after it
	readers     int   // replays in progress; retention waits for them

	// queued counts appends sent to reqs and not yet committed: Append
	// commits on its own goroutine only when it is 0, so records keep the
	// order of the calls.
	queued atomic.Int64

	// writeMu is held by whoever writes: the writer goroutine for a batch,
	// or an Append committing directly. It guards the following (and Open
	// owns them before the writer starts).
	writeMu sync.Mutex
	f       vfs.File
	ch      *chainer
	hash    [hashSize]byte // hash of the last durable record
	buf     []byte
	batch   []*Pending
	offs    []int64
}

// Pending is an append in flight. Wait blocks until the record is durable
// or failed.
type Pending struct {
	rec  Record
	seq  uint64
	err  error
	done chan struct{}
}

// Done is closed once the record is durable or failed.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Wait blocks until the record is durable (fsync'd) and returns its seq, or
// returns the error that kept it from being written.
func (p *Pending) Wait() (uint64, error) {
	<-p.done
	return p.seq, p.err
}

func (p *Pending) finish(seq uint64, err error) {
	p.seq, p.err = seq, err
	p.rec.Data = nil // the caller owns it again
	close(p.done)
}

// Open opens (creating if needed) the journal in opts.Dir. It checks every
// record's checksum, the sequence and the hash chain; cuts a torn tail back
// to the last whole record (reported in RecoveryReport); and returns a
// *CorruptError (ErrCorrupt) for damage anywhere else, without touching the
// files. It starts the writer goroutine that Close stops.
//
// With opts.ReadOnly it takes no lock and writes nothing: a torn tail is
// reported but left in place, retention does not run, and appends fail
// with ErrReadOnly. tablectl uses it to read a live table's journal.
func Open(opts Options, log zerolog.Logger) (*Journal, RecoveryReport, error) {
	opts.ensureDefaults()
	var rep RecoveryReport
	if opts.Dir == "" {
		return nil, rep, ErrNoDir
	}
	var lock io.Closer
	if !opts.ReadOnly {
		if err := opts.FS.MkdirAll(opts.Dir, 0o750); err != nil {
			return nil, rep, fmt.Errorf("journal: create %s: %w", opts.Dir, err)
		}
		path := filepath.Join(opts.Dir, "LOCK")
		var err error
		if lock, err = opts.FS.Lock(path); err != nil {
			if errors.Is(err, vfs.ErrLocked) {
				return nil, rep, fmt.Errorf("journal: lock %s: %w", path, ErrLocked)
			}
			return nil, rep, fmt.Errorf("journal: %w", err)
		}
	}
	j := &Journal{
		opts: opts,
		log:  log.With().Str("component", "journal").Logger(),
		dir:  opts.Dir,
		fs:   opts.FS,
		lock: lock,
		reqs: make(chan *Pending, opts.MaxBatch),
		done: make(chan struct{}),
		ch:   newChainer(),
	}
	if err := j.recover(&rep); err != nil {
		if lock != nil {
			lock.Close()
		}
		return nil, rep, err
	}
	if !opts.ReadOnly {
		go j.run()
	}
	j.log.Info().Int("segments", rep.Segments).Uint64("first_seq", rep.FirstSeq).
		Uint64("last_seq", rep.LastSeq).Bool("tail_cut", rep.Tail != nil).Msg("journal open")
	if rep.Ahead > 0 {
		j.log.Warn().Dur("ahead", rep.Ahead).Str("ahead_text", rep.Ahead.Round(time.Second).String()).
			Time("clock", j.ageStart).Time("newest_record", j.ageStart.Add(rep.Ahead)).
			Msg("journal: records are stamped ahead of the clock: they were written while the wall clock was ahead " +
				"(a wrong battery clock, then NTP set it back), or the clock is behind now. Nothing is lost: retention by age " +
				"keeps their segments until the clock passes them by max_age; event times and round codes go back by that much, " +
				"and recall files those rounds under their stamped date. Check the clock (timedatectl): if it is right, nothing to do")
	}
	return j, rep, nil
}

// recover scans the segments, cuts a torn tail, applies retention and opens
// the active segment for appending.
func (j *Journal) recover(rep *RecoveryReport) error {
	segs, err := listSegments(j.fs, j.dir)
	if err != nil {
		return err
	}
	nextSeq := uint64(1)
	check, err := checkSegments(j.fs, j.dir, segs, true)
	if err != nil {
		return err
	}
	if bad := check.bad; bad != nil {
		i := check.badIndex
		seg := segs[i]
		path := filepath.Join(j.dir, seg.name)
		if i == len(segs)-1 && frameProblem(bad.Problem) {
			if bad.Tail, bad.Records, err = isTail(j.fs, path, seg, bad.Offset); err != nil {
				return err
			}
		}
		if !bad.Tail {
			j.log.Error().Err(bad).Msg("journal corrupt: refusing to open")
			return bad
		}
		rep.Tail = bad
		switch {
		case j.opts.ReadOnly:
			// Leave the file alone; reads stop at the last whole record.
			j.log.Warn().Err(bad).Msg("journal torn tail (read-only: left in place)")
			if bad.Offset == 0 {
				nextSeq = seg.firstSeq
				segs = segs[:i]
			}
		case bad.Offset == 0:
			j.log.Warn().Err(bad).Msg("journal torn tail: removing the torn segment")
			// The segment's own header is torn, so it holds no record.
			fi, err := j.fs.Stat(path)
			if err != nil {
				return fmt.Errorf("journal: stat %s: %w", path, err)
			}
			if err := j.fs.Remove(path); err != nil {
				return fmt.Errorf("journal: remove torn segment %s: %w", path, err)
			}
			if err := syncDir(j.fs, j.dir); err != nil {
				return err
			}
			rep.CutBytes += fi.Size()
			rep.RemovedSegments = append(rep.RemovedSegments, seg.name)
			nextSeq = seg.firstSeq
			segs = segs[:i]
		default:
			j.log.Warn().Err(bad).Msg("journal torn tail: cutting back to the last whole record")
			cut, err := truncateFile(j.fs, path, seg.size)
			if err != nil {
				return err
			}
			rep.CutBytes += cut
		}
	}
	rep.Rescanned = check.trailers
	if len(check.trailers) > 0 {
		j.log.Info().Strs("segments", check.trailers).Msg("journal: sealed segments without a usable trailer checked record by record")
	}
	if n := len(segs); n > 0 && segs[n-1].trailerAt > 0 && !j.opts.ReadOnly {
		// The last segment was being sealed when the table stopped: its
		// records are whole, its trailer is not. Cut the trailer; the
		// segment is active again and is sealed anew when full.
		seg := segs[n-1]
		j.log.Warn().Str("segment", seg.name).Int64("offset", seg.trailerAt).
			Msg("journal: cutting the torn trailer of the last segment")
		cut, err := truncateFile(j.fs, filepath.Join(j.dir, seg.name), seg.size)
		if err != nil {
			return err
		}
		rep.CutBytes += cut
		rep.TrailerCut = seg.name
		seg.trailerAt = 0
	}
	j.segs = segs
	for _, s := range segs {
		for _, k := range s.kinds {
			j.kinds.set(k.kind, k.seq)
		}
	}
	switch {
	case j.opts.ReadOnly:
		if len(segs) == 0 {
			// Nothing on disk: an empty journal that would start at nextSeq.
			j.segs = []*segment{{name: segmentName(nextSeq), firstSeq: nextSeq, lastSeq: nextSeq - 1}}
		}
	case len(segs) == 0:
		seg, f, err := j.createSegment(nextSeq, [hashSize]byte{})
		if err != nil {
			return err
		}
		j.segs, j.f = []*segment{seg}, f
	case segs[len(segs)-1].sealed:
		// Sealed whole, but the next segment was not made (or was torn
		// and removed): start it now.
		last := segs[len(segs)-1]
		seg, f, err := j.createSegment(last.lastSeq+1, last.lastHash)
		if err != nil {
			return err
		}
		j.segs, j.f = append(j.segs, seg), f
	default:
		active := segs[len(segs)-1]
		f, err := j.fs.OpenFile(filepath.Join(j.dir, active.name), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return fmt.Errorf("journal: open active segment: %w", err)
		}
		j.f = f
	}
	for i := len(j.segs) - 1; i >= 0 && j.newest == 0; i-- {
		j.newest = j.segs[i].newest
	}
	j.ageStart = j.opts.Clock.Now()
	j.ageBase = j.newest
	if clk := unixNano(j.ageStart); j.ageBase == 0 || clk < j.ageBase {
		// Records stamped after the clock at Open were written while the
		// wall clock was ahead (and it has been corrected back since):
		// they say nothing about how old the others are.
		j.ageBase = clk
	}
	var newestOfAll int64
	for _, sg := range j.segs {
		newestOfAll = max(newestOfAll, sg.newest)
	}
	if ahead := time.Duration(newestOfAll - unixNano(j.ageStart)); newestOfAll != 0 && ahead > AheadWarning {
		// Any segment's, not only the newest one's: the run with the
		// clock ahead may have been followed by one after the correction.
		rep.Ahead = ahead
	}
	active := j.segs[len(j.segs)-1]
	j.lastSeq, j.hash = active.lastSeq, active.lastHash
	if !j.opts.ReadOnly {
		j.mu.Lock()
		rep.Retired = j.retainLocked()
		j.mu.Unlock()
	}
	rep.Segments = len(j.segs)
	if j.opts.ReadOnly && len(segs) == 0 {
		rep.Segments = 0 // the placeholder is no file
	}
	rep.FirstSeq = j.segs[0].firstSeq
	rep.LastSeq = j.lastSeq
	rep.Records = j.lastSeq + 1 - rep.FirstSeq
	return nil
}

// frameProblem reports whether p is damage a torn write can cause, as
// opposed to a record that is whole but wrong.
func frameProblem(p Problem) bool {
	switch p {
	case ProblemTorn, ProblemHeader, ProblemLength, ProblemChecksum:
		return true
	}
	return false
}

// truncateFile cuts path to size and makes the cut durable; it returns how
// many bytes were removed.
func truncateFile(fsys vfs.FS, path string, size int64) (int64, error) {
	f, err := fsys.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("journal: open %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("journal: stat %s: %w", path, err)
	}
	if err := f.Truncate(size); err != nil {
		return 0, fmt.Errorf("journal: truncate %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("journal: sync %s: %w", path, err)
	}
	return fi.Size() - size, nil
}

// createSegment creates a segment starting at firstSeq, writes and syncs
// its header and the directory entry.
func (j *Journal) createSegment(firstSeq uint64, prev [hashSize]byte) (*segment, vfs.File, error) {
	seg := &segment{name: segmentName(firstSeq), firstSeq: firstSeq, prevHash: prev,
		lastSeq: firstSeq - 1, lastHash: prev, size: headerSize}
	path := filepath.Join(j.dir, seg.name)
	f, err := j.fs.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, nil, &WriteError{Op: "create", Path: path, Seq: firstSeq, Err: err}
	}
	fail := func(op string, err error) (*segment, vfs.File, error) {
		f.Close()
		if rerr := j.fs.Remove(path); rerr != nil {
			j.log.Error().Err(rerr).Str("path", path).Msg("journal: cannot remove half-made segment")
		}
		return nil, nil, &WriteError{Op: op, Path: path, Seq: firstSeq, Err: err}
	}
	if _, err := f.Write(appendHeader(nil, segHeader{firstSeq: firstSeq, prevHash: prev})); err != nil {
		return fail("write header", err)
	}
	if err := f.Sync(); err != nil {
		return fail("sync header", err)
	}
	if err := syncDir(j.fs, j.dir); err != nil {
		return fail("sync dir", err)
	}
	return seg, f, nil
}

// AppendAsync queues r without waiting for the disk (it blocks only while
// MaxBatch appends are already queued); the returned Pending completes when
// r is durable. Records are written in the order AppendAsync is
// called, so a single caller can pipeline inputs and publish each one's
// effects after its Wait. r.Data must not be modified until then.
func (j *Journal) AppendAsync(r Record) *Pending {
	return j.submit(r, false)
}

// Append writes r and returns its seq once it is durable: written and
// fsync'd, together with whatever other appends arrived meanwhile (group
// commit). After a write or fsync failure every Append fails (ErrFailed,
// and ErrDiskFull when the disk is full) until the journal is reopened.
//
// When no append is queued and no group commit window is set (a single
// appender, the table controller), Append writes and syncs on the caller's
// goroutine: the same write and fsync, without the two goroutine hand-offs
// to the writer and back, which cost tens of microseconds each on a
// loaded machine, on every card's path.
func (j *Journal) Append(r Record) (uint64, error) {
	return j.submit(r, true).Wait()
}

// submit checks r and the journal, then commits r on the caller's
// goroutine when direct is allowed and the writer is idle with nothing
// queued, or queues it for the writer.
func (j *Journal) submit(r Record, direct bool) *Pending {
	p := &Pending{rec: r, done: make(chan struct{})}
	if n := encodedSize(&r); n > j.opts.MaxRecordBytes {
		p.finish(0, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, j.opts.MaxRecordBytes))
		return p
	}
	j.sendMu.RLock()
	defer j.sendMu.RUnlock()
	if j.closed {
		p.finish(0, ErrClosed)
		return p
	}
	if j.opts.ReadOnly {
		p.finish(0, ErrReadOnly)
		return p
	}
	if err := j.Err(); err != nil {
		p.finish(0, err)
		return p
	}
	if direct && j.opts.GroupCommitWindow <= 0 && j.queued.Load() == 0 && j.writeMu.TryLock() {
		// Checked again under writeMu: an append queued meanwhile goes
		// first, so records keep the order of the calls.
		if j.queued.Load() == 0 {
			j.batch = append(j.batch[:0], p)
			j.commit(j.batch)
			clear(j.batch)
			j.writeMu.Unlock()
			return p
		}
		j.writeMu.Unlock()
	}
	j.queued.Add(1)
	j.reqs <- p
	return p
}

// Err returns the failure that stopped appends (matching ErrFailed), or nil.
func (j *Journal) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.failed
}

// LastSeq returns the seq of the last durable record, 0 when empty.
func (j *Journal) LastSeq() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.lastSeq
}

// FirstSeq returns the seq of the oldest retained record (the next seq
// when the journal is empty).
func (j *Journal) FirstSeq() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.segs[0].firstSeq
}

// Stats is a snapshot of the journal's extent, for status displays and a
// disk-space alarm before the disk is actually full.
type Stats struct {
	// Segments is the number of segment files.
	Segments int
	// Bytes is their total durable size.
	Bytes int64
	// FirstSeq and LastSeq bound the retained records.
	FirstSeq, LastSeq uint64
	// Rounds is the number of rounds in the recall index.
	Rounds int
}

// Stats returns the journal's current extent.
func (j *Journal) Stats() Stats {
	j.mu.Lock()
	defer j.mu.Unlock()
	st := Stats{Segments: len(j.segs), FirstSeq: j.segs[0].firstSeq, LastSeq: j.lastSeq, Rounds: len(j.rounds.list)}
	for _, s := range j.segs {
		st.Bytes += s.size
	}
	return st
}

// Close stops accepting appends, writes those already queued, stops the
// writer and closes the files. It is safe to call more than once.
func (j *Journal) Close() error {
	j.sendMu.Lock()
	if j.closed {
		j.sendMu.Unlock()
		return nil
	}
	j.closed = true
	if !j.opts.ReadOnly {
		close(j.reqs)
	}
	j.sendMu.Unlock()
	if !j.opts.ReadOnly {
		<-j.done
	}
	var errs []error
	if j.f != nil {
		if err := j.f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("journal: close segment: %w", err))
		}
	}
	if j.lock != nil {
		if err := j.lock.Close(); err != nil {
			errs = append(errs, fmt.Errorf("journal: release lock: %w", err))
		}
	}
	j.log.Info().Uint64("last_seq", j.LastSeq()).Msg("journal closed")
	return errors.Join(errs...)
}

// run is the writer goroutine: it takes a batch of queued appends, writes
// them with one write and one fsync, and completes them.
func (j *Journal) run() {
	defer close(j.done)
	for {
		p, ok := <-j.reqs
		if !ok {
			return
		}
		j.writeMu.Lock()
		j.batch = j.gather(append(j.batch[:0], p))
		n := len(j.batch)
		j.commit(j.batch)
		clear(j.batch)
		j.writeMu.Unlock()
		j.queued.Add(-int64(n))
	}
}

// gather adds what is already queued to batch, then waits up to the group
// commit window for more, without exceeding MaxBatch.
func (j *Journal) gather(batch []*Pending) []*Pending {
	batch = j.drain(batch)
	if j.opts.GroupCommitWindow <= 0 || len(batch) >= j.opts.MaxBatch {
		return batch
	}
	timer := j.opts.Clock.NewTimer(j.opts.GroupCommitWindow)
	defer timer.Stop()
	for len(batch) < j.opts.MaxBatch {
		select {
		case p, ok := <-j.reqs:
			if !ok {
				return batch
			}
			batch = append(batch, p)
		case <-timer.Chan():
			// What was queued when the window closed still joins.
			return j.drain(batch)
		}
	}
	return batch
}

// drain adds the appends already queued to batch, up to MaxBatch, without
// waiting.
func (j *Journal) drain(batch []*Pending) []*Pending {
	for len(batch) < j.opts.MaxBatch {
		select {
		case p, ok := <-j.reqs:
			if !ok {
				return batch
			}
			batch = append(batch, p)
		default:
			return batch
		}
	}
	return batch
}

// commit writes and syncs a batch, then publishes the new durable state.
func (j *Journal) commit(batch []*Pending) {
	j.mu.Lock()
	failed := j.failed
	active := j.segs[len(j.segs)-1]
	seq := j.lastSeq + 1
	j.mu.Unlock()
	if failed != nil {
		for _, p := range batch {
			p.finish(0, failed)
		}
		return
	}
	buf, hash := j.buf[:0], j.hash
	offs := j.offs[:0]
	base := active.size
	for i, p := range batch {
		offs = append(offs, base+int64(len(buf)))
		buf, hash = j.ch.appendRecord(buf, &p.rec, seq+uint64(i), i, &hash)
	}
	j.buf, j.offs = buf, offs
	op := "write"
	_, err := j.f.Write(buf)
	if err == nil {
		op = "sync"
		err = j.f.Sync()
	}
	if err != nil {
		werr := &WriteError{Op: op, Path: filepath.Join(j.dir, active.name), Seq: seq, Err: err}
		j.fail(werr)
		// Take back what may have reached the file, so that records whose
		// Append failed do not come back on replay.
		if terr := j.f.Truncate(base); terr != nil {
			j.log.Error().Err(terr).Msg("journal: cannot cut the failed batch; reopen will cut it")
		}
		for _, p := range batch {
			p.finish(0, fmt.Errorf("%w: %w", ErrFailed, werr))
		}
		return
	}
	j.mu.Lock()
	for i, p := range batch {
		s, ns := seq+uint64(i), unixNano(p.rec.Time)
		active.addMark(s, offs[i])
		active.newest = max(active.newest, ns)
		active.addRun(p.rec.Round, s, ns)
		active.kinds.set(p.rec.Kind, s)
		if j.roundsReady {
			j.rounds.addString(p.rec.Round, s, ns)
		}
		j.kinds.set(p.rec.Kind, s)
	}
	last := seq + uint64(len(batch)) - 1
	active.size = base + int64(len(buf))
	active.lastSeq, active.lastHash, active.lastBatch = last, hash, seq
	j.lastSeq, j.hash = last, hash
	j.newest = unixNano(batch[len(batch)-1].rec.Time)
	j.mu.Unlock()
	if active.size >= j.opts.SegmentBytes {
		// Rotating before completing the batch makes the files after an
		// Append predictable; the batch is durable whatever rotate does.
		j.rotate()
	}
	for i, p := range batch {
		p.finish(seq+uint64(i), nil)
	}
}

// fail records the first write failure; later appends get it back.
func (j *Journal) fail(err *WriteError) {
	j.mu.Lock()
	if j.failed == nil {
		j.failed = fmt.Errorf("%w: %w", ErrFailed, err)
	}
	j.mu.Unlock()
	j.log.Error().Err(err).Bool("disk_full", errors.Is(err, ErrDiskFull)).
		Msg("journal write failed: refusing appends until reopened")
}

// rotate seals the active segment and starts the next one, then applies
// retention. The records already written are durable whatever happens here.
func (j *Journal) rotate() {
	if err := j.seal(); err != nil {
		j.fail(err)
		return
	}
	j.mu.Lock()
	next, prev := j.lastSeq+1, j.hash
	j.mu.Unlock()
	seg, f, err := j.createSegment(next, prev)
	if err != nil {
		var werr *WriteError
		if !errors.As(err, &werr) {
			werr = &WriteError{Op: "rotate", Path: j.dir, Seq: next, Err: err}
		}
		j.fail(werr)
		return
	}
	if err := j.f.Close(); err != nil {
		// The data was fsync'd before rotating, so this loses nothing.
		j.log.Warn().Err(err).Msg("journal: close sealed segment")
	}
	j.f = f
	j.mu.Lock()
	j.segs = append(j.segs, seg)
	retired := j.retainLocked()
	j.mu.Unlock()
	j.log.Debug().Str("segment", seg.name).Strs("retired", retired).Msg("journal rotated")
}

// seal writes the active segment's trailer and fsyncs it, before the next
// segment is created: a segment followed by another one always ends with
// a whole trailer (on a file system that keeps fsync'd data), and a power
// cut during the sealing leaves the segment the last one, whose torn
// trailer Open cuts. A failed write or fsync fails the journal like any
// other: what it wrote is then not trusted.
func (j *Journal) seal() *WriteError {
	j.mu.Lock()
	active := j.segs[len(j.segs)-1]
	buf, runsLen, runsCRC := appendTrailer(j.buf[:0], active)
	j.mu.Unlock()
	j.buf = buf
	path := filepath.Join(j.dir, active.name)
	op := "write trailer"
	_, err := j.f.Write(buf)
	if err == nil {
		op = "sync trailer"
		err = j.f.Sync()
	}
	if err != nil {
		if terr := j.f.Truncate(active.size); terr != nil {
			j.log.Error().Err(terr).Msg("journal: cannot cut the failed trailer; reopen will cut it")
		}
		return &WriteError{Op: op, Path: path, Seq: active.lastSeq + 1, Err: err}
	}
	j.mu.Lock()
	active.sealed = true
	active.trailer = &trailer{runsAt: active.size + int64(len(trailerMagic)), runsLen: runsLen, runsCRC: runsCRC}
	// The trailer holds the rounds now; the index reads them from it when
	// it is built (Rounds, Round).
	active.runs = nil
	j.mu.Unlock()
	return nil
}

// retainLocked deletes the oldest sealed segments beyond MaxBytes or older
// than MaxAge (in record time), oldest first and only whole segments, so the
// chain stays contiguous. It defers deletion while a replay reads. j.mu must
// be held.
func (j *Journal) retainLocked() []string {
	if j.readers > 0 || (j.opts.MaxBytes <= 0 && j.opts.MaxAge <= 0) {
		return nil
	}
	var total int64
	for _, s := range j.segs {
		total += s.size
	}
	// With an anchor kind, only segments wholly before the newest anchor
	// may go: the caller's replay starts at an anchor.
	floor := ^uint64(0)
	if j.opts.AnchorKind != "" {
		floor = 0
		for _, k := range j.kinds {
			if k.kind == j.opts.AnchorKind && k.seq <= j.lastSeq {
				floor = k.seq
			}
		}
	}
	// Ages are measured from the last record's time, not from the
	// newest record of all: a wall clock stepped forward for a moment (a
	// box that booted with a wrong clock, a date typed wrong), then
	// corrected, left records a year ahead, and every later seal (and
	// Open) retired each segment before the newest checkpoint as a year
	// old, until size retention took the stepped segment. A seal or a
	// restart while the clock is still ahead retired them all the same.
	// So "now" is never later than the newest record time at Open (or
	// the clock then, if earlier) plus the time the monotonic clock has
	// run since: a seal while the clock is ahead, or an Open after it was
	// corrected back over records stamped ahead, measures ages in time
	// that really passed. Time the table was stopped does not count until
	// its records pass it (a step and a stop look alike), so retention by
	// age may keep segments longer, never shorter; MaxBytes still bounds
	// the journal. What this cannot tell: an Open while the clock is
	// still ahead over records an earlier run stamped ahead: the daemon
	// must not start before its clock is set (docs/deploy.md).
	now := min(j.newest, j.ageBase+int64(j.opts.Clock.Since(j.ageStart)))
	var retired []string
	for len(j.segs) > 1 {
		s := j.segs[0]
		if s.lastSeq >= floor {
			break
		}
		tooBig := j.opts.MaxBytes > 0 && total > j.opts.MaxBytes
		tooOld := j.opts.MaxAge > 0 && s.newest != 0 && now-s.newest > int64(j.opts.MaxAge)
		if !tooBig && !tooOld {
			break
		}
		path := filepath.Join(j.dir, s.name)
		if err := j.fs.Remove(path); err != nil {
			j.log.Error().Err(err).Str("path", path).Msg("journal: retention cannot delete segment")
			break
		}
		total -= s.size
		retired = append(retired, s.name)
		j.segs[0] = nil
		j.segs = j.segs[1:]
	}
	if len(retired) > 0 {
		if err := syncDir(j.fs, j.dir); err != nil {
			j.log.Warn().Err(err).Msg("journal: retention")
		}
		if j.roundsReady {
			j.rounds.prune(j.segs[0].firstSeq)
		}
		j.log.Info().Strs("segments", retired).Msg("journal retention deleted segments")
	}
	return retired
}
