package shuffler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/shuffler"
	simshuffler "github.com/livetable/livetable/simulators/shuffler"
	"github.com/livetable/livetable/table"
)

// tableView is the table as SwapWhenClosed reads it after a restart.
type tableView struct {
	ping  error
	phase table.Phase
}

func (v tableView) Ping(context.Context) error { return v.ping }
func (v tableView) Snapshot() table.State      { return table.State{Phase: v.phase} }

// TestSwapWhenClosedAfterRestart: a table restarted with its shoe
// finished (closed, waiting for the swap) publishes no closed phase
// again, so the swap was never asked and the table stayed closed for
// good; and a request made while the shuffler was still reading its
// presence sensors (Starting) was refused and lost. The swap is asked
// once the table's journal is replayed, kept through Starting, and done.
func TestSwapWhenClosedAfterRestart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table tableView
		swap  bool
	}{
		{"restarted closed", tableView{phase: table.PhaseClosed}, true},
		{"restarted betting", tableView{phase: table.PhaseBetting}, false},
		{"stopped before its replay ended", tableView{ping: errors.New("stopped"), phase: table.PhaseClosed}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, simshuffler.Options{}, shuffler.Options{ExpectCards: 416, BurnCards: 1})
			// Events closed: SwapWhenClosed returns once its request (if
			// any) is taken, so table time runs only after it.
			events := make(chan table.Event)
			close(events)
			require.NoError(t, r.ctl.SwapWhenClosed(r.ctx, tc.table, events))
			if !tc.swap {
				r.untilState(shuffler.AInPlay_BShuffling, time.Second)
				r.advance(time.Minute)
				assert.Equal(t, shuffler.AInPlay_BShuffling, r.ctl.State(), "no swap asked")
				return
			}
			r.untilState(shuffler.SwapRequested, time.Second)
			r.untilState(shuffler.BInPlay_AShuffling, 3*time.Minute)
			inputs, bodies := r.drain()
			assert.Contains(t, inputs, table.Input(table.ShoeChanged{ShoeID: "B-0001"}))
			// Asked while Starting (the pure machine's test has that case)
			// or once shoe A was seen: the swap follows either way.
			tr := transitions(bodies)
			require.GreaterOrEqual(t, len(tr), 3)
			assert.Equal(t, []string{"SwapRequested", "Swapping", "BInPlay_AShuffling"}, tr[len(tr)-3:])
			assert.Empty(t, alarms(inputs))
		})
	}
}
