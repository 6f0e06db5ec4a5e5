//go:build !production

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	simdealer "github.com/livetable/livetable/simulators/dealer"
	simplayers "github.com/livetable/livetable/simulators/players"
	simshoe "github.com/livetable/livetable/simulators/shoe"
	simshuffler "github.com/livetable/livetable/simulators/shuffler"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/rules"
)

// This file is the demo's and --sim's wiring of the simulators. A
// production build (-tags production: make build) leaves it out, and
// with it every simulator and periph's gpiotest: see sim_off.go.

// buildRefuses is nil: this build has the simulators and the embedded
// broker (sim_off.go has the production build's answer).
func buildRefuses(Config) error { return nil }

// simGPIO is the simulated studio's GPIO: its lines and the simulated
// shuffler device on them.
func simGPIO(cfg Config, rs *rules.Set, clk clockwork.Clock, log zerolog.Logger) (*hardware, error) {
	so := simshuffler.DefaultOptions()
	so.Cards = rs.Decks * 52
	if cfg.Demo.Enabled {
		// A demo shuffles in seconds, not the 90 s of a real machine.
		so.ShuffleTime, so.PullTime, so.SwapTime = 6*time.Second, 500*time.Millisecond, 1500*time.Millisecond
		so.LoseAckEvery = cfg.Demo.ShufflerFaultEvery
	}
	st, err := simshuffler.NewStudio(so, clk, log.With().Str("part", "shufflersim").Logger())
	if err != nil {
		return nil, err
	}
	return &hardware{lines: st.Lines(), studio: simStudio{st}}, nil
}

// simStudio adapts the simulated studio to the hardware's seam.
type simStudio struct{ st *simshuffler.Studio }

func (s simStudio) PulseCutCard()                 { s.st.PulseCutCard() }
func (s simStudio) Run(ctx context.Context) error { return s.st.Device.Run(ctx) }

// demo is the demo's simulated card shoe, then its dealer and players.
type demo struct {
	dev *simshoe.Device
}

// startDemo puts the simulated card shoe on a pseudo-terminal and returns
// its path for the real serial path to open. A demo restarted with a shoe
// in play goes on with that shoe (resumeDemoShoe); seed varies the seed of
// the next shoes with the journal, so a restarted demo does not deal a
// shoe it dealt before in the same order (the table keeps the last shoes'
// order across restarts and would rightly raise the shuffle alarm).
func startDemo(ctx context.Context, g *errgroup.Group, cfg Config, rs *rules.Set, copts table.Options, seed uint64, log zerolog.Logger) (*demo, string, error) {
	so := simshoe.DefaultOptions()
	so.Decks, so.Seed, so.Penetration = rs.Decks, cfg.Demo.Seed+seed, cfg.Demo.Penetration
	so.Faults.MisreadEvery = cfg.Demo.MisreadEvery
	resumeDemoShoe(cfg, copts, &so, log)
	dev, err := simshoe.New(so, log.With().Str("part", "shoesim").Logger())
	if err != nil {
		return nil, "", fmt.Errorf("tabled: simulated shoe: %w", err)
	}
	log.Info().Str("pty", dev.Path()).Msg("simulated shoe on a pseudo-terminal")
	g.Go(func() error { return ignoreCancel(dev.Run(ctx)) })
	// Closing the pty on shutdown wakes the device's blocked reads.
	g.Go(func() error { <-ctx.Done(); return dev.Close() })
	return &demo{dev: dev}, dev.Path(), nil
}

