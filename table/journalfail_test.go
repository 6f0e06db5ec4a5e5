package table

import (
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failingJournal is a memJournal whose appends fail once failing is set,
// as the real journal refuses every append after a failed write or fsync.
type failingJournal struct {
	*memJournal
	failing atomic.Bool
}

func (f *failingJournal) Append(e Entry) (uint64, error) {
	if f.failing.Load() {
		return 0, syscall.EIO
	}
	return f.memJournal.Append(e)
}

// TestJournalFailureNumbersNothing: an input the journal could not keep is
// refused with ErrJournal, no event is numbered for it or for the alarm
// (a restart numbers events from the journal: anything numbered beyond it
// would be numbered again with other content), the state snapshot shows
// the table stopped with the journal alarm, and the loop stops so that the
// daemon's restart reopens the journal. The restart derives exactly the
// seqs that were published. (The simulation's seed 1 found the alarm
// numbered and published: make sim SEED=1.)
func TestJournalFailureNumbersNothing(t *testing.T) {
	j := &failingJournal{memJournal: &memJournal{}}
	h := start(t, "000", j)
	h.waitPhase(PhaseBetting)
	require.NoError(t, h.submit(BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	var published uint64
	drain := func() {
		for {
			select {
			case ev, ok := <-h.events:
				if !ok {
					return
				}
				published = max(published, ev.Seq)
			default:
				return
			}
		}
	}
	// The loop answers a Submit before it fans the input's events out:
	// once it answers a ping, they are all in the subscription.
	h.ping()
	drain()
	before := published

	j.failing.Store(true)
	err := h.card("Ts")
	require.ErrorIs(t, err, ErrJournal)
	select {
	case err := <-h.done:
		h.done <- err
		require.ErrorIs(t, err, ErrJournal, "the loop stops")
	case <-time.After(5 * time.Second):
		t.Fatal("the loop goes on with a journal that refuses appends")
	}
	var last State
	for ev := range h.events { // closed when Run returned
		require.Zero(t, ev.Seq, "no event numbered after the failure: %s", ev.Kind())
		if st, ok := ev.Body.(*State); ok {
			last = *st
		}
	}
	assert.True(t, last.Paused)
	assert.Contains(t, last.PauseReason, "journal append failed")
	assert.Equal(t, before, last.Seq, "the snapshot reflects the last numbered event")
	assert.Equal(t, before, h.c.Snapshot().Seq)
	require.NotEmpty(t, last.Alarms)
	assert.Equal(t, "journal.append_failed", last.Alarms[len(last.Alarms)-1].Code)

	// The restart derives what was published, no more, no less.
	j.failing.Store(false)
	opts := h.c.opts
	opts.Journal = j
	seq, err := LastEventSeq(opts)
	require.NoError(t, err)
	assert.Equal(t, before, seq)
}
