package gpio

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	pgpio "periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"github.com/livetable/livetable/shuffler/pinmap"
)

// edgeBuffer is how many undelivered edges a pin keeps. Nothing in the
// project waits for edges on simulated pins in bulk, so a small buffer only
// has to cover a burst (a bouncing sensor) between two WaitForEdge calls.
const edgeBuffer = 64

// Pin is one simulated line. The embedded gpiotest.Pin is the physical
// side: its level L is what the wire carries.
type Pin struct {
	*gpiotest.Pin
	cfg     pinmap.PinConfig
	logical pgpio.PinIO
	dropped atomic.Uint64
}

// NewPin returns a pin for cfg, released (logically low), whose
// WaitForEdge timeouts run on clk.
func NewPin(cfg pinmap.PinConfig, clk clockwork.Clock) *Pin {
	if clk == nil {
		clk = clockwork.NewRealClock()
	}
	num, err := strconv.Atoi(strings.TrimLeft(cfg.Line, "GPIOgpio"))
	if err != nil {
		num = -1
	}
	dir, _ := pinmap.DirectionOf(cfg.Name)
	fn := "In/Low"
	if dir == pinmap.Output {
		fn = "Out/Low"
	}
	raw := &gpiotest.Pin{
		N:         cfg.Name,
		Num:       num,
		Fn:        fn,
		Clock:     clk,
		L:         pgpio.Level(cfg.ActiveLow), // released
		EdgesChan: make(chan pgpio.Level, edgeBuffer),
	}
	return &Pin{Pin: raw, cfg: cfg, logical: pinmap.Logical(raw, cfg.ActiveLow)}
}

// Config is the line's configuration.
func (p *Pin) Config() pinmap.PinConfig { return p.cfg }

// Logical is the pin as production code must receive it: High means
// asserted whatever the polarity.
func (p *Pin) Logical() pgpio.PinIO { return p.logical }

// Drive sets the physical level, as the device on the other end of the wire
// would, and queues an edge when the level changes. An edge that does not
// fit in the buffer is dropped and counted (see Dropped), like an
// interrupt lost by a busy kernel.
func (p *Pin) Drive(l pgpio.Level) {
	p.Lock()
	changed := p.L != l
	p.L = l
	p.Unlock()
	if !changed {
		return
	}
	select {
	case p.EdgesChan <- l:
	default:
		p.dropped.Add(1)
	}
}

// Assert drives the line to its asserted (on=true) or released level,
// taking its polarity into account.
func (p *Pin) Assert(on bool) {
	p.Drive(pgpio.Level(on != p.cfg.ActiveLow))
}

// Asserted reports whether the line is at its asserted level.
func (p *Pin) Asserted() bool {
	return bool(p.Read()) != p.cfg.ActiveLow
}

// Dropped is the number of edges lost because nobody consumed them.
func (p *Pin) Dropped() uint64 { return p.dropped.Load() }

// ErrUnknownPin is a Bank lookup of a function the bank was not built with.
var ErrUnknownPin = errors.New("gpio: no simulated pin for that function")

// Bank is a set of simulated pins, one per configured function.
type Bank struct {
	pins  map[string]*Pin
	order []string
}

// DefaultConfig is the configuration of the simulated table: every function
// on its own line, with the shuffler's inputs and the cut-card sensor
// active-low (as open-collector sensors usually are) so that simulated runs
// go through the inversion.
func DefaultConfig() []pinmap.PinConfig {
	lowActive := map[string]bool{
		pinmap.CutCardSensor: true,
		pinmap.ShufflerReady: true,
		pinmap.SwapDone:      true,
		pinmap.PauseButton:   true,
	}
	cfgs := make([]pinmap.PinConfig, 0, len(pinmap.Functions))
	for i, f := range pinmap.Functions {
		cfgs = append(cfgs, pinmap.PinConfig{
			Name:      f.Name,
			Line:      fmt.Sprintf("GPIO%d", 5+i),
			ActiveLow: lowActive[f.Name],
		})
	}
	return cfgs
}

// NewBank builds one pin per entry of cfgs after validating them.
func NewBank(cfgs []pinmap.PinConfig, clk clockwork.Clock) (*Bank, error) {
	if err := pinmap.Validate(cfgs); err != nil {
		return nil, fmt.Errorf("gpio: bank: %w", err)
	}
	b := &Bank{pins: make(map[string]*Pin, len(cfgs))}
	for _, c := range pinmap.Sorted(cfgs) {
		b.pins[c.Name] = NewPin(c, clk)
		b.order = append(b.order, c.Name)
	}
	return b, nil
}

// Pin returns the pin of a function.
func (b *Bank) Pin(name string) (*Pin, error) {
	p, ok := b.pins[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownPin, name)
	}
	return p, nil
}

// Names lists the bank's functions in display order.
func (b *Bank) Names() []string { return append([]string(nil), b.order...) }

// Lines are the bank's pins as production code receives them (logical
// levels), keyed by function: the same shape pinmap.Open gives on a board.
func (b *Bank) Lines() pinmap.Lines {
	l := make(pinmap.Lines, len(b.pins))
	for name, p := range b.pins {
		l[name] = p.Logical()
	}
	return l
}

// Snapshot is every line's logical state (true = asserted), for the console.
func (b *Bank) Snapshot() map[string]bool {
	m := make(map[string]bool, len(b.pins))
	for name, p := range b.pins {
		m[name] = p.Asserted()
	}
	return m
}

// Step advances clk by total in increments of step. Before each increment
// it waits until at least waiters timers are pending on the clock, which is
// how a test knows that every polling loop it started has finished its
// previous tick and parked again. It does not wait after the last
// increment, since what is pending then depends on what the tick did: call
// clk.BlockUntilContext with the count the test expects. It returns early
// with ctx's error.
func Step(ctx context.Context, clk *clockwork.FakeClock, waiters int, step, total time.Duration) error {
	if step <= 0 {
		return fmt.Errorf("gpio: step %v must be positive", step)
	}
	for done := time.Duration(0); done < total; done += step {
		if err := clk.BlockUntilContext(ctx, waiters); err != nil {
			return fmt.Errorf("gpio: waiting for %d waiters: %w", waiters, err)
		}
		d := min(step, total-done)
		clk.Advance(d)
	}
	return nil
}
