package light

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"periph.io/x/conn/v3/gpio"

	"github.com/livetable/livetable/table"
)

// Pattern names what the tower shows.
type Pattern string

// The patterns.
const (
	PatternOff      Pattern = "off"
	PatternRed      Pattern = "red"
	PatternYellow   Pattern = "yellow"
	PatternGreen    Pattern = "green"
	PatternRedBlink Pattern = "red_blink"
)

// Changed reports the tower's lamps after a change of pattern. For the
// blinking pattern it gives the lamps at the moment the pattern started.
type Changed struct {
	Red     bool   `json:"red"`
	Yellow  bool   `json:"yellow"`
	Green   bool   `json:"green"`
	Pattern string `json:"pattern"`
}

// Kind implements table.Body.
func (Changed) Kind() string { return "light" }

// Options configures a Tower. The zero value of a field means its default.
type Options struct {
	// BlinkPeriod is one on+off cycle of the blinking pattern (default 1s).
	BlinkPeriod time.Duration
	// LastCall turns the light yellow this long before a betting phase's
	// deadline, for controllers that do not emit PhaseLastCall themselves
	// (default 5s; negative disables it).
	LastCall time.Duration
	// OnChange, when set, is called from Run's goroutine with every change
	// of pattern. It must not block: the controller hands it to its own
	// queue.
	OnChange func(Changed)
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{BlinkPeriod: time.Second, LastCall: 5 * time.Second}
}

func (o *Options) ensureDefaults() {
	d := DefaultOptions()
	if o.BlinkPeriod <= 0 {
		o.BlinkPeriod = d.BlinkPeriod
	}
	if o.LastCall == 0 {
		o.LastCall = d.LastCall
	}
}

// Tower is the traffic light. Run owns it; Halt may be called from any
// goroutine.
type Tower struct {
	red, yellow, green gpio.PinOut
	opts               Options
	clk                clockwork.Clock
	log                zerolog.Logger

	// mu guards the following.
	mu    sync.Mutex
	lamps Changed // as last driven, for Lamps
}

// Lamps are the lamps as last driven (the blinking lamp in its current
// phase), for a console on real hardware where no simulated bank exists.
func (t *Tower) Lamps() Changed {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lamps
}

// New returns a tower on three output lines in logical levels (High = lamp
// on; wrap active-low lines with shuffler/pinmap.Logical first).
func New(red, yellow, green gpio.PinOut, opts Options, clk clockwork.Clock, log zerolog.Logger) *Tower {
	opts.ensureDefaults()
	if clk == nil {
		clk = clockwork.NewRealClock()
	}
	return &Tower{red: red, yellow: yellow, green: green, opts: opts, clk: clk,
		log: log.With().Str("component", "light").Logger()}
}

// state is what the tower knows of the table.
type state struct {
	phase    table.Phase
	deadline time.Time
	alarm    bool // an alarm paused the table and no Resumed came yet
	paused   bool // a Paused event came and no Resumed yet
}

// patternAt decides the pattern from the state alone: the pure half of the
// tower. lastCall <= 0 disables the switch to yellow before a deadline.
func patternAt(s state, now time.Time, lastCall time.Duration) Pattern {
	if s.alarm || s.paused || s.phase == table.PhasePaused {
		return PatternRedBlink
	}
	switch s.phase {
	case table.PhaseBetting:
		if lastCall > 0 && !s.deadline.IsZero() && !now.Before(s.deadline.Add(-lastCall)) {
			return PatternYellow
		}
		return PatternGreen
	case table.PhaseLastCall:
		return PatternYellow
	}
	// Dealing, settled, closed, idle, none yet and any phase this build
	// does not know: bets are not open.
	return PatternRed
}

// apply folds one event into the state.
func (s *state) apply(b table.Body) {
	switch v := b.(type) {
	case table.PhaseChanged:
		s.phase, s.deadline = v.Phase, v.Deadline
	case *table.PhaseChanged:
		s.phase, s.deadline = v.Phase, v.Deadline
	case table.Alarm:
		s.alarm = s.alarm || v.Pauses
	case *table.Alarm:
		s.alarm = s.alarm || v.Pauses
	case table.Paused, *table.Paused:
		s.paused = true
	case table.Resumed, *table.Resumed:
		s.alarm, s.paused = false, false
	}
}

