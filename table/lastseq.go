package table

import "math"

// LastEventSeq replays the journal read-only, from its newest checkpoint,
// and returns the seq of the last event the journal's inputs derive: what
// a restart numbers the next event after. The daemon compares it with the
// MQTT outbox before it starts (table/continuity): a journal behind what
// was published must never reuse those seqs.
func LastEventSeq(opts Options) (uint64, error) {
	m, err := recall(opts, nil, func(j Journal) (uint64, error) {
		return checkpointAtOrBefore(j, math.MaxUint64) // the newest checkpoint
	})
	if err != nil {
		return 0, err
	}
	return m.Seq(), nil
}
