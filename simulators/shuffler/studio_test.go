package shuffler

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/firmware-protocols/shufflerproto"
	"github.com/livetable/livetable/shuffler/pinmap"
)

func TestStudio(t *testing.T) {
	clk := clockwork.NewFakeClock()
	var lines []string
	s, err := NewStudio(Options{ShuffleTime: time.Second, Poll: 100 * time.Millisecond,
		OnReport: ReportTo(func(l string) { lines = append(lines, l) })}, clk, zerolog.Nop())
	require.NoError(t, err)
	assert.Len(t, s.Lines(), len(pinmap.Functions))

	s.PulseCutCard()
	assert.True(t, s.Snapshot()[pinmap.CutCardSensor])
	assert.True(t, bool(s.Lines().In(pinmap.CutCardSensor).Read()), "production sees the card")
	clk.Advance(CutCardPass)
	// The clock runs AfterFunc functions on their own goroutine: poll.
	for s.Snapshot()[pinmap.CutCardSensor] {
		runtime.Gosched()
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Device.Run(ctx) }()
	require.NoError(t, clk.BlockUntilContext(ctx, 1))
	for range 10 {
		clk.Advance(100 * time.Millisecond)
		require.NoError(t, clk.BlockUntilContext(ctx, 1))
	}
	cancel()
	require.NoError(t, <-done)
	require.Len(t, lines, 1)
	r, err := shufflerproto.Parse(lines[0])
	require.NoError(t, err)
	assert.Equal(t, shufflerproto.Report{Shoe: "B", ShoeID: "B-0001", Cards: 416}, r)
	assert.True(t, s.Snapshot()[pinmap.ShufflerReady])
	assert.True(t, s.Snapshot()[pinmap.ShoeAPresent])
}
