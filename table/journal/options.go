package journal

import (
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/livetable/livetable/table/vfs"
)

// Options configures a journal. Zero fields take the values of
// DefaultOptions, except MaxAge and MaxBytes, where zero means no limit.
type Options struct {
	// Dir holds the segment files. It is created if missing. Required.
	Dir string
	// SegmentBytes is the size past which the active segment is closed and
	// a new one started (at the next batch boundary, so a segment may
	// exceed it by one batch).
	SegmentBytes int64
	// MaxAge deletes whole sealed segments whose newest record is older
	// than the last record by more than this. Age is measured in record
	// time (the caller's clock), capped by Clock's monotonic time since
	// Open past the newest record time then: records stamped by a wall
	// clock stepped ahead make no segment older. Zero keeps segments
	// regardless of age.
	MaxAge time.Duration
	// MaxBytes deletes the oldest sealed segments while the journal is
	// larger than this. The active segment is never deleted. Zero means no
	// size limit.
	MaxBytes int64
	// AnchorKind names the records the caller rebuilds its state from (the
	// table's checkpoints): replaying from one of them onwards gives the
	// whole state, so the records before the newest one may go. When set,
	// retention never deletes a segment that holds or follows the newest
	// anchor, and deletes nothing while there is no anchor at all: age and
	// size limits are then exceeded rather than state lost. Empty means the
	// caller needs no anchor and retention deletes by size and age alone.
	AnchorKind string
	// GroupCommitWindow is how long the writer waits for more appenders
	// after the first one before it writes and fsyncs the batch. Zero adds
	// no wait: batches still form from the appenders that arrive while the
	// previous fsync runs, which is where group commit gets its gain.
	GroupCommitWindow time.Duration
	// MaxBatch bounds the records written with one fsync.
	MaxBatch int
	// MaxRecordBytes bounds one record's encoded size; larger appends fail
	// with ErrTooLarge. It is capped at 16 MiB, the most a reader accepts.
	MaxRecordBytes int
	// Clock times the group commit window. Nil means the real clock; tests
	// pass a fake one. Record times never come from it: callers give them.
	Clock clockwork.Clock
	// ReadOnly opens the journal for reading only (see Open).
	ReadOnly bool
	// FS is the file system the journal lives on. Nil means the
	// operating system's (vfs.OS). It is the seam through which tests
	// simulate a full disk, a failing fsync or a power cut
	// (journaltest, simulators/disk).
	FS vfs.FS
}

// DefaultOptions returns the defaults for a table box: 8 MiB segments, at
// most 1 GiB and 90 days of journal, no extra group-commit wait, batches of
// up to 512 records, records of up to 2 MiB (a 10,000-player bets_closed).
//
// A table journals about 20 records of 200 bytes per round, 60 rounds an
// hour: some 5 MB a day, so 90 days fit in about 500 MB (a 7-seat table
// writes about 8 KB a round, so its 1 GiB cap holds about 130,000 rounds).
// Open checks the active segment record by record and the sealed ones by
// their trailers, so a restart does not grow with the journal; segments
// of 8 MiB bound what it reads record by record (about 1,000 rounds of
// seven seats, 17 ms at most on the table box; 64 MiB took up to 0.13 s)
// for 128 trailers at the 1 GiB cap; the round
// index (about 150 bytes per round) is built only when recall asks. The
// long-term record of the game is the backend's event stream, not this
// journal.
func DefaultOptions() Options {
	return Options{
		SegmentBytes:      8 << 20,
		MaxAge:            90 * 24 * time.Hour,
		MaxBytes:          1 << 30,
		GroupCommitWindow: 0,
		MaxBatch:          512,
		MaxRecordBytes:    2 << 20,
	}
}

// ensureDefaults fills zero fields from DefaultOptions.
func (o *Options) ensureDefaults() {
	d := DefaultOptions()
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = d.SegmentBytes
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = d.MaxBatch
	}
	o.MaxBatch = min(o.MaxBatch, maxBatchPos)
	if o.MaxRecordBytes <= 0 {
		o.MaxRecordBytes = d.MaxRecordBytes
	}
	o.MaxRecordBytes = min(o.MaxRecordBytes, frameHeader+maxBody)
	if o.MaxRecordBytes < frameHeader+minBody {
		o.MaxRecordBytes = frameHeader + minBody
	}
	if o.GroupCommitWindow < 0 {
		o.GroupCommitWindow = 0
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	o.FS = vfs.OrOS(o.FS)
}
