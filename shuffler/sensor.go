package shuffler

import (
	"context"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"periph.io/x/conn/v3/gpio"

	"github.com/livetable/livetable/table"
)

// SensorOptions configures a Sensor.
type SensorOptions struct {
	// Poll is how often the line is sampled (default 5ms). A cut card
	// takes well over 100ms to pass the sensor and a button press longer,
	// so polling loses nothing and keeps the loop cancellable and
	// testable with a fake clock.
	Poll time.Duration
	// Debounce is how long a new level must hold before it counts
	// (default 20ms).
	Debounce time.Duration
}

// DefaultSensorOptions returns the defaults.
func DefaultSensorOptions() SensorOptions {
	return SensorOptions{Poll: 5 * time.Millisecond, Debounce: 20 * time.Millisecond}
}

func (o *SensorOptions) ensureDefaults() {
	d := DefaultSensorOptions()
	if o.Poll <= 0 {
		o.Poll = d.Poll
	}
	if o.Debounce < 0 {
		o.Debounce = 0
	} else if o.Debounce == 0 {
		o.Debounce = d.Debounce
	}
}

// Sensor is a debounced input line that emits one table input each time it
// becomes asserted: the cut-card sensor for tables without the dual-shoe
// Controller, or the supervisor's pause button.
type Sensor struct {
	pin  gpio.PinIn
	in   table.Input
	opts SensorOptions
	clk  clockwork.Clock
	log  zerolog.Logger
}

// NewSensor returns a sensor on pin (logical levels: High = asserted) that
// emits in on every debounced assertion.
func NewSensor(pin gpio.PinIn, in table.Input, opts SensorOptions, clk clockwork.Clock, log zerolog.Logger) *Sensor {
	opts.ensureDefaults()
	if clk == nil {
		clk = clockwork.NewRealClock()
	}
	return &Sensor{pin: pin, in: in, opts: opts, clk: clk,
		log: log.With().Str("component", "sensor").Str("input", in.Kind()).Logger()}
}

// NewCutCardSensor is the cut-card sensor: it emits
// table.CutCardSeen{Source: "sensor"}.
func NewCutCardSensor(pin gpio.PinIn, opts SensorOptions, clk clockwork.Clock, log zerolog.Logger) *Sensor {
	return NewSensor(pin, table.CutCardSeen{Source: "sensor"}, opts, clk, log)
}

// Run samples the line until ctx is done, sending the sensor's input on out
// for every assertion. It returns nil when ctx is done and an error only
// when the line cannot be set up as an input.
func (s *Sensor) Run(ctx context.Context, out chan<- table.Input) error {
	if s.pin == nil {
		return fmt.Errorf("%w: sensor", ErrNoPin)
	}
	if err := s.pin.In(gpio.PullNoChange, gpio.NoEdge); err != nil {
		return fmt.Errorf("shuffler: sensor %s: %w", s.pin, err)
	}
	db := debouncer{hold: s.opts.Debounce}
	db.sample(bool(s.pin.Read()), s.clk.Now())
	for {
		timer := s.clk.NewTimer(s.opts.Poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case now := <-timer.Chan():
			level, changed := db.sample(bool(s.pin.Read()), now)
			if !changed || !level {
				continue
			}
			s.log.Info().Msg("sensor asserted")
			select {
			case out <- s.in:
			case <-ctx.Done():
				return nil
			}
		}
	}
}
