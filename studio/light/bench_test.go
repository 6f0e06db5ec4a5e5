package light

import (
	"context"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"github.com/livetable/livetable/table"
)

// BenchmarkEventToLamps is the time from a phase event sent to the tower
// to the lamps set and the change reported.
func BenchmarkEventToLamps(b *testing.B) {
	changes := make(chan Changed, 1)
	tw := New(&gpiotest.Pin{}, &gpiotest.Pin{}, &gpiotest.Pin{},
		Options{LastCall: -1, OnChange: func(c Changed) { changes <- c }}, clockwork.NewFakeClock(), zerolog.Nop())
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan table.Event)
	done := make(chan error)
	go func() { done <- tw.Run(ctx, events) }()
	<-changes
	phases := [2]table.Phase{table.PhaseBetting, table.PhaseDealing}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		events <- table.Event{Body: table.PhaseChanged{Phase: phases[i%2]}}
		<-changes
	}
	b.StopTimer()
	cancel()
	<-done
}
