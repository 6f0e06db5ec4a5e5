package journal_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/journal"
)

// salvageRecords is how many records the salvage tests write, and
// salvageCheckpoint the index of the one record of the anchor kind.
const (
	salvageRecords    = 40
	salvageCheckpoint = 30
	anchor            = "ck"
)

func salvageRec(i int) journal.Record {
	r := rec(i)
	if i == salvageCheckpoint {
		r.Kind = anchor
	}
	return r
}

// firstSeqOf is the first seq of a segment file, from its name.
func firstSeqOf(t *testing.T, path string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(path), ".ltj"), 10, 64)
	require.NoError(t, err)
	return n
}

// TestSalvage: a journal damaged anywhere but at its tail (a record's
// bit flipped, a segment lost or its header damaged) is refused by Open
// with no way back but an older backup. Salvage moves aside what it
// cannot keep (never deletes it) so that Open works again: the segments
// up to the damage when the whole chain after it holds a checkpoint (the
// table's state and numbers lose nothing), or else everything from the
// damage on.
func TestSalvage(t *testing.T) {
	flip := func(seg, record int) func(t *testing.T, segs []string) {
		return func(t *testing.T, segs []string) {
			off := frames(t, segs[seg])[record].off
			mutate(t, segs[seg], func(b []byte) []byte { b[off+frameHeader+20] ^= 0x10; return b })
		}
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, segs []string)
		anchor string
		// head: the segments before index from go (from the damaged one
		// on otherwise, the damaged one cut at the damage).
		head bool
		from int
		// cutRecord: for a cut, the record of the damaged segment the cut is at.
		cutRecord int
	}{
		{name: "bit flipped in a sealed segment, a checkpoint after it", damage: flip(1, 2), anchor: anchor, head: true, from: 2},
		{name: "segment lost in the middle", damage: func(t *testing.T, segs []string) { require.NoError(t, os.Remove(segs[2])) }, anchor: anchor, head: true, from: 3},
		{name: "header of a middle segment damaged", damage: func(t *testing.T, segs []string) {
			mutate(t, segs[2], func(b []byte) []byte { b[20] ^= 1; return b })
		}, anchor: anchor, head: true, from: 3},
		{name: "two damaged segments, a checkpoint after both", damage: func(t *testing.T, segs []string) {
			flip(0, 1)(t, segs)
			flip(2, 1)(t, segs)
		}, anchor: anchor, head: true, from: 3},
		{name: "bit flipped with no checkpoint after it: cut there", damage: flip(1, 2), anchor: "", from: 1, cutRecord: 2},
		{name: "bit flipped in the checkpoint's segment: cut there", damage: flip(-1, 0), anchor: anchor, from: -1},
		{name: "segment lost, no checkpoint after it: the rest goes", damage: func(t *testing.T, segs []string) { require.NoError(t, os.Remove(segs[2])) }, anchor: "", from: 2, cutRecord: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			j, _ := open(t, journal.Options{Dir: dir, SegmentBytes: 800})
			for i := range salvageRecords {
				_, err := j.Append(salvageRec(i))
				require.NoError(t, err)
			}
			require.NoError(t, j.Close())
			segs := segments(t, dir)
			require.GreaterOrEqual(t, len(segs), 6)
			ckSeg := len(segs) - 1
			for ckSeg > 0 && firstSeqOf(t, segs[ckSeg]) > salvageCheckpoint+1 {
				ckSeg--
			}
			require.GreaterOrEqual(t, ckSeg, 4, "the checkpoint must lie after the damaged segments")
			cutRecord := tc.cutRecord
			if strings.Contains(tc.name, "checkpoint's segment") {
				// The checkpoint's record itself is damaged: there is
				// none left after the damage.
				cutRecord = int(salvageCheckpoint + 1 - firstSeqOf(t, segs[ckSeg]))
				off := frames(t, segs[ckSeg])[cutRecord].off
				mutate(t, segs[ckSeg], func(b []byte) []byte { b[off+frameHeader+20] ^= 0x10; return b })
			} else {
				tc.damage(t, segs)
			}
			from := tc.from
			if from < 0 {
				from = ckSeg
			}
			originals := map[string][]byte{}
			for _, p := range segments(t, dir) {
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				originals[filepath.Base(p)] = b
			}
			// Open refuses it, or, for a sealed segment it takes from its
			// trailer, a replay or a recall through it does; Verify finds it.
			_, err := journal.Verify(dir)
			require.ErrorIs(t, err, journal.ErrCorrupt, "the damaged journal")

			q := filepath.Join(t.TempDir(), "quarantine")
			rep, err := journal.Salvage(nil, dir, q, tc.anchor)
			require.NoError(t, err)
			require.NotNil(t, rep.Damage)
			assert.Equal(t, tc.head, rep.HeadDropped)

			// Nothing is deleted: what left the journal is in quarantine whole.
			for _, name := range append(rep.Moved, rep.Cut) {
				if name == "" {
					continue
				}
				b, err := os.ReadFile(filepath.Join(q, name))
				require.NoError(t, err, "%s in quarantine", name)
				assert.Equal(t, originals[name], b, "%s moved as it was", name)
			}

			j, orep, err := journal.Open(journal.Options{Dir: dir, AnchorKind: tc.anchor}, testLog(t))
			require.NoError(t, err, "Open works after the salvage")
			defer j.Close()
			assert.Nil(t, orep.Tail)
			got := replayAll(t, j, 0)
			require.NotEmpty(t, got)
			var wantFirst, wantLast int
			if tc.head {
				wantFirst, wantLast = int(firstSeqOf(t, segs[from]))-1, salvageRecords
				assert.Equal(t, uint64(salvageRecords), orep.LastSeq, "nothing after the damage is lost")
				assert.Equal(t, uint64(salvageCheckpoint+1), j.LastOfKind(anchor), "the checkpoint is there")
			} else {
				wantFirst = 0
				wantLast = int(firstSeqOf(t, segs[from])) - 1 // records before the damaged segment
				if cutRecord >= 0 {
					wantLast += cutRecord
					assert.Equal(t, filepath.Base(segs[from]), rep.Cut)
				}
			}
			for i := range got {
				w := salvageRec(wantFirst + i)
				w.Seq = uint64(wantFirst + i + 1)
				require.Equal(t, w, got[i])
			}
			assert.Equal(t, wantLast-wantFirst, len(got))
			assert.Equal(t, uint64(wantLast), rep.LastSeq)
			_, err = journal.Verify(dir)
			require.NoError(t, err, "the salvaged journal verifies")
			// It takes appends again, chained on.
			seq, err := j.Append(salvageRec(wantLast))
			require.NoError(t, err)
			assert.Equal(t, uint64(wantLast+1), seq)
		})
	}
}

