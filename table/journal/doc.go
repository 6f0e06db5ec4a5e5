// Package journal is the table's write-ahead log: every input (card, decision,
// supervisor command, timer, shoe change) is appended here and made durable
// before the controller applies it and publishes its effects. On start the
// controller replays the journal to rebuild the exact round.
//
// # Records
//
// A Record carries the encoded input (opaque bytes, table.EncodeInput's
// output) with the context needed to recall it without decoding: host time
// (from the caller's clock; the journal never reads one), device time,
// round and shoe ids and the input kind. Append assigns Seq: 1, 2, 3...
// without gaps.
//
// # Format
//
// The journal is a directory of segment files named after their first seq
// (00000000000000000001.ltj). A segment starts with a 60-byte header (magic,
// version, first seq, the hash of the record before it, CRC-32C) followed by
// records, each framed as length, CRC-32C of length and body, and the body:
// seq, time, device time, position in its write batch, kind, round, shoe,
// data and a SHA-256 hash. The
// hash of a record is SHA-256(previous record's hash || its body without
// the hash), so changing, removing or reordering any record breaks every
// hash after it, even when the attacker fixes the CRC. The chain continues
// across segments through the header's previous hash; the oldest retained
// segment's previous hash anchors it. A sealed segment ends with a
// trailer (where its records end, its last seq and hash, newest time, the
// last seq of each kind, the sparse index and its rounds) so that Open
// need not read it. format.go and trailer.go have the byte layout.
//
// # Durability and group commit
//
// One writer goroutine writes. Append queues the record and returns once a
// write and an fsync covering it have completed. Appends that arrive while
// an fsync runs form the next batch (at most MaxBatch records, optionally
// waiting GroupCommitWindow for more), so N concurrent appenders share one
// fsync. AppendAsync returns a Pending so a single caller can pipeline.
//
// A failed write or fsync (ErrDiskFull for ENOSPC) fails every append of
// the batch, cuts the batch back off the file and makes the journal refuse
// all later appends (ErrFailed) until it is reopened: an input is either
// durable and acknowledged or refused, never silently lost.
//
// # Recovery
//
// Open checks the active (last) segment record by record (CRC, sequence,
// hash chain) and takes each sealed segment from its trailer, once the
// trailer's CRC matches, agrees with the segment's header and the next
// segment's header names its last seq and hash: a restart then costs the
// same at 10 MB or at the 1 GiB retention cap. A sealed segment without a
// usable trailer (written before trailers, a trailer torn or damaged, or
// one the next segment contradicts) is checked record by record as
// before, in parallel with the others; a sealed segment's record is
// checked for its CRC and sequence when a replay reads it, and Verify
// (`tablectl journal verify`) still checks every record, the whole chain
// and every trailer against the records. Open never trusts a trailer it
// cannot check and never refuses to start for one: a power cut while a
// segment was being sealed leaves it the last one with a torn trailer,
// which Open cuts (RecoveryReport.TrailerCut) before appending to the
// segment again. In the last
// segment, a bad record followed by nothing whole but records of its own
// write batch is a torn tail, left by a power cut in the middle of a write
// (each record stores its position in its batch, so a record of a later
// batch, which proves the bad one was fsync'd, is told apart). Open
// truncates the file back to the last whole record before the bad one and
// reports it in RecoveryReport so that the controller raises an alarm. Such a record was never acknowledged (its fsync never
// returned), so its seq is given to the next record. Damage anywhere else
// is a *CorruptError (ErrCorrupt) and Open refuses to start rather than
// drop acknowledged records; Verify locates it.
//
// # Rotation and retention
//
// When the active segment passes SegmentBytes it is sealed and a new one
// starts. Retention deletes whole sealed segments, oldest first, when the
// journal exceeds MaxBytes or a segment's newest record is older than
// MaxAge (in record time, capped by the monotonic time since Open: a wall
// clock stepped ahead retires nothing early). Records are never rewritten, and seqs keep
// counting.
//
// # Recall
//
// The first Rounds or Round builds an index of rounds (code, seq range,
// times) from the trailers' rounds, which the writer then keeps up to
// date (a daemon never builds it: recall opens its own read-only
// journal); Rounds lists recent rounds and Round reads one round's
// records back for `tablectl history`, `tablectl round` and the console.
// Options.ReadOnly opens a live table's journal for such reads without
// disturbing the daemon.
//
// # Use by the controller
//
//	j, rep, err := journal.Open(opts, log)   // ErrCorrupt: stay down, alarm
//	if rep.Tail != nil { /* alarm: torn tail cut, round stays paused */ }
//	j.Replay(j.LastOfKind("shoe_changed"), rebuild) // or 0 for everything
//	for each input {
//		seq, err := j.Append(rec) // durable; ErrDiskFull: alarm, stop new rounds
//		events := round.Apply(input) // then publish events
//	}
//	j.Close()
package journal
