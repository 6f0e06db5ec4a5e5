package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/host/v3"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
	"github.com/livetable/livetable/shuffler/pinmap"
	simdealer "github.com/livetable/livetable/simulators/dealer"
	simgpio "github.com/livetable/livetable/simulators/gpio"
	simplayers "github.com/livetable/livetable/simulators/players"
	simshoe "github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/studio/light"
	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/rules"
)

// serve builds the table and runs it until ctx is done. Every part runs
// under one errgroup: the first to fail stops the others, and serve
// returns only when all have returned.
func serve(ctx context.Context, cfg Config, log zerolog.Logger) error {
	rs, err := rules.Game(cfg.Game)
	if err != nil {
		return err
	}
	if cfg.Demo.Enabled && cfg.Demo.Betting > 0 {
		rs.BettingTime = cfg.Demo.Betting
		rs.LastCallTime = cfg.Demo.Betting / 2
	}
	clk := clockwork.NewRealClock()

	jr, rep, err := journal.Open(journalOptions(cfg), log.With().Str("part", "journal").Logger())
	if err != nil {
		return fmt.Errorf("tabled: journal: %w", err)
	}
	defer jr.Close()

	copts := table.DefaultOptions(rs)
	copts.Studio, copts.Table, copts.Clock, copts.Journal = cfg.Studio, cfg.Table, clk, table.NewJournal(jr)
	ctrl, err := table.New(copts, log.With().Str("part", "table").Logger())
	if err != nil {
		return err
	}

	brokerURL := cfg.Broker.URL
	if brokerURL == "" {
		b, err := mqttlink.StartEmbeddedBroker(ctx, cfg.Broker.EmbeddedAddr, log.With().Str("part", "broker").Logger())
		if err != nil {
			return fmt.Errorf("tabled: embedded broker: %w", err)
		}
		defer b.Close()
		brokerURL = b.URL()
		log.Info().Str("addr", b.Addr()).Msgf("embedded MQTT broker: mosquitto_sub -h %s -p %s -t 'livetable/#' -v", hostOf(b.Addr()), port(b.Addr()))
	}
	mopts := mqttlink.DefaultOptions()
	mopts.Studio, mopts.Table, mopts.BrokerURL = cfg.Studio, cfg.Table, brokerURL
	mopts.OutboxDir = absData(cfg, "outbox")
	mopts.Username, mopts.Password = cfg.Broker.Username, cfg.Broker.Password
	mopts.TLS = mqttlink.TLSOptions{CAFile: cfg.Broker.CAFile, CertFile: cfg.Broker.CertFile, KeyFile: cfg.Broker.KeyFile}
	mopts.SupervisorTokens = cfg.Broker.SupervisorTokens
	link, err := mqttlink.New(mopts, log.With().Str("part", "mqtt").Logger())
	if err != nil {
		return fmt.Errorf("tabled: mqtt: %w", err)
	}

	// Subscriptions are taken before the controller runs so that no
	// event is missed.
	mqttEvents, _ := ctrl.Subscribe("mqtt", 1<<16)
	logEvents, _ := ctrl.Subscribe("log", 4096)
	lightEvents, _ := ctrl.Subscribe("light", 1024)

	g, ctx := errgroup.WithContext(ctx)
	inputs := make(chan table.Input, 256)

	// The shoe: the real serial path, to a real device or to the
	// simulated shoe's pseudo-terminal.
	ropts := shoereader.DefaultOptions()
	ropts.Decks, ropts.AllowSerials, ropts.AllowFirmware = rs.Decks, cfg.Shoe.AllowSerials, cfg.Shoe.AllowFirmware
	if cfg.Shoe.Silence > 0 {
		ropts.SilenceTimeout = cfg.Shoe.Silence
	}
	var dev *simshoe.Device
	opener := serialport.Opener(cfg.Shoe.Path, cfg.Shoe.Baud)
	if cfg.Shoe.USBSerial != "" {
		opener = serialport.ByUSBSerial(cfg.Shoe.USBSerial, cfg.Shoe.Baud)
	}
	if cfg.Demo.Enabled {
		so := simshoe.DefaultOptions()
		so.Decks, so.Seed = rs.Decks, cfg.Demo.Seed
		if dev, err = simshoe.New(so, log.With().Str("part", "shoesim").Logger()); err != nil {
			return fmt.Errorf("tabled: simulated shoe: %w", err)
		}
		defer dev.Close()
		log.Info().Str("pty", dev.Path()).Msg("simulated shoe on a pseudo-terminal")
		opener = serialport.Opener(dev.Path(), cfg.Shoe.Baud)
		g.Go(func() error { return ignoreCancel(dev.Run(ctx)) })
		// Closing the pty on shutdown wakes the device's blocked reads.
		g.Go(func() error { <-ctx.Done(); return dev.Close() })
	} else if cfg.Shoe.Path == "" && cfg.Shoe.USBSerial == "" {
		return errors.New("tabled: no shoe configured (shoe.path or shoe.usb_serial, or --demo)")
	}
	reader := shoereader.New(opener, ropts, log.With().Str("part", "shoe").Logger())
	shoeEvents := make(chan shoereader.Event, 256)
	g.Go(func() error { return ignoreCancel(reader.Run(ctx, shoeEvents)) })
	g.Go(func() error { return bridgeShoe(ctx, shoeEvents, inputs, log) })

	// The traffic light.
	red, yellow, green, err := lightPins(cfg, clk)
	if err != nil {
		return err
	}
	lopts := light.DefaultOptions()
	lopts.LastCall = -1 // the controller announces the last call itself
	lopts.OnChange = func(c light.Changed) {
		log.Info().Str("pattern", c.Pattern).Bool("red", c.Red).Bool("yellow", c.Yellow).Bool("green", c.Green).Msg("light")
	}
	tower := light.New(red, yellow, green, lopts, clk, log.With().Str("part", "light").Logger())
	g.Go(func() error {
		err := tower.Run(ctx, lightEvents)
		if herr := tower.Halt(); herr != nil {
			log.Warn().Err(herr).Msg("light halt")
		}
		return ignoreCancel(err)
	})

	g.Go(func() error { return ignoreCancel(link.Run(ctx, mqttEvents, ctrl)) })
	g.Go(func() error { printEvents(logEvents, log); return nil })
	if rep.Truncated() {
		inputs <- table.DeviceAlarm{Source: "journal", Code: "torn_tail",
			Message: fmt.Sprintf("journal tail cut after a power loss (%d bytes): check the last round", rep.CutBytes), Pauses: true}
	}
	g.Go(func() error { return ctrl.Run(ctx, inputs) })

	if cfg.Demo.Enabled {
		dealerEvents, _ := ctrl.Subscribe("dealer", 1024)
		d := simdealer.New(dev, simdealer.Options{Pace: cfg.Demo.Pace}, log.With().Str("part", "dealer").Logger())
		g.Go(func() error { return d.Run(ctx, dealerEvents) })
		p, err := simplayers.New(simplayers.Options{
			BrokerURL: brokerURL, Studio: cfg.Studio, Table: cfg.Table, Game: rs.Code,
			Seats: cfg.Demo.Seats, Seed: cfg.Demo.Seed, Think: cfg.Demo.Think,
			BetDelay: cfg.Demo.Betting / 3, SideBets: true,
		}, log.With().Str("part", "players").Logger())
		if err != nil {
			return err
		}
		g.Go(func() error { return p.Run(ctx) })
	}
	log.Info().Str("game", rs.Code).Str("name", rs.Name).Str("table", cfg.Table).Msg("tabled running")
	return g.Wait()
}

