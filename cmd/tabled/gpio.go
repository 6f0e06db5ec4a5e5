package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/host/v3"

	"github.com/livetable/livetable/shuffler"
	"github.com/livetable/livetable/shuffler/pinmap"
	"github.com/livetable/livetable/studio/console"
	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/rules"
)

// hardware is the table's GPIO side: its lines (the board's or simulated
// ones) and, with --sim, the simulated shuffler device on them.
type hardware struct {
	lines  pinmap.Lines
	studio studioDevice // nil on a real board
}

// studioDevice is the simulated studio behind --sim (sim.go): the shuffler
// device to run, and the cut-card sensor the simulated shoe's cut card
// passes.
type studioDevice interface {
	PulseCutCard()
	Run(ctx context.Context) error
}

// openGPIO returns the board's lines through periph.io's GPIO character
// device driver, or the simulated studio's lines.
func openGPIO(cfg Config, rs *rules.Set, clk clockwork.Clock, log zerolog.Logger) (*hardware, error) {
	if cfg.GPIO.Sim {
		return simGPIO(cfg, rs, clk, log)
	}
	if _, err := host.Init(); err != nil {
		return nil, fmt.Errorf("tabled: gpio: %w", err)
	}
	lines, err := pinmap.Open(cfg.GPIO.Pins, gpioreg.ByName)
	if err != nil {
		return nil, fmt.Errorf("tabled: gpio: %w", err)
	}
	return &hardware{lines: lines}, nil
}

// hasShuffler reports whether the shuffler's lines are configured.
func (h *hardware) hasShuffler() bool {
	for _, n := range []string{pinmap.ShufflerReady, pinmap.SwapRequest, pinmap.SwapDone, pinmap.ShoeAPresent, pinmap.ShoeBPresent} {
		if _, ok := h.lines[n]; !ok {
			return false
		}
	}
	return true
}

// runShuffler starts the dual-shoe swap controller: its cut-card sensor,
// alarms and completed swaps go to the table; a closed shoe (cut card
// out, round over) requests the swap. onSwap is called with each new shoe
// in play (the demo loads the simulated card shoe with it; a real shoe
// reports its own SHOE_ID). It returns the controller, for the
// supervisor's reset of a Fault (tablectl shuffler-reset).
func runShuffler(ctx context.Context, g *errgroup.Group, h *hardware, rs *rules.Set, cfg Config,
	ctrl *table.Controller, inputs chan<- table.Input, onSwap func(shoeID string), clk clockwork.Clock, log zerolog.Logger) *shuffler.Controller {
	so := shuffler.DefaultOptions()
	so.ExpectCards, so.BurnCards, so.IDPrefix = rs.Decks*52, rs.BurnOnNewShoe, cfg.Table+"-"
	if cfg.Demo.Enabled {
		// The demo's simulated swap takes under 2 s (sim.go): its lost
		// acknowledgement (demo.shuffler_fault_every) faults in seconds,
		// not the half minute a real shuffler is given.
		so.SwapTimeout = demoSwapTimeout
	}
	sh := shuffler.New(shuffler.PinsFromLines(h.lines), so, clk, log.With().Str("part", "shuffler").Logger())
	out := make(chan table.Input, 16)
	bodies := make(chan table.Body, 16)
	g.Go(func() error { return ignoreCancel(sh.Run(ctx, out, bodies)) })
	if h.studio != nil {
		g.Go(func() error { return ignoreCancel(h.studio.Run(ctx)) })
	}
	g.Go(func() error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case b := <-bodies:
				// The shuffler logs its own state changes ("shuffler
				// state"); the body is the same fact.
				log.Debug().Str("shuffler", b.Kind()).Interface("data", b).Msg("shuffler")
			case in := <-out:
				if sc, ok := in.(table.ShoeChanged); ok {
					// The card shoe announces the new shoe itself (SHOE_ID):
					// one source for one fact.
					log.Info().Str("shoe", sc.ShoeID).Msg("shuffler: swap done, new shoe in play")
					if onSwap != nil {
						onSwap(sc.ShoeID)
					}
					continue
				}
				select {
				case inputs <- in:
				case <-ctx.Done():
					return nil
				}
			}
		}
	})
	events, _ := ctrl.Subscribe("shuffler", 256)
	g.Go(func() error { return sh.SwapWhenClosed(ctx, ctrl, events) })
	return sh
}

// demoSwapTimeout is the demo's bound on a swap's acknowledgement.
const demoSwapTimeout = 5 * time.Second

// errNoShuffler is a supervisor's shuffler reset on a daemon whose
// shuffler does not run.
var errNoShuffler = errors.New("this table's shuffler is not running (not wired, gpio.shuffler: false, or still starting)")

// resetShuffler is the supervisor's reset of the shuffler's Fault, the
// one door of every path a supervisor has to it: tablectl over the local
// socket, the console, a signed shuffler_reset over MQTT. The shuffler's
// own machine refuses it unless in Fault (a reset in another state would
// drop a swap under way), and has the table journal who reset it, after
// which fault (a non-pausing shuffler.reset alarm): the audit trail.
func (d *tabled) resetShuffler(ctx context.Context, by, reason string) error {
	sh := d.shuffler.Load()
	if sh == nil {
		return errNoShuffler
	}
	cleared, err := sh.ResetFault(ctx, by, reason)
	if err != nil {
		return err
	}
	d.log.Info().Str("by", by).Str("reason", reason).Str("fault", cleared).
		Msg("shuffler reset: it reads its sensors again and takes swap requests; the table stays paused until a resume")
	return nil
}

// shufflerCheck adds the shuffler's health check (console.CheckShuffler)
// to health, once the shuffler runs: failing while it is latched in its
// fault, so that /healthz, tablectl status and the supervisor view (which
// offers the reset then) say so.
func (d *tabled) shufflerCheck(health console.HealthFunc) console.HealthFunc {
	return func() console.Health {
		h := health()
		sh := d.shuffler.Load()
		if sh == nil {
			return h
		}
		c := console.Check{Name: console.CheckShuffler, OK: true, Detail: sh.State().String()}
		if st := sh.State(); st == shuffler.Fault {
			c.OK, c.Detail = false, sh.Fault()
		}
		h.Checks = append(h.Checks, c)
		return h
	}
}

// consoleShufflerReset is resetShuffler for the console: its refusals
// wrap the console's sentinels, which name them to the page.
func (d *tabled) consoleShufflerReset(ctx context.Context, by, reason string) error {
	err := d.resetShuffler(ctx, by, reason)
	switch {
	case errors.Is(err, shuffler.ErrNotInFault):
		return fmt.Errorf("%w: %w", console.ErrShufflerNotInFault, err)
	case errors.Is(err, errNoShuffler), errors.Is(err, shuffler.ErrStopped):
		return fmt.Errorf("%w: %w", console.ErrNoShuffler, err)
	}
	return err
}

// linkShufflerReset is resetShuffler for a signed shuffler_reset over
// MQTT: its refusals wrap the link's sentinels, which give the reply's
// code (shuffler_not_in_fault, no_shuffler).
func (d *tabled) linkShufflerReset(ctx context.Context, by, reason string) error {
	err := d.resetShuffler(ctx, by, reason)
	switch {
	case errors.Is(err, shuffler.ErrNotInFault):
		return fmt.Errorf("%w: %w", mqttlink.ErrShufflerNotInFault, err)
	case errors.Is(err, errNoShuffler), errors.Is(err, shuffler.ErrStopped):
		return fmt.Errorf("%w: %w", mqttlink.ErrNoShuffler, err)
	}
	return err
}
