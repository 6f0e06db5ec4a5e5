package shuffler

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/firmware-protocols/shufflerproto"
	simgpio "github.com/livetable/livetable/simulators/gpio"
)

// TestDeviceTimeline plays the controller's side by hand and checks the
// device's lines at each moment of a shuffle and a swap.
func TestDeviceTimeline(t *testing.T) {
	clk := clockwork.NewFakeClock()
	bank, err := simgpio.NewBank(simgpio.DefaultConfig(), clk)
	require.NoError(t, err)
	pins, err := PinsFromBank(bank)
	require.NoError(t, err)
	var mu sync.Mutex
	var reports []shufflerproto.Report
	opts := Options{Poll: 100 * time.Millisecond, OnReport: func(r shufflerproto.Report) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, r)
	}}
	d := New(pins, opts, clk, zerolog.Nop())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	run := func(dur time.Duration) {
		require.NoError(t, simgpio.Step(ctx, clk, 1, 100*time.Millisecond, dur))
		require.NoError(t, clk.BlockUntilContext(ctx, 1))
	}
	type lines struct{ ready, done, a, b bool }
	now := func() lines {
		return lines{pins.Ready.Asserted(), pins.SwapDone.Asserted(), pins.ShoeA.Asserted(), pins.ShoeB.Asserted()}
	}

	steps := []struct {
		name    string
		after   time.Duration
		request *bool
		want    lines
	}{
		{name: "A dealt, B shuffling", after: 89 * time.Second, want: lines{a: true}},
		{name: "B shuffled", after: time.Second, want: lines{ready: true, a: true}},
		{name: "request", request: ptr(true), after: 1900 * time.Millisecond, want: lines{ready: true, a: true}},
		{name: "A pulled", after: 200 * time.Millisecond, want: lines{ready: true}},
		{name: "B seated, A shuffling", after: 6 * time.Second, want: lines{b: true}},
		{name: "acknowledged", after: 300 * time.Millisecond, want: lines{done: true, b: true}},
		{name: "request released", request: ptr(false), after: 200 * time.Millisecond, want: lines{b: true}},
		{name: "A shuffled", after: 90 * time.Second, want: lines{ready: true, b: true}},
	}
	for _, st := range steps {
		if st.request != nil {
			pins.SwapRequest.Assert(*st.request)
		}
		run(st.after)
		assert.Equal(t, st.want, now(), st.name)
	}
	assert.Equal(t, "B", d.InPlay())
	assert.Equal(t, 1, d.Swaps())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []shufflerproto.Report{
		{Shoe: "B", ShoeID: "B-0001", Cards: 416},
		{Shoe: "A", ShoeID: "A-0002", Cards: 416},
	}, reports)
}

func ptr[T any](v T) *T { return &v }

func TestFaultString(t *testing.T) {
	assert.Equal(t, "LostAck", LostAck.String())
	assert.Equal(t, "Fault(99)", Fault(99).String())
}

func TestPinsFromBankMissing(t *testing.T) {
	bank, err := simgpio.NewBank(simgpio.DefaultConfig()[:3], clockwork.NewFakeClock())
	require.NoError(t, err)
	_, err = PinsFromBank(bank)
	assert.ErrorIs(t, err, simgpio.ErrUnknownPin)
}

// TestLoseAckEvery: with LoseAckEvery 2 the first swap is seated but
// never acknowledged, the second is, the third is not.
func TestLoseAckEvery(t *testing.T) {
	clk := clockwork.NewFakeClock()
	bank, err := simgpio.NewBank(simgpio.DefaultConfig(), clk)
	require.NoError(t, err)
	pins, err := PinsFromBank(bank)
	require.NoError(t, err)
	d := New(pins, Options{Poll: 100 * time.Millisecond, ShuffleTime: time.Second, LoseAckEvery: 2}, clk, zerolog.Nop())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	run := func(dur time.Duration) {
		require.NoError(t, simgpio.Step(ctx, clk, 1, 100*time.Millisecond, dur))
		require.NoError(t, clk.BlockUntilContext(ctx, 1))
	}
	var acked []bool
	for range 3 {
		run(2 * time.Second) // the other shoe shuffled
		pins.SwapRequest.Assert(true)
		run(10 * time.Second) // pulled, seated, and the acknowledgement's delay
		acked = append(acked, pins.SwapDone.Asserted())
		pins.SwapRequest.Assert(false)
		run(200 * time.Millisecond)
	}
	assert.Equal(t, []bool{false, true, false}, acked)
	assert.Equal(t, 3, d.Swaps(), "every swap is made; only its acknowledgement is lost")
}
