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
// The active segment is preallocated (vfs.Allocate, fallocate on Linux)
// ahead of its records, in steps of 1 MiB up to SegmentBytes, and records
// are written in place at the end of the last one: after them the file
// holds zeros, the "zero tail". A record's length is never 0, so the
// records end at the first frame header that is all zeros, as they end
// at the end of the file in a segment without one (written by a build
// before preallocation, or where the file system could not preallocate).
// Sealing cuts the zero tail off before the trailer: a sealed segment has
// none. The format version is unchanged.
//
// # Durability and group commit
//
// One writer goroutine writes. Append queues the record and returns once a
// write and an fsync covering it have completed. The write goes in place
// into the preallocated room of the active segment, so the fsync need not
// change the file's size, which is most of what an appending fsync costs
// (on ext4 a 200-byte record took 137-144 µs appended, 95-105 µs in
// place); only the batch that crosses a 1 MiB step pays for the size
// change. When preallocating fails (a full disk, a file system without
// fallocate) the segment grows as it is written, as before: an append
// that fits on the disk never fails for it. Appends that arrive while
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
// segment again. In the last segment, a bad record followed by nothing
// whole but records of its own write batch is a torn tail, left by a
// power cut in the middle of a write (each record stores its position in
// its batch, so a record of a later batch, which proves the bad one was
// fsync'd, is told apart). Open truncates the file back to the last whole
// record before the bad one and reports it in RecoveryReport so that the
// controller raises an alarm. Such a record was never acknowledged (its
// fsync never returned), so its seq is given to the next record. Damage
// anywhere else is a *CorruptError (ErrCorrupt) and Open refuses to start
// rather than drop acknowledged records; Verify locates it.
//
// An all-zero frame header followed by nothing but zeros to the end of
// the file is the clean end of the records (the zero tail; compared in
// large chunks, and a preallocated region reads as zeros without disk
// I/O), not a torn tail, and raises no alarm: a write of which nothing
// reached the disk is a write that never happened, never acknowledged. A
// zero header followed by anything else is judged like any bad frame, by
// the rule above. Before appending again Open always cuts the active
// segment back to the end of its last whole record, zeros included, and
// preallocates anew, so that nothing of a batch never acknowledged can
// stay past the records. Every reader (Open's scan, Replay, recall, a
// read-only open of a live journal, Verify) takes an all-zero frame header
// as the end of what was written; a scan that meets a bad or zero frame
// reads the spot again before judging it, since the writer of a live
// journal may be writing there. A build from before preallocation takes
// a zero tail for a torn one: it cuts it, keeps every record and raises
// one torn-tail alarm naming a record that never existed.
//
// # Rotation and retention
//
// When the active segment passes SegmentBytes it is sealed (its zero tail
// cut, its trailer written) and a new one starts. Retention deletes whole
// sealed segments, oldest first, when the journal's records exceed
// MaxBytes (the active segment's preallocated room, at most 1 MiB, is not
// counted) or a segment's newest record is older than
// MaxAge (in record time). Records are never rewritten, and seqs keep
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
