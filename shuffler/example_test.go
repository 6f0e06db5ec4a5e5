package shuffler_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"github.com/livetable/livetable/shuffler"
	"github.com/livetable/livetable/shuffler/pinmap"
	simgpio "github.com/livetable/livetable/simulators/gpio"
	"github.com/livetable/livetable/table"
)

// A cut-card sensor on an active-low line: one input per card passing,
// however the sensor bounces.
func ExampleNewCutCardSensor() {
	clk := clockwork.NewFakeClock()
	pin := simgpio.NewPin(pinmap.PinConfig{Name: pinmap.CutCardSensor, Line: "GPIO27", ActiveLow: true}, clk)
	s := shuffler.NewCutCardSensor(pin.Logical(), shuffler.SensorOptions{Poll: 5 * time.Millisecond, Debounce: 20 * time.Millisecond}, clk, zerolog.Nop())
	out := make(chan table.Input, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx, out) }()

	for _, on := range []bool{true, false, true, true, true, true, true, true, false} {
		_ = clk.BlockUntilContext(ctx, 1)
		pin.Assert(on)
		clk.Advance(5 * time.Millisecond)
	}
	_ = clk.BlockUntilContext(ctx, 1)
	cancel()
	<-done
	for len(out) > 0 {
		in := <-out
		if c, ok := in.(table.CutCardSeen); ok {
			fmt.Printf("%s from the %s\n", in.Kind(), c.Source)
		}
	}
	// Output:
	// cut_card from the sensor
}
