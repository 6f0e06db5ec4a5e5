package gpio

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	pgpio "periph.io/x/conn/v3/gpio"

	"github.com/livetable/livetable/shuffler/pinmap"
)

func TestPinPolarity(t *testing.T) {
	tests := []struct {
		name      string
		activeLow bool
		assert    bool
		wantRaw   pgpio.Level
	}{
		{"high asserted", false, true, pgpio.High},
		{"high released", false, false, pgpio.Low},
		{"low asserted", true, true, pgpio.Low},
		{"low released", true, false, pgpio.High},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPin(pinmap.PinConfig{Name: pinmap.CutCardSensor, Line: "GPIO7", ActiveLow: tt.activeLow}, clockwork.NewFakeClock())
			assert.False(t, p.Asserted(), "a new pin is released")
			assert.Equal(t, 7, p.Number())
			p.Assert(tt.assert)
			assert.Equal(t, tt.wantRaw, p.Read())
			assert.Equal(t, tt.assert, p.Asserted())
			assert.Equal(t, pgpio.Level(tt.assert), p.Logical().Read(), "production sees logical levels")
		})
	}
}

func TestPinOutputReadBack(t *testing.T) {
	p := NewPin(pinmap.PinConfig{Name: pinmap.LightRed, Line: "x", ActiveLow: true}, nil)
	assert.Equal(t, -1, p.Number(), "a line that is not a number")
	require.NoError(t, p.Logical().Out(pgpio.High))
	assert.True(t, p.Asserted())
	assert.Equal(t, pgpio.Low, p.Read())
}

func TestPinEdges(t *testing.T) {
	clk := clockwork.NewFakeClock()
	p := NewPin(pinmap.PinConfig{Name: pinmap.SwapDone, Line: "GPIO9"}, clk)
	require.NoError(t, p.In(pgpio.PullNoChange, pgpio.BothEdges))
	p.Assert(true)
	p.Assert(true) // no change, no edge
	assert.True(t, p.WaitForEdge(time.Second))
	assert.Len(t, p.EdgesChan, 0, "one change, one edge")

	got := make(chan bool)
	go func() { got <- p.WaitForEdge(time.Second) }()
	// gpiotest leaves the first call's timer pending on the clock, so the
	// second call is parked once there are two.
	require.NoError(t, clk.BlockUntilContext(context.Background(), 2))
	clk.Advance(time.Second)
	assert.False(t, <-got, "times out on the fake clock")

	for range edgeBuffer + 3 {
		p.Assert(!p.Asserted())
	}
	assert.Equal(t, uint64(3), p.Dropped())
}

func TestBank(t *testing.T) {
	clk := clockwork.NewFakeClock()
	b, err := NewBank(DefaultConfig(), clk)
	require.NoError(t, err)
	assert.Len(t, b.Names(), len(pinmap.Functions))
	assert.Equal(t, pinmap.LightRed, b.Names()[0])
	for name, on := range b.Snapshot() {
		assert.False(t, on, name)
	}
	ready, err := b.Pin(pinmap.ShufflerReady)
	require.NoError(t, err)
	ready.Assert(true)
	red, err := b.Pin(pinmap.LightRed)
	require.NoError(t, err)
	require.NoError(t, red.Logical().Out(pgpio.High))
	snap := b.Snapshot()
	assert.True(t, snap[pinmap.ShufflerReady])
	assert.True(t, snap[pinmap.LightRed])
	assert.False(t, snap[pinmap.LightGreen])

	lines := b.Lines()
	assert.Len(t, lines, len(pinmap.Functions))
	assert.Equal(t, pgpio.High, lines.In(pinmap.ShufflerReady).Read(), "lines are logical")
	_, err = b.Pin("light.blue")
	assert.ErrorIs(t, err, ErrUnknownPin)
	_, err = NewBank([]pinmap.PinConfig{{Name: "light.blue", Line: "1"}}, clk)
	assert.ErrorIs(t, err, pinmap.ErrUnknownFunction)
}

func TestStep(t *testing.T) {
	clk := clockwork.NewFakeClock()
	start := clk.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ticks := make(chan time.Time, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-clk.After(10 * time.Millisecond):
				ticks <- now
			}
		}
	}()
	require.NoError(t, Step(ctx, clk, 1, 10*time.Millisecond, 95*time.Millisecond))
	require.NoError(t, clk.BlockUntilContext(ctx, 1))
	assert.Equal(t, 95*time.Millisecond, clk.Since(start))
	assert.Len(t, ticks, 9, "every tick up to 90ms was seen, none skipped")
	assert.Error(t, Step(ctx, clk, 1, 0, time.Second))
	cancel()
	<-done
	blocked, stop := context.WithCancel(context.Background())
	stop()
	assert.ErrorIs(t, Step(blocked, clk, 5, time.Millisecond, time.Millisecond), context.Canceled)
}