func journalOptions(cfg Config) journal.Options {
	o := journal.DefaultOptions()
	o.Dir = absData(cfg, "journal")
	return o
}

// bridgeShoe turns the reader's events into controller inputs: cards, cut
// card and shoe changes go to the round; alarms pause the table.
func bridgeShoe(ctx context.Context, in <-chan shoereader.Event, out chan<- table.Input, log zerolog.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-in:
			if !ok {
				return nil
			}
			var inp table.Input
			if i, ok := ev.Input(); ok {
				inp = i
			} else if ev.Kind.Alarm() {
				inp = table.DeviceAlarm{Source: "shoe", Code: ev.Kind.String(), Message: ev.String(), Pauses: true}
			} else {
				log.Info().Str("shoe", ev.Kind.String()).Msg(ev.String())
				continue
			}
			select {
			case out <- inp:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// lightPins returns the three lamps: simulated pins, or the board's lines
// by name through periph.io's GPIO character device driver.
func lightPins(cfg Config, clk clockwork.Clock) (red, yellow, green gpio.PinOut, err error) {
	names := []string{pinmap.LightRed, pinmap.LightYellow, pinmap.LightGreen}
	out := make([]gpio.PinOut, 3)
	if cfg.GPIO.Sim {
		bank, err := simgpio.NewBank(simgpio.DefaultConfig(), clk)
		if err != nil {
			return nil, nil, nil, err
		}
		for i, n := range names {
			p, err := bank.Pin(n)
			if err != nil {
				return nil, nil, nil, err
			}
			out[i] = p
		}
		return out[0], out[1], out[2], nil
	}
	if _, err := host.Init(); err != nil {
		return nil, nil, nil, fmt.Errorf("tabled: gpio: %w", err)
	}
	byName := map[string]pinmap.PinConfig{}
	for _, pc := range cfg.GPIO.Pins {
		byName[pc.Name] = pc
	}
	for i, n := range names {
		pc, ok := byName[n]
		if !ok {
			return nil, nil, nil, fmt.Errorf("tabled: gpio: no line configured for %s (or run with --sim)", n)
		}
		p := gpioreg.ByName(pc.Line)
		if p == nil {
			return nil, nil, nil, fmt.Errorf("tabled: gpio: line %s of %s not found", pc.Line, n)
		}
		out[i] = pinmap.Logical(p, pc.ActiveLow)
	}
	return out[0], out[1], out[2], nil
}

func ignoreCancel(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
