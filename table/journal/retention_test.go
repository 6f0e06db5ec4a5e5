package journal_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/journal"
)

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	opts := journal.Options{Dir: dir, SegmentBytes: 1000}
	j, _ := open(t, opts)
	appendN(t, j, 0, 100)
	segs := segments(t, dir)
	require.Greater(t, len(segs), 5)
	// Each segment is named after its first seq and holds whole records,
	// closed at the first batch boundary past SegmentBytes.
	next := uint64(1)
	for _, p := range segs {
		assert.Equal(t, segmentFile(next), filepath.Base(p))
		fr := frames(t, p)
		next += uint64(len(fr))
		if p != segs[len(segs)-1] {
			assert.GreaterOrEqual(t, recordsEnd(t, p), opts.SegmentBytes)
			assert.Less(t, recordsEnd(t, p)-frameSize(0)-10, opts.SegmentBytes)
			assert.Greater(t, fileSize(t, p), recordsEnd(t, p), "a sealed segment ends with its trailer")
		}
	}
	assert.Equal(t, uint64(101), next)
	assert.Equal(t, wantRange(0, 100), replayAll(t, j, 0))
	assert.Equal(t, wantRange(41, 100), replayAll(t, j, 42), "replay from inside a middle segment")
	require.NoError(t, j.Close())

	vr, err := journal.Verify(dir)
	require.NoError(t, err)
	assert.Equal(t, len(segs)-1, vr.Trailers, "every sealed segment has a trailer that matches its records")
	assert.Empty(t, vr.BadTrailers)
	assert.Equal(t, len(segs), vr.Segments)
	assert.Equal(t, uint64(100), vr.Records)
	assert.Equal(t, "0000000000000000000000000000000000000000000000000000000000000000", vr.Anchor)
}

func segmentFile(first uint64) string { return fmt.Sprintf("%020d.ltj", first) }

func TestRetentionBySize(t *testing.T) {
	dir := t.TempDir()
	opts := journal.Options{Dir: dir, SegmentBytes: 1000, MaxBytes: 3000}
	j, _ := open(t, opts)
	appendN(t, j, 0, 200)
	var total int64
	for _, p := range segments(t, dir) {
		total += fileSize(t, p)
	}
	assert.LessOrEqual(t, total, opts.MaxBytes)
	first := j.FirstSeq()
	require.Greater(t, first, uint64(1))
	assert.Equal(t, segmentFile(first), filepath.Base(segments(t, dir)[0]))
	assert.Equal(t, wantRange(int(first-1), 200), replayAll(t, j, 0), "replay starts at the oldest retained record")
	for _, r := range j.Rounds(1000) {
		assert.GreaterOrEqual(t, r.FirstSeq, first, "rounds cut by retention are forgotten")
	}
	require.NoError(t, j.Close())

	// The chain still verifies from the retained anchor, and a reopen
	// keeps counting.
	vr, err := journal.Verify(dir)
	require.NoError(t, err)
	assert.Equal(t, first, vr.FirstSeq)
	assert.NotEqual(t, "0000000000000000000000000000000000000000000000000000000000000000", vr.Anchor)
	j, rep := open(t, opts)
	assert.Equal(t, first, rep.FirstSeq)
	assert.Equal(t, uint64(200), rep.LastSeq)
	appendN(t, j, 200, 201)
}

func TestRetentionByAge(t *testing.T) {
	// Records one hour apart in record time; segments whose newest record
	// is more than a day older than the newest record go.
	dir := t.TempDir()
	opts := journal.Options{Dir: dir, SegmentBytes: 500, MaxAge: 24 * time.Hour}
	j, _ := open(t, opts)
	at := func(i int) journal.Record {
		r := rec(i)
		r.Time = base.Add(time.Duration(i) * time.Hour)
		return r
	}
	for i := range 100 {
		_, err := j.Append(at(i))
		require.NoError(t, err)
	}
	got := replayAll(t, j, 0)
	require.NotEmpty(t, got)
	newest := at(99).Time
	oldestKept := got[0].Time
	assert.Greater(t, got[0].Seq, uint64(1))
	assert.LessOrEqual(t, newest.Sub(oldestKept), 24*time.Hour+10*time.Hour,
		"only the segment straddling the limit keeps older records")
	require.NoError(t, j.Close())

	// Retention also runs at Open: with a shorter limit, more goes.
	opts.MaxAge = 5 * time.Hour
	j, rep := open(t, opts)
	assert.NotEmpty(t, rep.Retired)
	assert.Greater(t, j.FirstSeq(), got[0].Seq)
}

