package main

import (
	"context"
	"errors"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"

	"github.com/livetable/livetable/table"
)

type snapCtrl struct {
	ping  error
	phase table.Phase
}

func (c snapCtrl) Ping(context.Context) error { return c.ping }
func (c snapCtrl) Snapshot() table.State      { return table.State{Phase: c.phase} }

type swapCounter struct{ n int }

func (s *swapCounter) RequestSwap(context.Context) error { s.n++; return nil }

// TestSwapIfClosed: a table restarted with its shoe finished (closed,
// waiting for the dual-shoe swap) publishes no new closed phase, so the
// swap the shuffler waits for was never asked and the table stayed closed
// for good (a kill -9 of the demo while it waited for the swap). The
// daemon asks once the table's journal is replayed.
func TestSwapIfClosed(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctrl snapCtrl
		want int
	}{
		{"restarted closed", snapCtrl{phase: table.PhaseClosed}, 1},
		{"restarted betting", snapCtrl{phase: table.PhaseBetting}, 0},
		{"restarted paused", snapCtrl{phase: table.PhasePaused}, 0},
		{"stopped before its replay ended", snapCtrl{ping: errors.New("stopped"), phase: table.PhaseClosed}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sh swapCounter
			swapIfClosed(context.Background(), tc.ctrl, &sh, zerolog.Nop())
			assert.Equal(t, tc.want, sh.n)
		})
	}
}
