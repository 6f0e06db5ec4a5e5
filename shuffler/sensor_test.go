package shuffler_test

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"periph.io/x/conn/v3/gpio"

	"github.com/livetable/livetable/shuffler"
	"github.com/livetable/livetable/shuffler/pinmap"
	simgpio "github.com/livetable/livetable/simulators/gpio"
	"github.com/livetable/livetable/table"
)

func TestSensor(t *testing.T) {
	const step = 5 * time.Millisecond
	tests := []struct {
		name    string
		initial bool
		levels  []bool // the raw logical level during each 5ms step
		want    int    // inputs emitted
	}{
		{"nothing", false, []bool{false, false, false}, 0},
		{"clean pass", false, []bool{true, true, true, true, true, true, false, false}, 1},
		{"glitch shorter than debounce", false, []bool{true, true, false, false, false, false, false}, 0},
		{"bouncing pass", false, []bool{true, false, true, false, true, true, true, true, true, false, true, false, false, false}, 1},
		{"two passes", false, []bool{true, true, true, true, true, false, false, false, false, false, true, true, true, true, true}, 2},
		{"asserted at start is no edge", true, []bool{true, true, true, true, true, true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clockwork.NewFakeClock()
			p := simgpio.NewPin(pinmap.PinConfig{Name: pinmap.CutCardSensor, Line: "GPIO4", ActiveLow: true}, clk)
			p.Assert(tt.initial)
			s := shuffler.NewCutCardSensor(p.Logical(), shuffler.SensorOptions{Poll: step, Debounce: 20 * time.Millisecond}, clk, zerolog.Nop())
			out := make(chan table.Input, 8)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.Run(ctx, out) }()
			for _, l := range tt.levels {
				require.NoError(t, clk.BlockUntilContext(ctx, 1))
				p.Assert(l)
				clk.Advance(step)
			}
			require.NoError(t, clk.BlockUntilContext(ctx, 1))
			cancel()
			require.NoError(t, <-done)
			assert.Len(t, out, tt.want)
			for range len(out) {
				assert.Equal(t, table.CutCardSeen{Source: "sensor"}, <-out)
			}
		})
	}
}

func TestSensorPauseButton(t *testing.T) {
	clk := clockwork.NewFakeClock()
	p := simgpio.NewPin(pinmap.PinConfig{Name: pinmap.PauseButton, Line: "GPIO6"}, clk)
	in := table.Supervisor{Command: "pause", By: "button"}
	s := shuffler.NewSensor(p.Logical(), in, shuffler.SensorOptions{}, clk, zerolog.Nop())
	out := make(chan table.Input, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, out) }()
	require.NoError(t, clk.BlockUntilContext(ctx, 1))
	p.Assert(true)
	require.NoError(t, simgpio.Step(ctx, clk, 1, time.Millisecond, 100*time.Millisecond))
	assert.Equal(t, in, <-out, "default options debounce and emit")
	cancel()
	require.NoError(t, <-done)
}

func TestRunErrors(t *testing.T) {
	clk := clockwork.NewFakeClock()
	ok := func() gpio.PinIO {
		return simgpio.NewPin(pinmap.PinConfig{Name: pinmap.SwapDone, Line: "1"}, clk).Logical()
	}
	full := func() shuffler.Pins {
		return shuffler.Pins{Ready: ok(), SwapDone: ok(), ShoeA: ok(), ShoeB: ok(), SwapRequest: ok()}
	}
	tests := []struct {
		name  string
		pins  func() shuffler.Pins
		isErr error
	}{
		{"no ready", func() shuffler.Pins { p := full(); p.Ready = nil; return p }, shuffler.ErrNoPin},
		{"no request", func() shuffler.Pins { p := full(); p.SwapRequest = nil; return p }, shuffler.ErrNoPin},
		{"input fails", func() shuffler.Pins { p := full(); p.ShoeB = gpio.INVALID; return p }, nil},
		{"cut card fails", func() shuffler.Pins { p := full(); p.CutCard = gpio.INVALID; return p }, nil},
		{"request fails", func() shuffler.Pins { p := full(); p.SwapRequest = gpio.INVALID; return p }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := shuffler.New(tt.pins(), shuffler.Options{}, clk, zerolog.Nop())
			err := c.Run(context.Background(), make(chan table.Input), nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "shuffler:")
			if tt.isErr != nil {
				assert.ErrorIs(t, err, tt.isErr)
			}
			assert.ErrorIs(t, c.RequestSwap(context.Background()), shuffler.ErrStopped, "commands after Run fail fast")
			assert.ErrorIs(t, c.Run(context.Background(), nil, nil), shuffler.ErrRunTwice)
		})
	}
	err := shuffler.NewCutCardSensor(nil, shuffler.SensorOptions{}, clk, zerolog.Nop()).Run(context.Background(), nil)
	assert.ErrorIs(t, err, shuffler.ErrNoPin)
	err = shuffler.NewCutCardSensor(gpio.INVALID, shuffler.SensorOptions{}, clk, zerolog.Nop()).Run(context.Background(), nil)
	assert.Error(t, err)
}

func TestCommandsHonourContext(t *testing.T) {
	c := shuffler.New(shuffler.Pins{}, shuffler.Options{}, clockwork.NewFakeClock(), zerolog.Nop())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, c.RequestSwap(ctx), context.Canceled, "not running yet: the caller's context decides")
	assert.ErrorIs(t, c.Reset(ctx), context.Canceled)
	assert.Equal(t, shuffler.Starting, c.State())
	assert.NoError(t, c.Halt(), "halt without a request line is a no-op")
}
