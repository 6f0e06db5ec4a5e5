package journal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/livetable/livetable/table/vfs"
)

// SalvageReport says what Salvage found and did.
type SalvageReport struct {
	// Damage is the first problem Verify finds; nil when the journal is
	// whole (Salvage then changes nothing).
	Damage *CorruptError
	// TornTail is set when the only damage is a torn tail, which Open
	// cuts by itself: Salvage changes nothing.
	TornTail bool
	// HeadDropped is set when the segments up to the damage were moved
	// aside and the journal now starts at a later segment, which holds a
	// checkpoint (the anchor kind): nothing the table rebuilds its state
	// and numbers from is lost, only older rounds. Otherwise the journal
	// was cut at the damage and everything after it moved aside.
	HeadDropped bool
	// Moved lists the segment files moved whole into the quarantine
	// directory.
	Moved []string
	// Cut is the segment cut at the damage ("" when none): its whole
	// original is in the quarantine directory, the journal keeps its
	// records before CutAt.
	Cut   string
	CutAt int64
	// FirstSeq and LastSeq bound the records the journal holds now.
	FirstSeq, LastSeq uint64
	// Quarantine is the directory the damaged part went to.
	Quarantine string
}

// ErrNothingToSalvage is returned by Salvage for a journal whose only
// damage, if any, is what Open repairs by itself (a torn tail).
var ErrNothingToSalvage = errors.New("journal: nothing to salvage")

// Salvage makes a damaged journal open again, moving what it cannot keep
// into quarantine (a new directory, outside dir) rather than deleting it.
// Open refuses a journal damaged anywhere but at its tail (a bad record,
// a missing or damaged segment: bit rot, a disk error, a file lost by an
// operator) with a *CorruptError; without this the only way back to a
// dealing table was an older backup, which loses more.
//
// When every segment after the damage links into a whole chain that
// holds a record of anchorKind (the controller's checkpoint), the
// segments up to the damage are moved aside: the journal then starts at
// that chain (as after retention), and the table's state and numbers,
// rebuilt from its newest checkpoint, lose nothing. Otherwise the journal
// is cut at the first damage: the damaged segment keeps its records
// before it, and it and every later segment go to quarantine whole; the
// events after the cut are lost, and the daemon's continuity check then
// refuses to start until an operator accepts the loss (table/continuity).
// Salvage takes the journal's lock: it refuses while a daemon holds it.
func Salvage(fsys vfs.FS, dir, quarantine, anchorKind string) (SalvageReport, error) {
	fsys = vfs.OrOS(fsys)
	rep := SalvageReport{Quarantine: quarantine}
	lock, err := fsys.Lock(filepath.Join(dir, "LOCK"))
	if err != nil {
		if errors.Is(err, vfs.ErrLocked) {
			return rep, fmt.Errorf("journal: lock %s: %w", dir, ErrLocked)
		}
		return rep, fmt.Errorf("journal: %w", err)
	}
	defer lock.Close()
	vrep, err := VerifyFS(fsys, dir)
	if err == nil {
		return rep, ErrNothingToSalvage
	}
	if vrep.Bad == nil {
		return rep, err // an I/O error
	}
	rep.Damage = vrep.Bad
	if vrep.Bad.Tail {
		rep.TornTail = true
		return rep, ErrNothingToSalvage
	}
	segs, err := listSegments(fsys, dir)
	if err != nil {
		return rep, err
	}
	bad := indexOf(segs, vrep.Bad.Segment)
	if bad < 0 {
		return rep, fmt.Errorf("journal: salvage: damaged segment %s not found", vrep.Bad.Segment)
	}
	if k, ok, err := wholeSuffix(fsys, dir, bad, vrep.Bad.Offset, anchorKind); err != nil {
		return rep, err
	} else if ok {
		rep.HeadDropped = true
		if err := moveAside(fsys, dir, quarantine, segs[:k], &rep); err != nil {
			return rep, err
		}
	} else {
		if err := moveAside(fsys, dir, quarantine, segs[bad+1:], &rep); err != nil {
			return rep, err
		}
		if err := cutSegment(fsys, dir, quarantine, segs[bad].name, vrep.Bad.Offset, &rep); err != nil {
			return rep, err
		}
	}
	after, err := VerifyFS(fsys, dir)
	if err != nil && (after.Bad == nil || !after.Bad.Tail) {
		return rep, fmt.Errorf("journal: salvage left a journal that does not verify: %w", err)
	}
	rep.FirstSeq, rep.LastSeq = after.FirstSeq, after.LastSeq
	return rep, nil
}

func indexOf(segs []*segment, name string) int {
	for i, s := range segs {
		if s.name == name {
			return i
		}
	}
	return -1
}

