package journal

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrCorrupt is returned (wrapped in a *CorruptError) when a record that is
// not the torn tail fails its checksum, breaks the sequence or breaks the hash
// chain. Open refuses to start on it: cutting there would silently drop
// records that were acknowledged as durable.
var ErrCorrupt = errors.New("journal: corrupt record")

// ErrTornTail is matched by a *CorruptError from Verify whose problem is the
// torn tail: a last record cut short with nothing whole after it. Open cuts
// it and reports it in RecoveryReport; Verify, which never writes, reports it.
var ErrTornTail = errors.New("journal: torn tail")

// ErrDiskFull is matched (errors.Is) by a write error caused by ENOSPC. The
// journal refuses further appends until it is reopened, so the controller
// raises an alarm and stops new rounds instead of losing inputs.
var ErrDiskFull = errors.New("journal: disk full")

// ErrFailed is returned by Append after an earlier write or fsync failed. The
// first failure is wrapped too, so errors.Is(err, ErrDiskFull) still holds.
var ErrFailed = errors.New("journal: failed, reopen to recover")

// ErrClosed is returned by Append and Replay after Close.
var ErrClosed = errors.New("journal: closed")

// ErrReadOnly is returned by Append on a journal opened with
// Options.ReadOnly.
var ErrReadOnly = errors.New("journal: read-only")

// ErrTooLarge is returned by Append for a record whose encoded form exceeds
// Options.MaxRecordBytes. It does not fail the journal.
var ErrTooLarge = errors.New("journal: record too large")

// ErrNoDir is returned by Open when Options.Dir is empty.
var ErrNoDir = errors.New("journal: no directory")

// ErrLocked is returned by Open when another process holds the journal.
var ErrLocked = errors.New("journal: directory in use by another process")

// ErrNotFound is returned by Round for a round code the index does not hold.
var ErrNotFound = errors.New("journal: round not found")

// Problem names what is wrong with a record.
type Problem int

// The problems a scan can find, in the order a record is checked.
const (
	// ProblemNone means the record is whole.
	ProblemNone Problem = iota
	// ProblemTorn is a record (or segment header) cut short by the end of
	// the file: a write that a power cut interrupted.
	ProblemTorn
	// ProblemHeader is a segment header with a bad magic, version or CRC.
	ProblemHeader
	// ProblemLength is a record length outside the possible range.
	ProblemLength
	// ProblemChecksum is a record whose CRC-32C does not match.
	ProblemChecksum
	// ProblemFormat is a record whose checksum matches but whose fields do
	// not decode; only a bug or deliberate tampering produces it.
	ProblemFormat
	// ProblemSequence is a record whose seq is not the previous one plus 1,
	// or a segment that does not start where the previous one ended.
	ProblemSequence
	// ProblemChain is a record whose SHA-256 does not follow from the
	// previous record's hash and its own content: the record or one before
	// it was changed after it was written.
	ProblemChain
)

var problemNames = [...]string{
	ProblemNone:     "none",
	ProblemTorn:     "torn",
	ProblemHeader:   "bad segment header",
	ProblemLength:   "bad length",
	ProblemChecksum: "bad checksum",
	ProblemFormat:   "bad format",
	ProblemSequence: "bad sequence",
	ProblemChain:    "broken hash chain",
}

// String names the problem for logs and tablectl.
func (p Problem) String() string {
	if p < 0 || int(p) >= len(problemNames) {
		return fmt.Sprintf("problem(%d)", int(p))
	}
	return problemNames[p]
}

// CorruptError locates the first bad record. It matches ErrCorrupt.
type CorruptError struct {
	// Segment is the segment file's base name.
	Segment string
	// Offset is the byte offset of the bad record (or header) in the segment.
	Offset int64
	// Seq is the sequence number the record should have had.
	Seq uint64
	// Problem is what is wrong.
	Problem Problem
	// Detail adds numbers (expected and found values).
	Detail string
	// Tail is true when nothing whole follows the bad spot in the last
	// segment: a torn tail, which Open cuts rather than refuses.
	Tail bool
	// Records is, for a torn tail, how many records began in the torn
	// part: seqs Seq to Seq+Records-1 (the one cut short and the whole
	// ones of its write batch after it). Their append never returned, so
	// none was acknowledged, but the cut loses them; Seq-1 is the last
	// record kept. 0 for a torn segment header (no record yet).
	Records int
}

// LastKept is the seq of the last whole record before the damage.
func (e *CorruptError) LastKept() uint64 { return e.Seq - 1 }

// Error says what is wrong and where.
func (e *CorruptError) Error() string {
	what := "corrupt record"
	if e.Tail {
		what = "torn tail"
	}
	s := fmt.Sprintf("journal: %s: %s at %s offset %d (seq %d)", what, e.Problem, e.Segment, e.Offset, e.Seq)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Tail {
		s += fmt.Sprintf("; %s, last whole record seq %d", e.LostText(), e.LastKept())
	}
	return s
}

// LostText says which records a torn tail loses: "no record lost",
// "record 235 lost" or "records 235-237 lost (3)".
func (e *CorruptError) LostText() string {
	switch e.Records {
	case 0:
		return "no record lost"
	case 1:
		return fmt.Sprintf("record %d lost", e.Seq)
	}
	return fmt.Sprintf("records %d-%d lost (%d)", e.Seq, e.Seq+uint64(e.Records)-1, e.Records)
}

// Is makes errors.Is(err, ErrTornTail) true for a torn tail and
// errors.Is(err, ErrCorrupt) true for anything else.
func (e *CorruptError) Is(target error) bool {
	if e.Tail {
		return target == ErrTornTail
	}
	return target == ErrCorrupt
}

// WriteError is a failed write, fsync or segment rotation. It matches
// ErrDiskFull when the cause is ENOSPC, and unwraps to the cause.
type WriteError struct {
	// Op is the failed operation: "write", "sync", "rotate".
	Op string
	// Path is the file involved.
	Path string
	// Seq is the first sequence number of the batch that failed.
	Seq uint64
	// Err is the cause from the file system.
	Err error
}

// Error names the operation, the file and the cause.
func (e *WriteError) Error() string {
	return fmt.Sprintf("journal: %s %s (from seq %d): %v", e.Op, e.Path, e.Seq, e.Err)
}

// Unwrap returns the cause.
func (e *WriteError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrDiskFull) true for ENOSPC.
func (e *WriteError) Is(target error) bool {
	return target == ErrDiskFull && errors.Is(e.Err, syscall.ENOSPC)
}
