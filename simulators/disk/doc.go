// Package disk is a simulated disk behind table/vfs.FS, for running the
// real journal (table/journal) and outbox (studio/mqttlink) through power
// cuts and disk faults, deterministically from a seed.
//
// # What survives a power cut
//
// The model is what Linux ext4 (data=ordered, the default) guarantees,
// taken conservatively: code that is correct on it is correct on ext4.
//
//   - File data: every write goes to the page cache (what reads return at
//     once) and becomes durable only when the file is fsync'd. At a power
//     cut, with Options.KeepUnsynced false, every write not yet fsync'd is
//     lost. With it true, a prefix of the unsynced writes (in the order
//     they were made) survives, drawn from the seed, and the first write
//     after that prefix may survive torn at any byte, with its lost bytes
//     read back as zeros or as the data written (Options.TearZeros): pages
//     reach the disk in the background, in any amount, and a tail past the
//     old size may be allocated but unwritten. Writes that overwrite in
//     place (the outbox's ack mark) are modelled the same way.
//   - Directory entries: creating, renaming or removing a file changes the
//     namespace at once but is durable only after an fsync of the
//     directory (SyncDir). ext4 commits metadata in order through its
//     journal, so a SyncDir makes every earlier pending change durable
//     too, and at a power cut a prefix of the pending changes survives
//     (none, with KeepUnsynced false). A file whose creation was lost is
//     gone with its data, even if the data was fsync'd; a rename whose
//     entry was lost leaves the old name. ext4 in practice also commits
//     a new file's entry when the file is fsync'd: not modelled, since
//     POSIX does not promise it. Directories themselves (MkdirAll) are
//     durable at once: the stores create theirs once, at first start.
//   - A failed fsync (EIO): as Linux does since 4.13, the failed writes'
//     pages are marked clean: reads still return them, a later fsync
//     succeeds without them, and a power cut loses them. The stores must
//     treat a failed fsync as the loss of everything unsynced.
//
// # Faults
//
// Inject makes the n-th matching write, fsync, directory fsync or open
// fail with an error (EIO, or any); SetCapacity makes writes past a byte
// count fail with ENOSPC after writing what fits (a full disk). PowerCutAt
// cuts the power just before the n-th mutating operation: it and every
// later operation fail with ErrPowerCut, handles opened before it stay
// dead, and Reboot returns the disk as a power cut leaves it. Backup and
// Restore copy and put back the durable image (a restore from an older
// backup loses the newest segment's records); RemoveNewest deletes the
// newest file of a directory (a lost segment).
//
// Every choice comes from Options.Seed, so a run on one goroutine is the
// same run every time. The disk is safe for concurrent use.
//
// This package is for simulations and tests only: production code uses
// vfs.OS.
package disk