func TestRetentionWaitsForReplay(t *testing.T) {
	dir := t.TempDir()
	j, _ := open(t, journal.Options{Dir: dir, SegmentBytes: 600, MaxBytes: 1500})
	appendN(t, j, 0, 10)
	first := j.FirstSeq()
	var seen []uint64
	err := j.Replay(0, func(r journal.Record) error {
		if r.Seq == first {
			// Appending while the replay reads rotates and would delete
			// the segment being read; retention waits.
			for i := 10; i < 40; i++ {
				if _, err := j.Append(rec(i)); err != nil {
					return err
				}
			}
		}
		seen = append(seen, r.Seq)
		return nil
	})
	require.NoError(t, err)
	assert.Len(t, seen, int(10-first+1), "the replay covers what was durable when it started")
	// The next rotation catches up.
	appendN(t, j, 40, 60)
	assert.Greater(t, j.FirstSeq(), uint64(10))
}

// TestRetentionKeepsAnchor: with an anchor kind, size limits never delete
// the segment holding the newest anchor or anything after it, and nothing
// at all goes before the first anchor: the caller replays from an anchor.
func TestRetentionKeepsAnchor(t *testing.T) {
	anchor := func(i int) journal.Record {
		r := rec(i)
		r.Kind, r.Data = "checkpoint", []byte(fmt.Sprintf(`{"kind":"checkpoint","data":{"n":%d}}`, i))
		return r
	}
	tests := []struct {
		name      string
		anchors   []int // record indexes written as anchors
		wantFirst func(t *testing.T, first uint64, anchorSeqs []uint64)
	}{
		{"no anchor: nothing deleted", nil, func(t *testing.T, first uint64, _ []uint64) {
			assert.Equal(t, uint64(1), first)
		}},
		{"one early anchor: kept", []int{5}, func(t *testing.T, first uint64, a []uint64) {
			assert.LessOrEqual(t, first, a[0])
		}},
		{"anchors along the way: cut up to the newest", []int{5, 60, 120, 170}, func(t *testing.T, first uint64, a []uint64) {
			assert.LessOrEqual(t, first, a[3], "the newest anchor is retained")
			assert.Greater(t, first, a[1], "segments before the newest anchor went")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := journal.Options{Dir: dir, SegmentBytes: 1000, MaxBytes: 3000, AnchorKind: "checkpoint"}
			j, _ := open(t, opts)
			var seqs []uint64
			for i := range 200 {
				r := rec(i)
				if slices.Contains(tc.anchors, i) {
					r = anchor(i)
				}
				seq, err := j.Append(r)
				require.NoError(t, err)
				if r.Kind == "checkpoint" {
					seqs = append(seqs, seq)
				}
			}
			tc.wantFirst(t, j.FirstSeq(), seqs)
			if len(seqs) > 0 {
				assert.Equal(t, seqs[len(seqs)-1], j.LastOfKind("checkpoint"))
			}
			require.NoError(t, j.Close())
			// Retention at Open keeps the same rule.
			j, _ = open(t, opts)
			tc.wantFirst(t, j.FirstSeq(), seqs)
		})
	}
}

// TestRetentionByAgeAfterAClockStep: a wall clock stepped forward a year
// for a moment, then corrected, left two records a year ahead; measured
// from the newest record of all, every later seal retired each segment
// before the newest checkpoint as a year old. Ages are measured from the
// last record's time.
func TestRetentionByAgeAfterAClockStep(t *testing.T) {
	dir := t.TempDir()
	opts := journal.Options{Dir: dir, SegmentBytes: 500, MaxAge: 24 * time.Hour}
	j, _ := open(t, opts)
	for i := range 100 {
		r := rec(i)
		r.Time = base.Add(time.Duration(i) * time.Minute)
		if i == 29 || i == 30 { // inside a segment (4 records each): the seal after them has the corrected time
			r.Time = r.Time.Add(365 * 24 * time.Hour) // the step, then its correction
		}
		_, err := j.Append(r)
		require.NoError(t, err)
	}
	assert.Equal(t, uint64(1), j.FirstSeq(), "nothing is a day old")
	require.NoError(t, j.Close())
	j, rep := open(t, opts)
	assert.Empty(t, rep.Retired, "nor at Open")
	assert.Equal(t, uint64(1), j.FirstSeq())
}

