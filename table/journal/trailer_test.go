package journal_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/simulators/disk"
	"github.com/livetable/livetable/table/journal"
)

// trailerJournal writes n records in segments of about 800 bytes and
// returns the directory, closed.
func trailerJournal(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	j, _ := open(t, journal.Options{Dir: dir, SegmentBytes: 800})
	appendN(t, j, 0, n)
	require.NoError(t, j.Close())
	return dir
}

// view is what a reader sees of a journal: the figures the controller and
// recall use.
type view struct {
	First, Last uint64
	Kinds       map[string]uint64
	Rounds      []journal.RoundSummary
	Round       []journal.Record
	Records     []journal.Record
	From        map[uint64][]journal.Record
}

func look(t *testing.T, j *journal.Journal) view {
	t.Helper()
	v := view{First: j.FirstSeq(), Last: j.LastSeq(), Kinds: map[string]uint64{}, From: map[uint64][]journal.Record{}}
	for _, k := range []string{"card", "decision", "none"} {
		v.Kinds[k] = j.LastOfKind(k)
	}
	v.Rounds = j.Rounds(1000)
	if len(v.Rounds) > 3 {
		var err error
		v.Round, err = j.Round(v.Rounds[3].Code)
		require.NoError(t, err)
	}
	v.Records = replayAll(t, j, 0)
	for _, from := range []uint64{v.Last/2 + 1, v.Last} {
		v.From[from] = replayAll(t, j, from)
	}
	return v
}

// lookAt opens dir read-only and looks at it.
func lookAt(t *testing.T, dir string) (view, journal.RecoveryReport) {
	t.Helper()
	j, rep, err := journal.Open(journal.Options{Dir: dir, ReadOnly: true}, zerolog.Nop())
	require.NoError(t, err)
	defer j.Close()
	return look(t, j), rep
}

// TestTrailerOpen: a journal whose sealed segments carry trailers opens
// from them (no segment read record by record) and gives every reader the
// same answers as the same journal without trailers, which Open checks
// record by record.
func TestTrailerOpen(t *testing.T) {
	dir := trailerJournal(t, 120)
	segs := segments(t, dir)
	require.Greater(t, len(segs), 5)
	old := copyDir(t, dir)
	stripTrailers(t, old)

	got, rep := lookAt(t, dir)
	assert.Empty(t, rep.Rescanned, "every sealed segment was taken from its trailer")
	want, oldRep := lookAt(t, old)
	assert.Len(t, oldRep.Rescanned, len(segs)-1, "without trailers, every sealed segment is checked record by record")
	assert.Equal(t, want, got)
	assert.Equal(t, wantRange(0, 120), got.Records)
	assert.Len(t, got.Rounds, 24)

	vr, err := journal.Verify(dir)
	require.NoError(t, err)
	assert.Equal(t, len(segs)-1, vr.Trailers)
	assert.Zero(t, vr.Untrailed)
	assert.Empty(t, vr.BadTrailers)
}

// TestTrailerUpgrade: a journal written before trailers opens, takes
// appends, and the segments it seals from then on carry trailers; Verify
// counts both kinds.
func TestTrailerUpgrade(t *testing.T) {
	dir := trailerJournal(t, 60)
	stripTrailers(t, dir)
	before := len(segments(t, dir))

	j, rep := open(t, journal.Options{Dir: dir, SegmentBytes: 800})
	assert.Len(t, rep.Rescanned, before-1)
	assert.Equal(t, []journal.Record(nil), replayAll(t, j, 61))
	appendN(t, j, 60, 120)
	assert.Len(t, j.Rounds(1000), 24, "the index joins the old segments' rounds and the new ones'")
	require.NoError(t, j.Close())

	vr, err := journal.Verify(dir)
	require.NoError(t, err)
	assert.Equal(t, before-1, vr.Untrailed)
	assert.Equal(t, len(segments(t, dir))-before, vr.Trailers)
	assert.Empty(t, vr.BadTrailers)

	j, rep = open(t, journal.Options{Dir: dir, SegmentBytes: 800})
	assert.Len(t, rep.Rescanned, before-1, "only the old segments are read record by record")
	assert.Equal(t, wantRange(0, 120), replayAll(t, j, 0))
	require.NoError(t, j.Close())
}

