package journal

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

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
	// Trailers counts the sealed segments whose trailer matches their
	// records; Untrailed those sealed before trailers existed.
	Trailers, Untrailed int
	// BadTrailers lists trailers that are torn, damaged or say something
	// other than the records, each with what is wrong. Open does not
	// trust them (it checks those segments record by record), except one
	// whose checksum matches but whose content is wrong: only a bug or
	// tampering makes one, and Verify is what finds it.
	BadTrailers []string
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
	check, err := checkSegments(fsys, dir, segs, false)
	if err != nil {
		return rep, err
	}
	rep.BadTrailers = check.trailers
	upto := len(segs)
	if check.bad != nil {
		upto = check.badIndex
	}
	for i, seg := range segs[:upto] {
		if seg.damaged {
			continue // listed by checkSegments
		}
		ok, why, err := verifyTrailer(fsys, dir, seg, i == len(segs)-1)
		switch {
		case err != nil:
			return rep, err
		case why != "":
			rep.BadTrailers = append(rep.BadTrailers, seg.name+": "+why)
		case ok:
			rep.Trailers++
		case i < len(segs)-1 && seg.trailerAt == 0:
			rep.Untrailed++
		}
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

// verifyTrailer checks seg's trailer against its records, which seg
// describes after a scan. ok is false when there is none (the active
// segment, or one sealed before trailers); why says what is wrong with a
// trailer that is there.
func verifyTrailer(fsys vfs.FS, dir string, seg *segment, last bool) (ok bool, why string, err error) {
	path := filepath.Join(dir, seg.name)
	f, err := vfs.Open(fsys, path)
	if err != nil {
		return false, "", fmt.Errorf("journal: open %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, "", fmt.Errorf("journal: stat %s: %w", path, err)
	}
	if fi.Size() == seg.size && seg.trailerAt == 0 {
		return false, "", nil // no trailer
	}
	t, err := readTrailer(f, fi.Size())
	if errors.Is(err, errNoTrailer) {
		if last && seg.trailerAt > 0 {
			return false, "torn trailer (a power cut while sealing; tabled cuts it on start)", nil
		}
		return false, err.Error(), nil
	}
	if err != nil {
		return false, "", err
	}
	runs, err := readRuns(f, &t)
	if errors.Is(err, errNoTrailer) {
		return false, err.Error(), nil
	}
	if err != nil {
		return false, "", err
	}
	differ := func(what string, said, found any) (bool, string, error) {
		return false, fmt.Sprintf("trailer says %s %v, the records %v", what, said, found), nil
	}
	switch {
	case t.recordsEnd != seg.size:
		return differ("records end at", t.recordsEnd, seg.size)
	case t.firstSeq != seg.firstSeq || t.prevHash != seg.prevHash:
		return differ("first seq", t.firstSeq, seg.firstSeq)
	case t.lastSeq != seg.lastSeq:
		return differ("last seq", t.lastSeq, seg.lastSeq)
	case t.lastHash != seg.lastHash:
		return differ("last hash", hex.EncodeToString(t.lastHash[:]), hex.EncodeToString(seg.lastHash[:]))
	case t.lastBatch != seg.lastBatch && !seg.empty():
		return differ("last batch", t.lastBatch, seg.lastBatch)
	case t.newest != seg.newest:
		return differ("newest time", t.newest, seg.newest)
	case !slices.Equal(t.kinds, seg.kinds):
		return differ("kinds", t.kinds, seg.kinds)
	case !slices.Equal(t.marks, seg.marks):
		return differ("index marks", len(t.marks), len(seg.marks))
	case !slices.Equal(runs, seg.runs):
		return differ("rounds", len(runs), len(seg.runs))
	}
	return true, "", nil
}
