package world

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/rules"
)

// TestObserveTimers: the world's timer checks (observe) pass a table that
// measures a player's time on the monotonic clock and shows its deadlines
// on the wall clock of now, and catch the two ways a wall-clock step
// showed through before: a pause that kept the wall clock's idea of the
// time left (the controller without its anchoring), and a snapshot after
// the step with the deadline in the time before it (the controller
// before Controller.shown). The same hold for the whole simulation with
// the controller broken so (docs/simulation.md).
func TestObserveTimers(t *testing.T) {
	rs, err := rules.Game("000")
	require.NoError(t, err)
	length := rs.DecisionTime
	const step = time.Hour
	const elapsed = 2 * time.Second
	running := func(w *world, left time.Duration) table.State {
		return table.State{Timer: &table.TimerView{Name: string(table.TimerDecision),
			Deadline: w.clk.Now().Add(left), LeftMS: left.Milliseconds()}}
	}
	for _, tc := range []struct {
		name string
		// after is the snapshot the table shows once the wall clock
		// stepped forward by step, elapsed after the decision began.
		after func(w *world) table.State
		want  string
	}{
		{"a pause keeps the monotonic time left", func(w *world) table.State {
			return table.State{Timer: &table.TimerView{Name: string(table.TimerDecision), LeftMS: (length - elapsed).Milliseconds(), Stopped: true}}
		}, ""},
		{"a pause keeps the wall clock's time left", func(w *world) table.State {
			return table.State{Timer: &table.TimerView{Name: string(table.TimerDecision), LeftMS: 0, Stopped: true}}
		}, "a pause keeps a player's time on the monotonic clock"},
		{"the deadline on the wall clock of now", func(w *world) table.State {
			return running(w, length-elapsed)
		}, ""},
		{"a new decision of its whole length", func(w *world) table.State {
			return running(w, length)
		}, ""},
		{"the deadline in the time before the step", func(w *world) table.State {
			st := running(w, length-elapsed)
			st.Timer.Deadline = st.Timer.Deadline.Add(-step)
			return st
		}, "a state's deadline and time left agree"},
		{"the deadline moved with its time left", func(w *world) table.State {
			return running(w, length-elapsed-3*time.Second)
		}, "a running timer keeps its deadline on the monotonic clock"},
		{"a deadline further than any timer", func(w *world) table.State {
			return running(w, step)
		}, "a deadline is never further than its timer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &world{clk: newJumpClock(epoch), grace: 5 * time.Second}
			w.trace = func(string, ...any) {}
			w.lengths, err = table.NewMachine(table.MachineConfig{Rules: rs, SettleDelay: 4 * time.Second, BetsGrace: 5 * time.Second})
			require.NoError(t, err)
			w.observe(running(w, length))
			w.clk.Advance(elapsed)
			w.clk.Jump(step)
			w.observe(tc.after(w))
			if tc.want == "" {
				assert.Empty(t, w.res.Violations)
				return
			}
			require.NotEmpty(t, w.res.Violations)
			assert.Equal(t, tc.want, w.res.Violations[0].Invariant)
		})
	}
}