// demoSupervise is the demo's supervisor. At start it resumes a table a
// restart left paused (a studio's would look at the round first). Then,
// for the demo's life, it resumes a table paused only because the shoe
// went silent, once the shoe is heard again: the demo's shoe is
// simulated in this process, and only a machine too loaded to run it for
// the silence timeout (a demo on a busy laptop, a loaded CI host)
// silences it; left paused, the demo stopped for a user who never asked
// for a supervisor. Any other pause (a misread, a shuffler fault, a
// supervisor's at the console) is left to a person. A resume refused
// because the shoe is not heard yet (ErrShoeDown) is tried again at the
// table's next event; one refused otherwise is not tried again for the
// same pause.
func demoSupervise(ctx context.Context, ctrl interface {
	Submit(context.Context, table.Input) error
	Snapshot() table.State
}, events <-chan table.Event, log zerolog.Logger) {
	start, refused := true, ""
	for {
		st := ctrl.Snapshot()
		switch {
		case !st.Paused:
			start, refused = false, ""
		case (start || silentOnly(st)) && st.PauseReason != refused:
			err := ctrl.Submit(ctx, table.Supervisor{Command: "resume", By: "demo supervisor"})
			switch {
			case err == nil:
				log.Warn().Str("reason", st.PauseReason).Msg("demo: the demo supervisor resumed the table")
				start = false
			case errors.Is(err, table.ErrShoeDown):
				log.Info().Str("reason", st.PauseReason).Msg("demo: the demo supervisor resumes once the shoe is heard again")
			default:
				log.Warn().Err(err).Str("reason", st.PauseReason).Msg("demo: resume")
				start, refused = false, st.PauseReason
			}
		}
		select {
		case <-ctx.Done():
			return
		case _, ok := <-events:
			if !ok {
				return
			}
		}
	}
}

// silentOnly reports a table paused only because its shoe went silent.
func silentOnly(st table.State) bool {
	if len(st.PauseReasons) != 1 || st.PauseReasons[0] != table.PauseDevice {
		return false
	}
	silent := false
	for _, a := range st.Alarms {
		if a.Pauses {
			if a.Code != "shoe.silent" {
				return false
			}
			silent = true
		}
	}
	return silent
}

// close releases the simulated shoe.
func (d *demo) close() { _ = d.dev.Close() }

// onSwap loads the demo's card shoe with the shoe the shuffler swapped in:
// it announces it (SHOE_OUT, SHOE_IN, SHOE_ID) as a real shoe would.
func (d *demo) onSwap(ctx context.Context, log zerolog.Logger) func(string) {
	return func(string) {
		if err := d.dev.NewShoe(ctx, nil); err != nil {
			log.Warn().Err(err).Msg("simulated shoe: new shoe")
		}
	}
}

// play starts the demo's people: a supervisor who resumes a table a
// restart left paused or its shoe's silence paused (demoSupervise), the
// dealer who follows the instruction line, and the players over MQTT.
func (d *demo) play(ctx context.Context, g *errgroup.Group, ctrl *table.Controller, cfg Config, rs *rules.Set,
	shufflerWired bool, brokerURL string, log zerolog.Logger) error {
	// The dealer acts on the states it is sent, so it subscribes before
	// the demo supervisor may resume: the state after a resume in the
	// middle of a round is the only one that asks for the next card, and
	// a dealer subscribed after it waited for ever (a restored table's
	// test once stalled so under load).
	dealerEvents, _ := ctrl.Subscribe("dealer", 1024)
	supEvents, unsubscribe := ctrl.Subscribe("demo supervisor", 64)
	g.Go(func() error {
		defer unsubscribe()
		if err := ctrl.Ping(ctx); err != nil {
			return nil
		}
		demoSupervise(ctx, ctrl, supEvents, log)
		return nil
	})
	dl := simdealer.New(d.dev, simdealer.Options{Pace: cfg.Demo.Pace, ShufflerSwaps: shufflerWired}, log.With().Str("part", "dealer").Logger())
	g.Go(func() error { return dl.Run(ctx, dealerEvents) })
	p, err := simplayers.New(simplayers.Options{
		BrokerURL: brokerURL, Studio: cfg.Studio, Table: cfg.Table, Game: rs.Code,
		Seats: cfg.Demo.Seats, Seed: cfg.Demo.Seed, Think: cfg.Demo.Think,
		BetDelay: cfg.Demo.Betting / 3, SideBets: true,
	}, log.With().Str("part", "players").Logger())
	if err != nil {
		return err
	}
	g.Go(func() error { return p.Run(ctx) })
	return nil
}
