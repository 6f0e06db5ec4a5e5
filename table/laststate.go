package table

import "math"

// LastState replays the journal read-only, from its newest checkpoint, and
// returns the table's state at its end: what a restart resumes from, known
// before the controller runs (the demo's simulated shoe picks its shoe
// back up from it, as a physical shoe keeps its cards).
func LastState(opts Options) (State, error) {
	m, err := recall(opts, nil, func(j Journal) (uint64, error) {
		return checkpointAtOrBefore(j, math.MaxUint64) // the newest checkpoint
	})
	if err != nil {
		return State{}, err
	}
	if st := m.State(); st != nil {
		return *st, nil
	}
	return State{}, nil
}
