package pinmap

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
)

// The functions a line can have. They are the keys of the gpio section of
// the configuration.
const (
	LightRed      = "light.red"
	LightYellow   = "light.yellow"
	LightGreen    = "light.green"
	CutCardSensor = "cutcard.sensor"
	ShufflerReady = "shuffler.ready"
	SwapRequest   = "shuffler.swap_request"
	SwapDone      = "shuffler.swap_done"
	ShoeAPresent  = "shoe_a.present"
	ShoeBPresent  = "shoe_b.present"
	PauseButton   = "supervisor.pause_button"
)

// Direction is which way a line carries its signal, seen from the daemon.
type Direction uint8

// The directions.
const (
	Input Direction = iota
	Output
)

// String implements fmt.Stringer.
func (d Direction) String() string {
	switch d {
	case Input:
		return "input"
	case Output:
		return "output"
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// Functions lists every known function with its direction, in a stable
// order (the order the console shows them in).
var Functions = []struct {
	Name string
	Dir  Direction
}{
	{LightRed, Output},
	{LightYellow, Output},
	{LightGreen, Output},
	{CutCardSensor, Input},
	{ShufflerReady, Input},
	{SwapRequest, Output},
	{SwapDone, Input},
	{ShoeAPresent, Input},
	{ShoeBPresent, Input},
	{PauseButton, Input},
}

// DirectionOf returns the direction of a known function, and false for an
// unknown one.
func DirectionOf(name string) (Direction, bool) {
	for _, f := range Functions {
		if f.Name == name {
			return f.Dir, true
		}
	}
	return Input, false
}

// PinConfig is one line of the gpio configuration.
type PinConfig struct {
	// Name is the line's function, one of the constants above.
	Name string `yaml:"name" json:"name"`
	// Line is the physical line as periph's gpioreg knows it ("GPIO17",
	// "17"); simulators use it only for display.
	Line string `yaml:"line" json:"line"`
	// ActiveLow is true when the line is asserted at the low level (a lamp
	// driver that sinks current, a sensor that pulls the line down).
	ActiveLow bool `yaml:"active_low" json:"active_low"`
}

// Errors of Validate.
var (
	// ErrUnknownFunction is a PinConfig whose Name is none of the known
	// functions (a typo in the configuration).
	ErrUnknownFunction = errors.New("pinmap: unknown function")
	// ErrDuplicate is a function or a line configured twice.
	ErrDuplicate = errors.New("pinmap: configured twice")
	// ErrNoLine is a PinConfig without a Line.
	ErrNoLine = errors.New("pinmap: no line")
)

// Validate checks a configuration: every name known, every line given, no
// function and no line used twice. It reports every problem, joined.
func Validate(cfgs []PinConfig) error {
	var errs []error
	names := map[string]bool{}
	lines := map[string]string{}
	for _, c := range cfgs {
		if _, ok := DirectionOf(c.Name); !ok {
			errs = append(errs, fmt.Errorf("%w %q", ErrUnknownFunction, c.Name))
		}
		if c.Line == "" {
			errs = append(errs, fmt.Errorf("%w for %q", ErrNoLine, c.Name))
		}
		if names[c.Name] {
			errs = append(errs, fmt.Errorf("%w: function %q", ErrDuplicate, c.Name))
		}
		names[c.Name] = true
		if other, ok := lines[c.Line]; ok && c.Line != "" {
			errs = append(errs, fmt.Errorf("%w: line %q (%s and %s)", ErrDuplicate, c.Line, other, c.Name))
		}
		lines[c.Line] = c.Name
	}
	return errors.Join(errs...)
}

// Sorted returns cfgs in the order of Functions (unknown names last, by
// name), so that logs and the console list lines the same way every time.
func Sorted(cfgs []PinConfig) []PinConfig {
	rank := func(name string) int {
		for i, f := range Functions {
			if f.Name == name {
				return i
			}
		}
		return len(Functions)
	}
	out := slices.Clone(cfgs)
	slices.SortStableFunc(out, func(a, b PinConfig) int {
		if ra, rb := rank(a.Name), rank(b.Name); ra != rb {
			return ra - rb
		}
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Logical returns p seen in logical levels: when activeLow is true, Read,
// Out and PWM are inverted, so High always means asserted. When activeLow
// is false p itself is returned, which costs nothing.
//
// Pull settings and edges are physical and pass through unchanged: a
// rising physical edge on an active-low line is a logical de-assertion, and
// callers that care read the level after the edge anyway.
func Logical(p gpio.PinIO, activeLow bool) gpio.PinIO {
	if !activeLow || p == nil {
		return p
	}
	return &inverted{PinIO: p}
}

// inverted is an active-low line seen as active-high.
type inverted struct {
	gpio.PinIO
}

// String implements conn.Resource.
func (p *inverted) String() string { return p.PinIO.String() + "(active-low)" }

// Read implements gpio.PinIn.
func (p *inverted) Read() gpio.Level { return !p.PinIO.Read() }

// Out implements gpio.PinOut.
func (p *inverted) Out(l gpio.Level) error { return p.PinIO.Out(!l) }

// PWM implements gpio.PinOut: a duty of d asserted is DutyMax-d at the pin.
func (p *inverted) PWM(d gpio.Duty, f physic.Frequency) error {
	if !d.Valid() {
		return fmt.Errorf("pinmap: invalid duty %d", int32(d))
	}
	return p.PinIO.PWM(gpio.DutyMax-d, f)
}

// WaitForEdge implements gpio.PinIn; edges are the same in both polarities.
func (p *inverted) WaitForEdge(timeout time.Duration) bool { return p.PinIO.WaitForEdge(timeout) }

// Real implements gpio.RealPin so periph's helpers find the physical pin.
func (p *inverted) Real() gpio.PinIO {
	if r, ok := p.PinIO.(gpio.RealPin); ok {
		return r.Real()
	}
	return p.PinIO
}

var (
	_ gpio.PinIO   = (*inverted)(nil)
	_ gpio.RealPin = (*inverted)(nil)
)

// Lines are the table's lines by function, already in logical levels.
// cmd/tabled builds them with Open on a board, or takes them from a
// simulated bank, and hands each component the lines it uses.
type Lines map[string]gpio.PinIO

// ErrNoSuchLine is a configured line that the board does not have.
var ErrNoSuchLine = errors.New("pinmap: no such line")

// Open looks every configured line up with byName (periph's gpioreg.ByName
// once cmd/* has initialised periph.io/x/host) and wraps it in its
// polarity. It validates cfgs first and reports every line it cannot find.
func Open(cfgs []PinConfig, byName func(line string) gpio.PinIO) (Lines, error) {
	if err := Validate(cfgs); err != nil {
		return nil, err
	}
	l := make(Lines, len(cfgs))
	var errs []error
	for _, c := range cfgs {
		p := byName(c.Line)
		if p == nil {
			errs = append(errs, fmt.Errorf("%w: %s for %s", ErrNoSuchLine, c.Line, c.Name))
			continue
		}
		l[c.Name] = Logical(p, c.ActiveLow)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return l, nil
}

// In is the line of a function as an input, nil when not configured.
func (l Lines) In(name string) gpio.PinIn {
	if p, ok := l[name]; ok {
		return p
	}
	return nil
}

// Out is the line of a function as an output, nil when not configured.
func (l Lines) Out(name string) gpio.PinOut {
	if p, ok := l[name]; ok {
		return p
	}
	return nil
}
