package light

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"periph.io/x/conn/v3/gpio"

	"github.com/livetable/livetable/shuffler/pinmap"
	simgpio "github.com/livetable/livetable/simulators/gpio"
	"github.com/livetable/livetable/table"
)

func TestPatternAt(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		s        state
		lastCall time.Duration
		want     Pattern
	}{
		{"no phase yet", state{}, 5 * time.Second, PatternRed},
		{"idle", state{phase: table.PhaseIdle}, 0, PatternRed},
		{"betting", state{phase: table.PhaseBetting}, 5 * time.Second, PatternGreen},
		{"betting far from deadline", state{phase: table.PhaseBetting, deadline: now.Add(6 * time.Second)}, 5 * time.Second, PatternGreen},
		{"betting at last call", state{phase: table.PhaseBetting, deadline: now.Add(5 * time.Second)}, 5 * time.Second, PatternYellow},
		{"betting past deadline", state{phase: table.PhaseBetting, deadline: now.Add(-time.Second)}, 5 * time.Second, PatternYellow},
		{"last call disabled", state{phase: table.PhaseBetting, deadline: now.Add(time.Second)}, -1, PatternGreen},
		{"last call phase", state{phase: table.PhaseLastCall}, 0, PatternYellow},
		{"dealing", state{phase: table.PhaseDealing}, 0, PatternRed},
		{"settled", state{phase: table.PhaseSettled}, 0, PatternRed},
		{"closed", state{phase: table.PhaseClosed}, 0, PatternRed},
		{"unknown phase", state{phase: "warp"}, 0, PatternRed},
		{"paused phase", state{phase: table.PhasePaused}, 0, PatternRedBlink},
		{"alarm over betting", state{phase: table.PhaseBetting, alarm: true}, 0, PatternRedBlink},
		{"paused event over dealing", state{phase: table.PhaseDealing, paused: true}, 0, PatternRedBlink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, patternAt(tt.s, now, tt.lastCall))
		})
	}
}

// rig is a tower on simulated pins with a fake clock.
type rig struct {
	tw                 *Tower
	clk                *clockwork.FakeClock
	red, yellow, green *simgpio.Pin
	events             chan table.Event
	changes            chan Changed
	cancel             context.CancelFunc
	done               chan error
}