// wholeSuffix finds the first segment k after the damage (segment bad,
// at offset off: 0 when the damage is in how the segment follows the one
// before, which leaves the segment itself possibly whole) from which
// every segment links into a whole chain (a torn tail, which Open cuts,
// allowed) holding a record of anchorKind.
func wholeSuffix(fsys vfs.FS, dir string, bad int, off int64, anchorKind string) (int, bool, error) {
	if anchorKind == "" {
		return 0, false, nil
	}
	k := bad + 1
	if off == 0 {
		k = bad
	}
	for {
		segs, err := listSegments(fsys, dir)
		if err != nil {
			return 0, false, err
		}
		if k >= len(segs) {
			return 0, false, nil
		}
		suffix := segs[k:]
		check, err := checkSegments(fsys, dir, suffix, false)
		if err != nil {
			return 0, false, err
		}
		if b := check.bad; b != nil {
			last := check.badIndex == len(suffix)-1
			tail := false
			if last && frameProblem(b.Problem) {
				seg := suffix[check.badIndex]
				if tail, _, err = isTail(fsys, filepath.Join(dir, seg.name), seg, b.Offset); err != nil {
					return 0, false, err
				}
			}
			if !tail {
				// Damaged again further on: a chain can start only after it.
				// A segment found at offset 0 after the first may be whole
				// (it is how it follows the one before that is wrong); the
				// first one's own header is what is damaged then.
				next := k + check.badIndex + 1
				if b.Offset == 0 && check.badIndex > 0 {
					next--
				}
				k = next
				continue
			}
		}
		for _, s := range suffix {
			for _, kl := range s.kinds {
				if kl.kind == anchorKind {
					return k, true, nil
				}
			}
		}
		return 0, false, nil
	}
}

// moveAside moves segs whole into the quarantine directory.
func moveAside(fsys vfs.FS, dir, quarantine string, segs []*segment, rep *SalvageReport) error {
	if len(segs) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(quarantine, 0o750); err != nil {
		return fmt.Errorf("journal: salvage: %w", err)
	}
	for _, s := range segs {
		if err := fsys.Rename(filepath.Join(dir, s.name), filepath.Join(quarantine, s.name)); err != nil {
			return fmt.Errorf("journal: salvage: %w", err)
		}
		rep.Moved = append(rep.Moved, s.name)
	}
	if err := syncDir(fsys, quarantine); err != nil {
		return err
	}
	return syncDir(fsys, dir)
}

// cutSegment keeps name's bytes before off in the journal (a new file,
// fsync'd) and moves the whole original into the quarantine directory;
// with off 0 (a damaged header, or a segment that does not follow the
// one before) the whole segment goes.
func cutSegment(fsys vfs.FS, dir, quarantine, name string, off int64, rep *SalvageReport) error {
	if err := fsys.MkdirAll(quarantine, 0o750); err != nil {
		return fmt.Errorf("journal: salvage: %w", err)
	}
	path := filepath.Join(dir, name)
	if off > 0 {
		// A power cut at any point leaves the journal with the segment
		// whole or cut, never without it: the original is copied aside
		// first, and the cut one replaces it by a rename.
		fi, err := fsys.Stat(path)
		if err != nil {
			return fmt.Errorf("journal: salvage: %w", err)
		}
		if err := copyPrefix(fsys, path, filepath.Join(quarantine, name), fi.Size()); err != nil {
			return err
		}
		if err := syncDir(fsys, quarantine); err != nil {
			return err
		}
		tmp := path + ".salvage"
		if err := copyPrefix(fsys, path, tmp, off); err != nil {
			return err
		}
		if err := fsys.Rename(tmp, path); err != nil {
			return fmt.Errorf("journal: salvage: %w", err)
		}
		rep.Cut, rep.CutAt = name, off
	} else {
		if err := fsys.Rename(path, filepath.Join(quarantine, name)); err != nil {
			return fmt.Errorf("journal: salvage: %w", err)
		}
		rep.Moved = append(rep.Moved, name)
	}
	if err := syncDir(fsys, quarantine); err != nil {
		return err
	}
	return syncDir(fsys, dir)
}

// copyPrefix writes src's first n bytes to a new file dst, fsync'd.
func copyPrefix(fsys vfs.FS, src, dst string, n int64) error {
	in, err := vfs.Open(fsys, src)
	if err != nil {
		return fmt.Errorf("journal: salvage: %w", err)
	}
	defer in.Close()
	out, err := fsys.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return fmt.Errorf("journal: salvage: %w", err)
	}
	if _, err := io.Copy(out, io.NewSectionReader(in, 0, n)); err != nil {
		_ = out.Close()
		return fmt.Errorf("journal: salvage: copy %s: %w", src, err)
	}
	if err := out.Sync(); err != nil {
		_ = out.Close()
		return fmt.Errorf("journal: salvage: %w", err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("journal: salvage: %w", err)
	}
	return nil
}
