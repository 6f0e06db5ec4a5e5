package table

import (
	"time"

	"github.com/livetable/livetable/table/journal"
)

// NewJournal adapts the durable journal of table/journal to the
// controller's Journal seam.
func NewJournal(j *journal.Journal) Journal { return journalAdapter{j} }

type journalAdapter struct{ j *journal.Journal }

func (a journalAdapter) Append(at time.Time, kind, roundID string, data []byte) (uint64, error) {
	return a.j.Append(journal.Record{Time: at, Kind: kind, Round: roundID, Data: data})
}

func (a journalAdapter) Replay(fn func(at time.Time, data []byte) error) error {
	return a.j.Replay(0, func(r journal.Record) error { return fn(r.Time, r.Data) })
}