func newRig(t *testing.T, opts Options) *rig {
	t.Helper()
	clk := clockwork.NewFakeClockAt(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	cfgs := []pinmap.PinConfig{
		{Name: pinmap.LightRed, Line: "GPIO17", ActiveLow: true},
		{Name: pinmap.LightYellow, Line: "GPIO27"},
		{Name: pinmap.LightGreen, Line: "GPIO22"},
	}
	bank, err := simgpio.NewBank(cfgs, clk)
	require.NoError(t, err)
	r := &rig{clk: clk, events: make(chan table.Event), changes: make(chan Changed, 16), done: make(chan error, 1)}
	r.red, _ = bank.Pin(pinmap.LightRed)
	r.yellow, _ = bank.Pin(pinmap.LightYellow)
	r.green, _ = bank.Pin(pinmap.LightGreen)
	opts.OnChange = func(c Changed) { r.changes <- c }
	tw := New(r.red.Logical(), r.yellow.Logical(), r.green.Logical(), opts, clk, zerolog.Nop())
	r.tw = tw
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- tw.Run(ctx, r.events) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

func (r *rig) lamps() [3]bool {
	return [3]bool{r.red.Asserted(), r.yellow.Asserted(), r.green.Asserted()}
}

// step is one thing that happens to the tower and what must follow.
type step struct {
	name    string
	body    table.Body    // sent as an event, when set
	advance time.Duration // fake time passed, when set
	waiters int           // timers the tower must have pending around the advance
	change  *Changed      // the report that must come next, nil for none yet
	lamps   [3]bool       // red, yellow, green after the step
}

func changed(p Pattern, red, yellow, green bool) *Changed {
	return &Changed{Red: red, Yellow: yellow, Green: green, Pattern: string(p)}
}

func TestTowerSequence(t *testing.T) {
	r := newRig(t, Options{BlinkPeriod: time.Second, LastCall: 5 * time.Second})
	start := r.clk.Now()
	steps := []step{
		{name: "starts red", change: changed(PatternRed, true, false, false), lamps: [3]bool{true, false, false}},
		{name: "bets open", body: table.PhaseChanged{Phase: table.PhaseBetting, Deadline: start.Add(15 * time.Second)},
			change: changed(PatternGreen, false, false, true), lamps: [3]bool{false, false, true}},
		{name: "ten seconds later", advance: 10 * time.Second, waiters: 1,
			change: changed(PatternYellow, false, true, false), lamps: [3]bool{false, true, false}},
		{name: "bets closed", body: table.PhaseChanged{Phase: table.PhaseDealing},
			change: changed(PatternRed, true, false, false), lamps: [3]bool{true, false, false}},
		{name: "settled stays red", body: table.PhaseChanged{Phase: table.PhaseSettled}, lamps: [3]bool{true, false, false}},
		{name: "alarm that does not pause", body: table.Alarm{Code: "misread"}, lamps: [3]bool{true, false, false}},
		{name: "alarm that pauses", body: table.Alarm{Code: "shoe_removed", Pauses: true},
			change: changed(PatternRedBlink, true, false, false), lamps: [3]bool{true, false, false}},
		{name: "blink off", advance: 500 * time.Millisecond, waiters: 1, lamps: [3]bool{false, false, false}},
		{name: "blink on", advance: 500 * time.Millisecond, waiters: 1, lamps: [3]bool{true, false, false}},
		{name: "phase moves under the alarm", body: table.PhaseChanged{Phase: table.PhaseBetting}, lamps: [3]bool{true, false, false}},
		{name: "resumed", body: table.Resumed{By: "sup"},
			change: changed(PatternGreen, false, false, true), lamps: [3]bool{false, false, true}},
		{name: "paused phase", body: table.PhaseChanged{Phase: table.PhasePaused},
			change: changed(PatternRedBlink, true, false, false), lamps: [3]bool{true, false, false}},
		{name: "blink off again", advance: 500 * time.Millisecond, waiters: 1, lamps: [3]bool{false, false, false}},
		{name: "last call", body: &table.PhaseChanged{Phase: table.PhaseLastCall},
			change: changed(PatternYellow, false, true, false), lamps: [3]bool{false, true, false}},
		{name: "paused event", body: table.Paused{By: "sup", Reason: "check"},
			change: changed(PatternRedBlink, true, false, false), lamps: [3]bool{true, false, false}},
		{name: "resumed again", body: &table.Resumed{By: "sup"},
			change: changed(PatternYellow, false, true, false), lamps: [3]bool{false, true, false}},
		{name: "shoe closed", body: table.PhaseChanged{Phase: table.PhaseClosed},
			change: changed(PatternRed, true, false, false), lamps: [3]bool{true, false, false}},
	}
	ctx := context.Background()
	for _, st := range steps {
		if st.body != nil {
			r.events <- table.Event{Body: st.body}
		}
		if st.advance > 0 {
			require.NoError(t, simgpio.Step(ctx, r.clk, st.waiters, st.advance, st.advance), st.name)
			if st.change == nil {
				// A blink toggle is not reported: the re-armed timer
				// shows the tower has set the lamps.
				require.NoError(t, r.clk.BlockUntilContext(ctx, 1), st.name)
			}
		}
		if st.change != nil {
			assert.Equal(t, *st.change, <-r.changes, st.name)
		} else {
			// Nothing to wait for: a following event proves the tower
			// processed this one, so only check there is no report yet.
			assert.Len(t, r.changes, 0, st.name)
		}
		if st.body == nil || st.change != nil {
			assert.Equal(t, st.lamps, r.lamps(), st.name)
			l := r.tw.Lamps()
			assert.Equal(t, st.lamps, [3]bool{l.Red, l.Yellow, l.Green}, "Lamps() after %s", st.name)
		}
	}
	r.cancel()
	require.NoError(t, <-r.done)
	r.done <- nil // for the cleanup
	assert.Equal(t, *changed(PatternOff, false, false, false), <-r.changes)
	assert.Equal(t, [3]bool{false, false, false}, r.lamps(), "all off when Run returns")
}

func TestTowerEventsClosed(t *testing.T) {
	r := newRig(t, Options{})
	assert.Equal(t, PatternRed, Pattern((<-r.changes).Pattern))
	close(r.events)
	require.NoError(t, <-r.done)
	r.done <- nil
	assert.Equal(t, PatternOff, Pattern((<-r.changes).Pattern))
	assert.Equal(t, [3]bool{false, false, false}, r.lamps())
}

func TestHaltReportsFailingLamp(t *testing.T) {
	good := simgpio.NewPin(pinmap.PinConfig{Name: pinmap.LightGreen, Line: "1"}, nil)
	require.NoError(t, good.Logical().Out(gpio.High))
	tw := New(gpio.INVALID, nil, good.Logical(), Options{}, nil, zerolog.Nop())
	err := tw.Halt()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "light: red lamp")
	assert.False(t, good.Asserted(), "the other lamps are still turned off")
	assert.False(t, errors.Is(err, context.Canceled))
}
