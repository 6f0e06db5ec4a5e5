package consoletest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
)

func TestTable(t *testing.T) {
	at := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	ft := New(table.State{Table: "t1", Phase: table.PhaseBetting})
	assert.Equal(t, table.PhaseBetting, ft.Snapshot().Phase)

	ch, stop := ft.Subscribe("a", 2)
	assert.Equal(t, 1, ft.Subscribers())
	ft.SetState(table.State{Table: "t1", Phase: table.PhaseDealing}, at)
	ft.Push(table.Event{Body: table.Alarm{Code: "x"}})
	ft.Push(table.Event{Body: table.Alarm{Code: "dropped: the queue holds 2"}})
	assert.Equal(t, map[string]uint64{"a": 1}, ft.Dropped())
	ev := <-ch
	st, ok := ev.Body.(*table.State)
	require.True(t, ok)
	assert.Equal(t, table.PhaseDealing, st.Phase)
	assert.Zero(t, ev.Seq, "a snapshot takes no number")
	ev = <-ch
	assert.Equal(t, uint64(1), ev.Seq)
	assert.Equal(t, table.PhaseDealing, ft.Snapshot().Phase)
	stop()
	stop() // twice is harmless
	_, open := <-ch
	assert.False(t, open)
	assert.Zero(t, ft.Subscribers())

	refused := errors.New("no")
	require.NoError(t, ft.Submit(context.Background(), table.Supervisor{Command: "pause"}))
	ft.FailWith(func(in table.Input) error { return refused })
	assert.ErrorIs(t, ft.Submit(context.Background(), table.Supervisor{Command: "resume"}), refused)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, ft.Submit(ctx, table.Supervisor{Command: "void"}), context.Canceled)
	assert.Equal(t, []table.Input{table.Supervisor{Command: "pause"}, table.Supervisor{Command: "resume"}}, ft.Inputs())
}
