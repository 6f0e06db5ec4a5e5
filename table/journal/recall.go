package journal

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/livetable/livetable/table/vfs"
)

// reopenWindow is how many rounds back a round code may reappear and still
// extend its earlier round (a late record for the round just finished).
// Further back, the same code is a new round: game codes are start times
// (#HH:MM:SS) and repeat every day.
const reopenWindow = 8

// RoundSummary describes one round in the index, for `tablectl history`
// and the console.
type RoundSummary struct {
	// Code is the round id or game code the controller gave its records.
	Code string
	// FirstSeq and LastSeq bound the round's records. Records without a
	// round, or of the next round when a late record (a correction) came
	// in, may lie between them; Round leaves those out.
	FirstSeq, LastSeq uint64
	// Start and End are the host times of the first and last record.
	Start, End time.Time
	// Records counts the round's records.
	Records int
}

type roundEntry struct {
	code        string
	n           uint64 // position in the order of rounds, for reopenWindow
	first, last uint64
	start, end  int64
	records     int
}

// roundIndex maps round codes to seq ranges. Open builds it from the scan;
// the writer extends it on every commit. It holds a few dozen bytes per
// round, so 100,000 rounds cost a few megabytes.
type roundIndex struct {
	list   []*roundEntry // oldest first
	byCode map[string]*roundEntry
	count  uint64 // rounds ever added, including pruned ones
}

func (ix *roundIndex) current() *roundEntry {
	if len(ix.list) == 0 {
		return nil
	}
	return ix.list[len(ix.list)-1]
}

// roundRun is consecutive records of one round, as a scan finds them.
type roundRun struct {
	code        string
	first, last uint64
	start, end  int64
	records     int
}

func (r *roundRun) add(seq uint64, ns int64) {
	r.last = seq
	r.records++
	if ns != 0 && (r.start == 0 || ns < r.start) {
		r.start = ns
	}
	r.end = max(r.end, ns)
}

// addString indexes one record of round as it is committed.
func (ix *roundIndex) addString(round string, seq uint64, ns int64) {
	if round == "" {
		return
	}
	ix.addRun(roundRun{code: round, first: seq, last: seq, start: ns, end: ns, records: 1})
}

// addRun indexes consecutive records of one round. It extends the current
// round, or an earlier one with the same code within reopenWindow rounds,
// or starts a new round.
func (ix *roundIndex) addRun(r roundRun) {
	e := ix.current()
	if e == nil || e.code != r.code {
		e = ix.byCode[r.code]
		if e != nil && ix.count-e.n > reopenWindow {
			e = nil
		}
	}
	if e == nil {
		if ix.byCode == nil {
			ix.byCode = make(map[string]*roundEntry)
		}
		ix.count++
		e = &roundEntry{code: r.code, n: ix.count, first: r.first}
		ix.list = append(ix.list, e)
		ix.byCode[r.code] = e
	}
	e.last = r.last
	e.records += r.records
	if r.start != 0 && (e.start == 0 || r.start < e.start) {
		e.start = r.start
	}
	e.end = max(e.end, r.end)
}

// prune forgets rounds whose first record was deleted by retention.
func (ix *roundIndex) prune(firstSeq uint64) {
	i := 0
	for i < len(ix.list) && ix.list[i].first < firstSeq {
		e := ix.list[i]
		if ix.byCode[e.code] == e {
			delete(ix.byCode, e.code)
		}
		ix.list[i] = nil
		i++
	}
	ix.list = ix.list[i:]
}

func (e *roundEntry) summary() RoundSummary {
	return RoundSummary{Code: e.code, FirstSeq: e.first, LastSeq: e.last,
		Start: fromUnixNano(e.start), End: fromUnixNano(e.end), Records: e.records}
}

