package table

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table/journal"
)

// NewJournal adapts the durable journal of table/journal to the
// controller's Journal seam. Open the journal with AnchorKind set to
// CheckpointKind, so retention keeps what a replay needs.
func NewJournal(j *journal.Journal) Journal { return journalAdapter{j} }

// CheckpointKind is the journal kind of checkpoint records: the anchor
// kind for journal retention (journal.Options.AnchorKind).
const CheckpointKind = "checkpoint"

type journalAdapter struct{ j *journal.Journal }

func (a journalAdapter) Append(e Entry) (uint64, error) {
	return a.j.Append(journal.Record{Time: e.At, Kind: e.Kind, Round: e.Round, Shoe: e.Shoe, DeviceMS: e.DeviceMS, Data: e.Data})
}

func (a journalAdapter) Replay(from uint64, fn func(seq uint64, at time.Time, data []byte) error) error {
	return a.j.Replay(from, func(r journal.Record) error { return fn(r.Seq, r.Time, r.Data) })
}

func (a journalAdapter) LastOfKind(kind string) uint64 { return a.j.LastOfKind(kind) }

// OpenForHistory opens a table's journal read-only (no lock: the table
// may be running) for what reads its past: game recall (`tablectl
// history`, `tablectl round`), the MQTT link's resend, the continuity
// check. The caller closes it; NewJournal adapts it for ReplayEvents*.
func OpenForHistory(dir string, log zerolog.Logger) (*journal.Journal, error) {
	o := journal.DefaultOptions()
	o.Dir, o.ReadOnly = dir, true
	j, _, err := journal.Open(o, log)
	if err != nil {
		return nil, fmt.Errorf("table: open the journal %s: %w", dir, err)
	}
	return j, nil
}

// TornTailAlarm is the alarm of a journal whose tail was cut at open (a
// power loss mid-write): it pauses the table and names the records lost,
// so the supervisor checks the last round. ok is false for a whole journal.
func TornTailAlarm(rep journal.RecoveryReport) (alarm DeviceAlarm, ok bool) {
	if !rep.Truncated() {
		return DeviceAlarm{}, false
	}
	return DeviceAlarm{Source: "journal", Code: "torn_tail", Pauses: true,
		Message: fmt.Sprintf("journal tail cut after a power loss: journal %s (%d bytes), last whole record seq %d: check the last round",
			rep.Tail.LostText(), rep.CutBytes, rep.Tail.LastKept())}, true
}

// JournalHasEpochs reports whether the journal in dir holds a rules_epoch
// record: it was written by a build of rules epoch 1 or later, each of
// which records its data directory's identity (table/identity) before it
// journals anything. A data directory whose journal has one and no
// identity file lost it (deleted, left out of a restore): recorded afresh
// from the configuration, a wrong game would replay the journal under
// other rules. A missing or empty journal holds none.
func JournalHasEpochs(dir string, log zerolog.Logger) (bool, error) {
	j, err := OpenForHistory(dir, log)
	if err != nil {
		return false, err
	}
	defer j.Close()
	return j.LastOfKind(RulesEpoch{}.Kind()) > 0, nil
}
