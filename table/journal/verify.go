package journal

import (
	"encoding/hex"
	"path/filepath"

	"github.com/livetable/livetable/table/vfs"
)

// VerifyReport is the result of Verify, printed by `tablectl journal
// verify`.
type VerifyReport struct {
	// Segments is the number of segment files checked.
	Segments int
	// Records is the number of whole records before the first problem.
	Records uint64
	// FirstSeq and LastSeq bound the good records (LastSeq is the last one
	// before the first problem).
	FirstSeq, LastSeq uint64
	// Anchor is the previous hash named by the oldest segment, hex: the
	// chain's starting point (zeros when the journal starts at seq 1).
	Anchor string
	// LastHash is the hash of the last good record, hex. Writing it down
	// elsewhere lets a later Verify prove nothing before it was changed.
	LastHash string
	// Bad is the first problem, nil when every record is good. Bad.Tail is
	// true for a torn tail, which Open would cut.
	Bad *CorruptError
}

// Verify checks a journal directory without changing it: every segment
// header, every record's length and CRC-32C, the sequence, and the SHA-256
// hash chain across segments. It can run while the daemon appends; it then
// checks up to what it finds, and may report the record being written at
// that moment as a torn tail. The error is Bad (matching ErrCorrupt,
// or ErrTornTail for a torn tail) or an I/O error.
func Verify(dir string) (VerifyReport, error) { return VerifyFS(vfs.OS{}, dir) }

// VerifyFS is Verify on the file system fsys.
func VerifyFS(fsys vfs.FS, dir string) (VerifyReport, error) {
	var rep VerifyReport
	segs, err := listSegments(fsys, dir)
	if err != nil {
		return rep, err
	}
	rep.Segments = len(segs)
	check, err := checkSegments(fsys, dir, segs, nil, nil)
	if err != nil {
		return rep, err
	}
	if len(segs) > 0 {
		rep.FirstSeq = segs[0].firstSeq
		rep.Anchor = hex.EncodeToString(segs[0].prevHash[:])
		rep.LastSeq = check.lastSeq
		rep.Records = check.lastSeq + 1 - rep.FirstSeq
		rep.LastHash = hex.EncodeToString(check.lastHash[:])
	}
	if bad := check.bad; bad != nil {
		if check.badIndex == len(segs)-1 && frameProblem(bad.Problem) {
			seg := segs[check.badIndex]
			if bad.Tail, bad.Records, err = isTail(fsys, filepath.Join(dir, seg.name), seg, bad.Offset); err != nil {
				return rep, err
			}
		}
		rep.Bad = bad
	}
	if rep.Bad != nil {
		return rep, rep.Bad
	}
	return rep, nil
}