// simDir is where the journals of these tests live on the simulated disk.
const simDir = "/table/journal"

// simJournalImage writes n records in segments of about 800 bytes on a
// simulated disk and returns its image and the segment paths in order.
func simJournalImage(t *testing.T, n int) (disk.Image, []string) {
	t.Helper()
	d := disk.New(disk.Options{})
	j, _, err := journal.Open(journal.Options{Dir: simDir, FS: d, SegmentBytes: 800}, zerolog.Nop())
	require.NoError(t, err)
	appendN(t, j, 0, n)
	require.NoError(t, j.Close())
	img := d.Backup()
	var segs []string
	for p := range img.Files {
		if filepath.Ext(p) == ".ltj" {
			segs = append(segs, p)
		}
	}
	slices.Sort(segs)
	return img, segs
}

// withFile returns a disk holding img with path's bytes changed by fn
// (and path removed when fn returns nil).
func withFile(img disk.Image, path string, fn func([]byte) []byte) *disk.Disk {
	files := maps.Clone(img.Files)
	if b := fn(slices.Clone(files[path])); b != nil {
		files[path] = b
	} else {
		delete(files, path)
	}
	d := disk.New(disk.Options{})
	d.Restore(disk.Image{Files: files, Dirs: img.Dirs})
	return d
}

// lookOn opens the journal on d read-only and looks at it.
func lookOn(t *testing.T, d *disk.Disk) view {
	t.Helper()
	j, _, err := journal.Open(journal.Options{Dir: simDir, FS: d, ReadOnly: true}, zerolog.Nop())
	require.NoError(t, err)
	defer j.Close()
	return look(t, j)
}

// TestTrailerDamage damages the trailer of a sealed segment that another
// follows, at every byte (flipped, or the trailer cut there), on the
// simulated disk: Open never refuses, never trusts what is damaged (the
// segment is read record by record, or its rounds from its records), and
// answers as before; Verify names the trailer and finds no damaged record.
func TestTrailerDamage(t *testing.T) {
	img, segs := simJournalImage(t, 60)
	want := lookOn(t, withFile(img, segs[0], func(b []byte) []byte { return b }))
	b0 := img.Files[segs[0]]
	end := endOf(t, b0)
	require.Greater(t, len(b0), end)
	for at := end; at < len(b0); at++ {
		for _, cut := range []bool{false, true} {
			what := fmt.Sprintf("byte %d of the trailer, cut %v", at-end, cut)
			d := withFile(img, segs[0], func(b []byte) []byte {
				if cut {
					return b[:at]
				}
				b[at] ^= 0x10
				return b
			})
			require.Equal(t, want, lookOn(t, d), what)
			vr, err := journal.VerifyFS(d, simDir)
			require.NoError(t, err, what)
			if cut && at == end { // no trailer at all: a segment from before them
				require.Empty(t, vr.BadTrailers, what)
				require.Equal(t, 1, vr.Untrailed, what)
				continue
			}
			require.Len(t, vr.BadTrailers, 1, what)
			assert.Contains(t, vr.BadTrailers[0], filepath.Base(segs[0]), what)
		}
	}
}

