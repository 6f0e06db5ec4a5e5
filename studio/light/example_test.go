package light_test

import (
	"context"
	"fmt"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"github.com/livetable/livetable/studio/light"
	"github.com/livetable/livetable/table"
)

// The tower follows the table's phases; each change is reported for the
// journal.
func ExampleTower() {
	red, yellow, green := &gpiotest.Pin{N: "red"}, &gpiotest.Pin{N: "yellow"}, &gpiotest.Pin{N: "green"}
	changes := make(chan light.Changed, 8)
	opts := light.DefaultOptions()
	opts.OnChange = func(c light.Changed) { changes <- c }
	tw := light.New(red, yellow, green, opts, clockwork.NewFakeClock(), zerolog.Nop())

	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan table.Event)
	done := make(chan error)
	go func() { done <- tw.Run(ctx, events) }()
	fmt.Println((<-changes).Pattern)
	for _, p := range []table.Phase{table.PhaseBetting, table.PhaseLastCall, table.PhaseDealing, table.PhasePaused} {
		events <- table.Event{Body: table.PhaseChanged{Phase: p}}
		c := <-changes
		fmt.Println(p, "->", c.Pattern, "red:", c.Red, "yellow:", c.Yellow, "green:", c.Green)
	}
	cancel()
	<-done
	fmt.Println((<-changes).Pattern, red.Read(), yellow.Read(), green.Read())
	// Output:
	// red
	// betting -> green red: false yellow: false green: true
	// last_call -> yellow red: false yellow: true green: false
	// dealing -> red red: true yellow: false green: false
	// paused -> red_blink red: true yellow: false green: false
	// off Low Low Low
}