// TestRetentionWhileTheClockIsAhead: the host's wall clock is a year
// ahead (a box that booted with a wrong date, an NTP server gone mad)
// and corrected back later. Neither a segment sealed while it is ahead,
// nor an Open while it is ahead over a journal written before, nor an
// Open after the correction over records stamped a year ahead, retires a
// segment the age limit keeps: ages are measured on the monotonic clock
// past the newest record time the journal had at Open, and never from a
// time ahead of the clock at Open. (An Open while the clock is still
// ahead over records a previous run stamped ahead cannot tell the step
// from time the table was stopped: docs/deploy.md, Time.)
//
// Each run of the journal has a fake clock of its own, as a process has
// a monotonic clock of its own; a step of the wall clock within a run is
// an offset on the records' times (the clock measures monotonic time).
func TestRetentionWhileTheClockIsAhead(t *testing.T) {
	const year = 365 * 24 * time.Hour
	run := func(dir string, wall time.Time) (*journal.Journal, journal.RecoveryReport, *clockwork.FakeClock) {
		clk := clockwork.NewFakeClockAt(wall)
		j, rep := open(t, journal.Options{Dir: dir, SegmentBytes: 500, MaxAge: 24 * time.Hour, Clock: clk})
		return j, rep, clk
	}
	write := func(j *journal.Journal, clk *clockwork.FakeClock, from, to int, step, every time.Duration) {
		for i := from; i < to; i++ {
			r := rec(i)
			r.Time = clk.Now().Add(step)
			_, err := j.Append(r)
			require.NoError(t, err)
			clk.Advance(every)
		}
	}

	dir := t.TempDir()
	j, _, clk := run(dir, base)
	write(j, clk, 0, 60, 0, time.Minute) // an hour of honest records
	require.Greater(t, len(segments(t, dir)), 3)
	// The wall clock steps a year ahead; the table writes on, and
	// segments are sealed while it is ahead.
	write(j, clk, 60, 80, year, time.Minute)
	assert.Equal(t, uint64(1), j.FirstSeq(), "a seal while the clock is ahead retires nothing a day old")
	require.NoError(t, j.Close())

	// NTP corrects it back; the table restarts and writes on.
	j, rep, clk := run(dir, clk.Now())
	assert.Empty(t, rep.Retired, "nor an Open after the correction")
	write(j, clk, 80, 100, 0, time.Minute)
	assert.Equal(t, uint64(1), j.FirstSeq(), "nor the seals after it")
	require.NoError(t, j.Close())

	// A table booted with its clock ahead over an honest journal.
	dir = t.TempDir()
	j, _, clk = run(dir, base)
	write(j, clk, 0, 40, 0, time.Minute)
	require.NoError(t, j.Close())
	j, rep, clk = run(dir, clk.Now().Add(year))
	assert.Empty(t, rep.Retired, "an Open with the clock ahead")
	write(j, clk, 40, 60, 0, time.Minute)
	assert.Equal(t, uint64(1), j.FirstSeq(), "the seals after it")
	// Real time passes: a day and more of running past the newest honest
	// record retires the old segments as the policy says.
	write(j, clk, 60, 100, 0, time.Hour)
	assert.Greater(t, j.FirstSeq(), uint64(1), "ages still count on the monotonic clock")
}

