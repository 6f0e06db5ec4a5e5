package shuffler

import (
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"github.com/livetable/livetable/firmware-protocols/shufflerproto"
	"github.com/livetable/livetable/shuffler/pinmap"
	simgpio "github.com/livetable/livetable/simulators/gpio"
)

// CutCardPass is how long the simulated cut card stays in front of the
// sensor: a dealer pulls a card out of the shoe in a few tenths of a
// second.
const CutCardPass = 300 * time.Millisecond

// Studio is the whole simulated GPIO side of a table: a pin bank with the
// default configuration and a shuffler device on it. `tabled --sim` and the
// demo build one and hand Lines to the light and the swap controller
// exactly as they would hand the board's lines.
type Studio struct {
	Bank   *simgpio.Bank
	Device *Device
	clk    clockwork.Clock
	cut    *simgpio.Pin
}

// NewStudio builds the bank and the device. Run the device with
// s.Device.Run; opts.OnReport is where the shuffler's report lines go (pass
// them to shuffler.Controller.Report).
func NewStudio(opts Options, clk clockwork.Clock, log zerolog.Logger) (*Studio, error) {
	if clk == nil {
		clk = clockwork.NewRealClock()
	}
	bank, err := simgpio.NewBank(simgpio.DefaultConfig(), clk)
	if err != nil {
		return nil, fmt.Errorf("shuffler sim: %w", err)
	}
	pins, err := PinsFromBank(bank)
	if err != nil {
		return nil, err
	}
	cut, err := bank.Pin(pinmap.CutCardSensor)
	if err != nil {
		return nil, fmt.Errorf("shuffler sim: %w", err)
	}
	return &Studio{Bank: bank, Device: New(pins, opts, clk, log), clk: clk, cut: cut}, nil
}

// Lines are the production side of every simulated line.
func (s *Studio) Lines() pinmap.Lines { return s.Bank.Lines() }

// Snapshot is every line's logical state, for the console.
func (s *Studio) Snapshot() map[string]bool { return s.Bank.Snapshot() }

// PulseCutCard passes the cut card in front of the sensor: asserted now,
// released CutCardPass later on the studio's clock. The simulated shoe
// calls it when its cut card comes out.
func (s *Studio) PulseCutCard() {
	s.cut.Assert(true)
	s.clk.AfterFunc(CutCardPass, func() { s.cut.Assert(false) })
}

// ReportTo returns an OnReport function that formats each report as the
// shuffler's serial line and hands it to deliver, for wiring that reads the
// line format (shufflerproto.Parse) rather than values.
func ReportTo(deliver func(line string)) func(shufflerproto.Report) {
	return func(r shufflerproto.Report) { deliver(r.String() + "\n") }
}