// TestSalvageLeavesAloneWhatOpenRepairs: a whole journal, or one with a
// torn tail (Open cuts it), is not touched; nor one a daemon holds.
func TestSalvageLeavesAloneWhatOpenRepairs(t *testing.T) {
	dir := t.TempDir()
	j, _ := open(t, journal.Options{Dir: dir, SegmentBytes: 800})
	appendN(t, j, 0, 20)

	_, err := journal.Salvage(nil, dir, filepath.Join(t.TempDir(), "q"), anchor)
	require.ErrorIs(t, err, journal.ErrLocked, "a running daemon's journal")
	require.NoError(t, j.Close())

	_, err = journal.Salvage(nil, dir, filepath.Join(t.TempDir(), "q"), anchor)
	require.ErrorIs(t, err, journal.ErrNothingToSalvage)

	segs := segments(t, dir)
	last := segs[len(segs)-1]
	mutate(t, last, func(b []byte) []byte { return b[:len(b)-7] })
	before := copyDir(t, dir)
	q := filepath.Join(t.TempDir(), "q")
	rep, err := journal.Salvage(nil, dir, q, anchor)
	require.True(t, errors.Is(err, journal.ErrNothingToSalvage), "%v", err)
	assert.True(t, rep.TornTail)
	sameFiles(t, before, dir)
	_, err = os.Stat(q)
	assert.True(t, os.IsNotExist(err), "no quarantine made")
}