// TestTrailerTornWhileSealing cuts the sealing of a segment at every byte
// of its trailer, on the simulated disk, as a power cut leaves it (the
// next segment never made it to disk): the trailer written up to there
// and nothing after, or the rest read back as zeros. Open keeps every
// record, cuts the trailer without an alarm once enough of it is there to
// tell it from a record (before that it reads as a torn write of a record
// never acknowledged), and the journal goes on and seals the segment
// again.
func TestTrailerTornWhileSealing(t *testing.T) {
	img, segs := simJournalImage(t, 30)
	require.GreaterOrEqual(t, len(segs), 3)
	sealed := segs[len(segs)-2]
	delete(img.Files, segs[len(segs)-1])
	b := img.Files[sealed]
	end, size := endOf(t, b), len(b)
	last := 0
	for _, s := range segs[:len(segs)-1] {
		last += len(framesOf(t, img.Files[s]))
	}
	for at := end; at <= size; at++ {
		for _, zeros := range []bool{false, true} {
			what := fmt.Sprintf("trailer cut at byte %d, zeros %v", at-end, zeros)
			d := withFile(img, sealed, func(b []byte) []byte {
				if zeros {
					clear(b[at:])
					return b
				}
				return b[:at]
			})
			j, rep, err := journal.Open(journal.Options{Dir: simDir, FS: d, SegmentBytes: 800}, zerolog.Nop())
			require.NoError(t, err, what)
			require.Equal(t, uint64(last), rep.LastSeq, what)
			switch {
			case at == size:
				assert.Nil(t, rep.Tail, what)
				assert.Empty(t, rep.TrailerCut, what)
			case at-end >= 4:
				assert.Nil(t, rep.Tail, what)
				assert.Equal(t, filepath.Base(sealed), rep.TrailerCut, what)
			case rep.Tail != nil:
				// Up to three bytes (or zeros) could be the start of a
				// record: reported as a torn write, whose record was
				// never acknowledged.
				assert.Equal(t, uint64(last+1), rep.Tail.Seq, "%s: no acknowledged record lost", what)
			}
			assert.Equal(t, wantRange(0, last), replayAll(t, j, 0), what)
			appendN(t, j, last, last+20)
			require.NoError(t, j.Close())
			vr, err := journal.VerifyFS(d, simDir)
			require.NoError(t, err, what)
			assert.Empty(t, vr.BadTrailers, what)
			assert.Equal(t, uint64(last+20), vr.LastSeq, what)
		}
	}
}

// TestSealingPowerCutOnSimulatedDisk cuts the power at every operation of
// a segment's sealing and of the next segment's creation (trailer write,
// its fsync, the new file, its header, fsyncs), on the simulated disk,
// with seeds that keep or drop and tear the unsynced writes: the journal
// always opens with every acknowledged record, goes on, and Verify finds
// no damage.
func TestSealingPowerCutOnSimulatedDisk(t *testing.T) {
	opts := func(d *disk.Disk) journal.Options {
		return journal.Options{Dir: simDir, FS: d, SegmentBytes: 1 << 10}
	}
	// A run without a cut finds the append that seals the first segment
	// and the operations it takes.
	d := disk.New(disk.Options{})
	j, _, err := journal.Open(opts(d), zerolog.Nop())
	require.NoError(t, err)
	sealing, before, after := -1, 0, 0
	for i := 0; sealing < 0; i++ {
		before = d.Ops()
		_, err := j.Append(rec(i))
		require.NoError(t, err)
		if j.Stats().Segments > 1 {
			sealing, after = i, d.Ops()
		}
	}
	require.NoError(t, j.Close())
	ops := after - before
	require.Greater(t, ops, 4, "a write and fsync of the batch, then the trailer's, then the new segment's")

	cuts := 0
	for seed := range uint64(24) {
		o := disk.Options{Seed: seed, KeepUnsynced: seed%4 != 0, TearZeros: seed%2 == 0}
		for at := 1; at <= ops; at++ {
			what := fmt.Sprintf("seed %d, cut at op %d of %d of the sealing", seed, at, ops)
			d := disk.New(o)
			j, _, err := journal.Open(opts(d), zerolog.Nop())
			require.NoError(t, err)
			appendN(t, j, 0, sealing)
			d.PowerCutAt(at)
			acked := sealing
			if _, err := j.Append(rec(sealing)); err == nil {
				acked++
			}
			_ = j.Close()
			require.True(t, d.IsCut(), what)
			cuts++
			d.Reboot()

			j, rep, err := journal.Open(opts(d), zerolog.Nop())
			require.NoError(t, err, what)
			require.GreaterOrEqual(t, rep.LastSeq, uint64(acked), "%s: acknowledged records lost", what)
			if rep.Tail != nil {
				require.Greater(t, rep.Tail.Seq, uint64(acked), "%s: a torn record was acknowledged", what)
			}
			kept := int(rep.LastSeq)
			require.Equal(t, wantRange(0, kept), replayAll(t, j, 0), what)
			appendN(t, j, kept, kept+40)
			require.NoError(t, j.Close())
			vr, err := journal.VerifyFS(d, simDir)
			require.NoError(t, err, what)
			require.Empty(t, vr.BadTrailers, what)
			require.Equal(t, uint64(kept+40), vr.LastSeq, what)
			require.Positive(t, vr.Trailers, what)
		}
	}
	t.Logf("%d power cuts during sealings", cuts)
}