// Run shows the table's state until ctx is done or events is closed, then
// turns every lamp off. It returns nil in both cases: a lamp that fails is
// logged, not fatal, because a broken bulb must not stop the table.
func (t *Tower) Run(ctx context.Context, events <-chan table.Event) error {
	var (
		s          state
		cur        = Pattern("")
		blinkOn    bool
		nextToggle time.Time
	)
	show := func(now time.Time) {
		p := patternAt(s, now, t.opts.LastCall)
		if p == cur {
			return
		}
		cur = p
		blinkOn, nextToggle = true, now.Add(t.opts.BlinkPeriod/2)
		c := levels(p, blinkOn)
		t.set(c)
		t.log.Info().Str("pattern", c.Pattern).Str("phase", string(s.phase)).Msg("light changed")
		if t.opts.OnChange != nil {
			t.opts.OnChange(c)
		}
	}
	defer func() {
		if err := t.Halt(); err != nil {
			t.log.Error().Err(err).Msg("light off failed")
		}
		t.log.Info().Msg("light off")
		if t.opts.OnChange != nil {
			t.opts.OnChange(levels(PatternOff, false))
		}
	}()

	show(t.clk.Now())
	for {
		// The next moment the lamps change by themselves, if any.
		var wake time.Time
		switch {
		case cur == PatternRedBlink:
			wake = nextToggle
		case cur == PatternGreen && t.opts.LastCall > 0 && !s.deadline.IsZero():
			wake = s.deadline.Add(-t.opts.LastCall)
		}
		var timer clockwork.Timer
		var fired <-chan time.Time
		if !wake.IsZero() {
			timer = t.clk.NewTimer(t.clk.Until(wake))
			fired = timer.Chan()
		}
		select {
		case <-ctx.Done():
			stop(timer)
			return nil
		case ev, ok := <-events:
			stop(timer)
			if !ok {
				return nil
			}
			s.apply(ev.Body)
			show(t.clk.Now())
		case now := <-fired:
			if cur == PatternRedBlink && !now.Before(nextToggle) {
				blinkOn = !blinkOn
				nextToggle = nextToggle.Add(t.opts.BlinkPeriod / 2)
				t.set(levels(cur, blinkOn))
				continue
			}
			show(now)
		}
	}
}

func stop(t clockwork.Timer) {
	if t != nil {
		t.Stop()
	}
}

// levels are the lamps of a pattern; on is the blinking lamp's phase.
func levels(p Pattern, on bool) Changed {
	c := Changed{Pattern: string(p)}
	switch p {
	case PatternRed:
		c.Red = true
	case PatternYellow:
		c.Yellow = true
	case PatternGreen:
		c.Green = true
	case PatternRedBlink:
		c.Red = on
	}
	return c
}

// set drives the lamps; a failing lamp is logged and the others still set.
func (t *Tower) set(c Changed) {
	if err := t.drive(c); err != nil {
		t.log.Error().Err(err).Str("pattern", c.Pattern).Msg("light output failed")
	}
}

func (t *Tower) drive(c Changed) error {
	t.mu.Lock()
	t.lamps = c
	t.mu.Unlock()
	var errs []error
	for _, l := range []struct {
		name string
		pin  gpio.PinOut
		on   bool
	}{{"red", t.red, c.Red}, {"yellow", t.yellow, c.Yellow}, {"green", t.green, c.Green}} {
		if l.pin == nil {
			continue
		}
		if err := l.pin.Out(gpio.Level(l.on)); err != nil {
			errs = append(errs, fmt.Errorf("light: %s lamp: %w", l.name, err))
		}
	}
	return errors.Join(errs...)
}

// Halt turns every lamp off.
func (t *Tower) Halt() error {
	return t.drive(Changed{Pattern: string(PatternOff)})
}