// Rounds returns up to n of the most recent rounds, newest first. Rounds
// whose first record was deleted by retention are not listed.
//
// The first call builds the index: it reads the rounds from the trailers
// of the sealed segments (and checks the segments without one), so it
// costs what Open saved.
func (j *Journal) Rounds(n int) []RoundSummary {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.ensureRoundsLocked(); err != nil {
		j.log.Error().Err(err).Msg("journal: cannot build the round index")
		return nil
	}
	list := j.rounds.list
	n = max(min(n, len(list)), 0)
	out := make([]RoundSummary, 0, n)
	for i := len(list) - 1; i >= len(list)-n; i-- {
		out = append(out, list[i].summary())
	}
	return out
}

// Round returns every record of the most recent round with this code, in
// seq order. It returns ErrNotFound for a code the index does not hold.
func (j *Journal) Round(code string) ([]Record, error) {
	j.mu.Lock()
	if err := j.ensureRoundsLocked(); err != nil {
		j.mu.Unlock()
		return nil, err
	}
	e := j.rounds.byCode[code]
	var first, last uint64
	if e != nil {
		first, last = e.first, e.last
	}
	j.mu.Unlock()
	if e == nil {
		return nil, fmt.Errorf("journal: round %q: %w", code, ErrNotFound)
	}
	var out []Record
	err := j.replay(first, last, func(r Record) error {
		if r.Round == code {
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ensureRoundsLocked builds the round index from the segments' rounds,
// oldest first, when it is not built yet. j.mu must be held; it reads
// files under it, once. A daemon never asks (recall goes through its own
// read-only journal), so its Open and its memory stay free of it.
func (j *Journal) ensureRoundsLocked() error {
	if j.roundsReady {
		return nil
	}
	var ix roundIndex
	for i, s := range j.segs {
		runs, err := j.segmentRuns(s)
		if err != nil {
			return err
		}
		for _, r := range runs {
			ix.addRun(r)
		}
		if i < len(j.segs)-1 {
			s.runs = nil // the index holds them; the active one's trailer needs its own
		}
	}
	j.rounds, j.roundsReady = ix, true
	return nil
}

// segmentRuns returns a segment's rounds: kept in memory, or read from its
// trailer, or, should that fail, from its records.
func (j *Journal) segmentRuns(s *segment) ([]roundRun, error) {
	if s.runs != nil || !s.sealed || s.trailer == nil || s.empty() {
		return s.runs, nil
	}
	path := filepath.Join(j.dir, s.name)
	f, err := vfs.Open(j.fs, path)
	if err != nil {
		return nil, fmt.Errorf("journal: open %s: %w", path, err)
	}
	runs, err := readRuns(f, s.trailer)
	f.Close()
	if err == nil {
		return runs, nil
	}
	if !errors.Is(err, errNoTrailer) {
		return nil, err
	}
	j.log.Warn().Err(err).Str("segment", s.name).Msg("journal: reading the rounds from the records")
	cp := *s
	res, _ := scanSegment(j.fs, j.dir, &cp, nil, newChainer(), true)
	if res.err != nil {
		return nil, res.err
	}
	if res.bad != nil {
		return nil, res.bad
	}
	return res.runs, nil
}

// kindIndex holds the last seq of each input kind. A table journals about
// ten kinds, so a slice searched in order beats a map and, fed from the
// read buffer, allocates only when a kind is first seen.
type kindIndex []kindLast

type kindLast struct {
	kind string
	seq  uint64
}

func (k *kindIndex) setBytes(kind []byte, seq uint64) {
	for i := range *k {
		if (*k)[i].kind == string(kind) {
			(*k)[i].seq = seq
			return
		}
	}
	*k = append(*k, kindLast{kind: string(kind), seq: seq})
}

func (k *kindIndex) set(kind string, seq uint64) {
	for i := range *k {
		if (*k)[i].kind == kind {
			(*k)[i].seq = seq
			return
		}
	}
	*k = append(*k, kindLast{kind: kind, seq: seq})
}

// LastOfKind returns the seq of the newest retained record of this kind,
// 0 when there is none. The controller uses it to replay only from the last
// shoe change instead of the whole journal.
func (j *Journal) LastOfKind(kind string) uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, k := range j.kinds {
		if k.kind == kind && k.seq >= j.segs[0].firstSeq {
			return k.seq
		}
	}
	return 0
}
