package table

import (
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"
)

// This file reads the journal for the machine: where a replay starts
// (checkpoints) and the replay itself, the one code path of a restart, a
// rebuild, game recall and the resend of lost events.

// ErrNoCheckpoint is returned when the journal's first records are gone
// (retention without checkpoints, or files deleted by hand) and no
// checkpoint follows: the table's state cannot be rebuilt.
var ErrNoCheckpoint = errors.New("table: journal has no checkpoint")

// replayResult is what a replay read.
type replayResult struct {
	inputs, skipped int
	last            time.Time // the last record's time
	// unmarked is set when the newest checkpoint replayed is not followed
	// by a rules_epoch record (Controller.writeCheckpoint writes one
	// right after it): the power was cut between the two appends. The
	// checkpoint is whole and names its epoch, so the replay trusts it;
	// the controller journals the missing record at start.
	unmarked bool
}

// replayInto applies the journal from record from on to m: the one code
// path of a restart, a rebuild after a journal failure, game recall and
// the resend of lost events. fn (may be nil) gets every event. When the
// journal no longer starts at its first record (retention), the machine
// starts at the first checkpoint found and the records before it are
// skipped. A checkpoint met after records were applied is compared with
// the machine, and wins if they differ.
func replayInto(m *Machine, j Journal, from uint64, log zerolog.Logger, fn func(Event)) (replayResult, error) {
	var res replayResult
	first, restoring, afterCk := true, false, false
	// A journal's inputs are judged by the rules of the build that wrote
	// them: those before its first RulesEpoch (or a checkpoint naming
	// one) by the rules before there were epochs.
	m.epoch = 0
	err := j.Replay(from, func(seq uint64, at time.Time, data []byte) error {
		in, err := DecodeInput(data)
		if err != nil {
			return err
		}
		if first {
			first, restoring = false, seq > 1
		}
		res.last = at
		ck, isCk := in.(Checkpoint)
		if afterCk {
			_, isEpoch := in.(RulesEpoch)
			afterCk, res.unmarked = false, !isEpoch
		}
		switch {
		case restoring && !isCk:
			res.skipped++
			return nil
		case restoring:
			m.now = at // the table's time when it wrote the checkpoint
			if err := m.Restore(ck); err != nil {
				return err
			}
			restoring = false
		case isCk:
			if d := m.Drift(ck); d != "" {
				log.Error().Uint64("record", seq).Str("drift", d).
					Msg("replay differs from the checkpoint the table wrote: continuing from the checkpoint")
				if err := m.adopt(ck); err != nil {
					return err
				}
			}
		case isEpochInForce(in, m.epoch):
			// The epoch journaled after each checkpoint
			// (Controller.writeCheckpoint), which the live table did not
			// apply: it changes nothing.
			res.inputs++
			return nil
		default:
			// A refused input (journaled by an older build) changed
			// nothing then and changes nothing now.
			st, err := m.Apply(at, in)
			if errors.Is(err, ErrRulesEpoch) {
				return err // a newer build's journal: judged otherwise from here
			}
			if err == nil && fn != nil {
				for _, ev := range st.Events {
					ev.memo = new(memo) // as the live table's, shared by who encodes it
					fn(ev)
				}
			}
			res.inputs++
			return nil
		}
		m.MarkCheckpoint(seq)
		res.inputs++
		afterCk, res.unmarked = true, true
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("table: replay: %w", err)
	}
	if restoring {
		return res, fmt.Errorf("%w: %d records and no checkpoint to rebuild the table from", ErrNoCheckpoint, res.skipped)
	}
	return res, nil
}

// ReplayEvents rebuilds a table from its journal without running it, and
// calls fn with every event as it was published (`tablectl history` and
// `tablectl round` read a stopped table's journal this way).
func ReplayEvents(opts Options, fn func(Event)) error {
	_, err := recall(opts, fn, func(Journal) (uint64, error) { return 0, nil })
	return err
}

// ReplayEventsFrom is ReplayEvents starting at the newest checkpoint at or
// before journal record seq, so recalling recent rounds of a long journal
// reads only its end. 0, or no checkpoint that early, reads everything
// retained.
func ReplayEventsFrom(opts Options, seq uint64, fn func(Event)) error {
	_, err := recall(opts, fn, func(j Journal) (uint64, error) {
		if seq == 0 {
			return 0, nil
		}
		return checkpointAtOrBefore(j, seq)
	})
	return err
}

// ReplayEventsSince is ReplayEvents starting at the newest checkpoint taken
// before event seq was published, so fn sees that event and every later
// one (the MQTT link's resend). Events before seq may come too; events
// older than what retention kept do not.
func ReplayEventsSince(opts Options, seq uint64, fn func(Event)) error {
	_, err := recall(opts, fn, func(j Journal) (uint64, error) {
		if seq == 0 {
			return 0, nil
		}
		return checkpointBeforeEvent(j, seq)
	})
	return err
}

// recall replays a journal read-only into fn (may be nil) and returns the
// machine it rebuilt; from picks where it starts.
func recall(opts Options, fn func(Event), from func(Journal) (uint64, error)) (*Machine, error) {
	m, err := NewMachine(opts.machineConfig())
	if err != nil {
		return nil, err
	}
	if opts.Journal == nil {
		return m, nil
	}
	at, err := from(opts.Journal)
	if err != nil {
		return nil, fmt.Errorf("table: replay: %w", err)
	}
	_, err = replayInto(m, opts.Journal, at, zerolog.Nop(), fn)
	return m, err
}

// errStopReplay ends a replay that has read what it needed.
var errStopReplay = errors.New("table: replay stop")

// readCheckpoint returns the checkpoint journaled at seq; ok is false when
// retention has deleted it.
func readCheckpoint(j Journal, seq uint64) (ck Checkpoint, ok bool, err error) {
	err = j.Replay(seq, func(got uint64, _ time.Time, data []byte) error {
		if got != seq {
			return errStopReplay // the journal starts after seq
		}
		in, err := DecodeInput(data)
		if err != nil {
			return err
		}
		v, isCk := in.(Checkpoint)
		if !isCk {
			return fmt.Errorf("table: journal record %d is a %s, not a checkpoint", seq, in.Kind())
		}
		ck, ok = v, true
		return errStopReplay
	})
	if errors.Is(err, errStopReplay) {
		err = nil
	}
	return ck, ok, err
}

// replayStart picks where a restart begins replaying: the newest
// checkpoint, and further back while the outbox has not yet seen a
// checkpoint's events (they must be regenerated to be published), but
// never before the oldest checkpoint retained. 0 means the whole journal.
// Game recall of the rounds before it is read from the journal after the
// table runs (ReplayEarlierEvents), off the start's path.
func replayStart(j Journal, republishAfter uint64) (uint64, error) {
	at, start := j.LastOfKind(CheckpointKind), uint64(0)
	for at != 0 {
		ck, ok, err := readCheckpoint(j, at)
		if err != nil {
			return 0, err
		}
		if !ok {
			return start, nil
		}
		start = at
		// RepublishAfter 0: no outbox (or an empty one) to catch up.
		if ck.Seq <= republishAfter || republishAfter == 0 {
			return at, nil
		}
		at = ck.Prev
	}
	return 0, nil
}

// ReplayEarlierEvents calls fn with the events of the journal from the
// checkpoint before the newest up to the newest checkpoint: the
// CheckpointEvery rounds (or more) a restart, which replays from the
// newest checkpoint, did not regenerate. The daemon seeds game recall
// with them after its table runs (console.History.AddEarlier), so a
// restart's replay stays as short as one checkpoint interval. Nothing is
// read when the journal holds no checkpoint before the newest.
func ReplayEarlierEvents(opts Options, fn func(Event)) error {
	j := opts.Journal
	if j == nil {
		return nil
	}
	newest := j.LastOfKind(CheckpointKind)
	if newest == 0 {
		return nil
	}
	ck, ok, err := readCheckpoint(j, newest)
	if err != nil {
		return fmt.Errorf("table: replay: %w", err)
	}
	if !ok {
		return nil
	}
	m, err := NewMachine(opts.machineConfig())
	if err != nil {
		return err
	}
	_, err = replayInto(m, journalUpTo{Journal: j, to: newest}, ck.Prev, zerolog.Nop(), fn)
	if errors.Is(err, ErrNoCheckpoint) {
		return nil // retention kept nothing before the newest checkpoint
	}
	return err
}

// journalUpTo is a Journal whose replay stops before record to.
type journalUpTo struct {
	Journal
	to uint64
}

func (j journalUpTo) Replay(from uint64, fn func(uint64, time.Time, []byte) error) error {
	err := j.Journal.Replay(from, func(seq uint64, at time.Time, data []byte) error {
		if seq >= j.to {
			return errStopReplay
		}
		return fn(seq, at, data)
	})
	if errors.Is(err, errStopReplay) {
		return nil
	}
	return err
}

// checkpointAtOrBefore returns the journal seq of the newest checkpoint at
// or before seq, 0 when there is none retained.
func checkpointAtOrBefore(j Journal, seq uint64) (uint64, error) {
	at := j.LastOfKind(CheckpointKind)
	for at > seq {
		ck, ok, err := readCheckpoint(j, at)
		if err != nil || !ok {
			return 0, err
		}
		at = ck.Prev
	}
	return at, nil
}

// checkpointBeforeEvent returns the journal seq of the newest checkpoint
// taken before event seq was published (its Seq, the last event before it,
// is lower), 0 when there is none retained.
func checkpointBeforeEvent(j Journal, seq uint64) (uint64, error) {
	at := j.LastOfKind(CheckpointKind)
	for at != 0 {
		ck, ok, err := readCheckpoint(j, at)
		if err != nil || !ok {
			return 0, err
		}
		if ck.Seq < seq {
			return at, nil
		}
		at = ck.Prev
	}
	return 0, nil
}

// isEpochInForce reports whether in is a RulesEpoch of epoch, the one the
// replay is at already (never 0: a build before epochs journals none).
func isEpochInForce(in Input, epoch int) bool {
	v, ok := in.(RulesEpoch)
	return ok && epoch > 0 && v.Epoch == epoch
}