// TestRetentionAfterARunWithTheClockAhead: a box's battery clock came
// back three days ahead after a power cut, and the table ran on it,
// stamping its records three days ahead; then NTP set the clock right
// and tabled restarted. Open says so (RecoveryReport.Ahead, a warning
// in the log) and retires nothing; the honest segments before the run
// still age out as the clock passes them; the segments stamped ahead
// (and those after them: only whole segments go, oldest first) are
// kept until the clock passes their stamps by MaxAge, never sooner,
// and then go: retention works again without anyone's help. At no
// point is a record younger than MaxAge (in time that really passed)
// deleted.
func TestRetentionAfterARunWithTheClockAhead(t *testing.T) {
	const (
		day    = 24 * time.Hour
		maxAge = day
		step   = 3 * day
	)
	dir := t.TempDir()
	var logs syncBuffer
	run := func(wall time.Time) (*journal.Journal, journal.RecoveryReport, *clockwork.FakeClock) {
		clk := clockwork.NewFakeClockAt(wall)
		log := zerolog.New(&logs).Level(zerolog.WarnLevel)
		j, rep, err := journal.Open(journal.Options{Dir: dir, SegmentBytes: 500, MaxAge: maxAge, Clock: clk}, log)
		require.NoError(t, err)
		t.Cleanup(func() { _ = j.Close() })
		return j, rep, clk
	}
	// real is the true time of each record, by seq; the record's own
	// time is the clock's, ahead or not.
	real := map[uint64]time.Time{}
	write := func(j *journal.Journal, clk *clockwork.FakeClock, from, to int, ahead, every time.Duration) {
		for i := from; i < to; i++ {
			r := rec(i)
			r.Time = clk.Now()
			seq, err := j.Append(r)
			require.NoError(t, err)
			real[seq] = clk.Now().Add(-ahead)
			clk.Advance(every)
		}
	}
	// kept checks that every record younger than maxAge at the true
	// time now is still in the journal.
	kept := func(j *journal.Journal, now time.Time, what string) {
		t.Helper()
		for seq, at := range real {
			if now.Sub(at) < maxAge {
				assert.GreaterOrEqual(t, seq, j.FirstSeq(), "%s: seq %d, %s old, was deleted", what, seq, now.Sub(at))
			}
		}
	}

	// An honest day's start: a record every half hour for 20 hours.
	j, rep, clk := run(base)
	assert.Zero(t, rep.Ahead)
	write(j, clk, 0, 40, 0, 30*time.Minute)
	honestEnd := clk.Now()
	require.NoError(t, j.Close())

	// The power cut; the box comes back with its clock three days ahead
	// and the table plays 20 minutes on it.
	j, rep, clk = run(honestEnd.Add(step))
	assert.Empty(t, rep.Retired, "an Open with the clock ahead over an honest journal")
	assert.Zero(t, rep.Ahead)
	write(j, clk, 40, 60, step, time.Minute)
	assert.Equal(t, uint64(1), j.FirstSeq(), "nothing retired while it runs ahead")
	aheadLast := j.LastSeq()
	require.NoError(t, j.Close())

	// NTP sets the clock right; tabled restarts.
	now := clk.Now().Add(-step)
	logs.Reset()
	j, rep, clk = run(now)
	assert.Empty(t, rep.Retired, "nor an Open after the correction")
	assert.InDelta(t, float64(step), float64(rep.Ahead), float64(time.Minute), "Open reports how far ahead the records are")
	assert.Contains(t, logs.String(), "records are stamped ahead of the clock", "and warns")
	assert.Contains(t, logs.String(), `"level":"warn"`)
	kept(j, now, "at the Open after the correction")

	// A day and a half of honest play, a record an hour: the first
	// run's segments age out as ever, the ones stamped ahead stay.
	write(j, clk, 60, 96, 0, time.Hour)
	assert.Greater(t, j.FirstSeq(), uint64(1), "the honest segments before the run ahead still age out")
	assert.LessOrEqual(t, j.FirstSeq(), uint64(41), "the records stamped ahead are all kept")
	kept(j, clk.Now(), "a day and a half after")

	// Past their stamps by more than maxAge (three days and more of
	// play): they go, and retention keeps its limit again.
	write(j, clk, 96, 96+5*24, 0, time.Hour)
	assert.Greater(t, j.FirstSeq(), aheadLast, "retention takes the segments stamped ahead once the clock passes them by max_age")
	kept(j, clk.Now(), "five days after")
	recs := replayAll(t, j, 0)
	assert.Less(t, clk.Now().Sub(recs[0].Time), maxAge+12*time.Hour, "and keeps about max_age again")
	require.NoError(t, j.Close())

	// The next Open, the records ahead gone, warns no more.
	logs.Reset()
	_, rep, _ = run(clk.Now())
	assert.Zero(t, rep.Ahead)
	assert.NotContains(t, logs.String(), "ahead of the clock")
}

// syncBuffer is a bytes.Buffer the journal's goroutines may log to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}
