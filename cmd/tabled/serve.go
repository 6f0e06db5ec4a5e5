package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
	"github.com/livetable/livetable/shuffler/pinmap"
	"github.com/livetable/livetable/studio/console"
	"github.com/livetable/livetable/studio/light"
	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/supervisors"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/continuity"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/rules"
)

// mqttQueue is the controller's queue of events for the MQTT link.
const mqttQueue = 4096

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
	tm := cfg.Timing
	for _, o := range []struct {
		dst *time.Duration
		v   time.Duration
	}{
		{&rs.BettingTime, tm.Betting}, {&rs.LastCallTime, tm.LastCall}, {&rs.InsuranceTime, tm.Insurance}, {&rs.DecisionTime, tm.Decision},
	} {
		if o.v > 0 {
			*o.dst = o.v
		}
	}
	if rs.LastCallTime > rs.BettingTime {
		rs.LastCallTime = rs.BettingTime
	}
	clk := clockwork.NewRealClock()

	// The data directory holds the journal, the outbox, the accounts and
	// the local control socket: the tabled user and its group only.
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return fmt.Errorf("tabled: data dir: %w", err)
	}
	accounts, err := supervisors.Open(supervisorsPath(cfg))
	if err != nil {
		return fmt.Errorf("tabled: %w", err)
	}
	alog := log.With().Str("part", "supervisors").Str("file", supervisorsPath(cfg)).Logger()
	if accounts.Len() == 0 && !cfg.Demo.Enabled {
		alog.Warn().Msg("no supervisor accounts: nobody can log in to the console or sign commands; create one with `tablectl supervisor add NAME` and send tabled SIGHUP")
	} else {
		alog.Info().Int("accounts", accounts.Len()).Msg("supervisor accounts")
	}

	metrics := console.NewTableMetrics(cfg.Studio, cfg.Table)
	jopts := journalOptions(cfg)
	jopts.FS = timedFS{observe: metrics.ObserveFsync}
	jr, rep, err := journal.Open(jopts, log.With().Str("part", "journal").Logger())
	if err != nil {
		return fmt.Errorf("tabled: journal: %w", err)
	}
	defer jr.Close()

	copts := table.DefaultOptions(rs)
	copts.Studio, copts.Table, copts.Clock, copts.Journal = cfg.Studio, cfg.Table, clk, table.NewJournal(jr)
	if tm.Settle > 0 {
		copts.SettleDelay = tm.Settle
	}
	copts.CheckpointEvery = cfg.Journal.CheckpointEvery
	recall := console.NewHistory(50) // game recall, seeded by the replay, then fed live by the console
	copts.Replayed = recall.Add
	if copts.RepublishAfter, err = mqttlink.OutboxLastSeq(nil, absData(cfg, "outbox"), log); err != nil {
		return fmt.Errorf("tabled: outbox: %w", err)
	}
	// A journal behind what the outbox published must not number events
	// with those seqs again: refuse, or journal the loss an operator
	// accepted (the table then starts paused with an alarm).
	nums, gap, err := continuity.Start(copts, nil, continuity.AcceptPath(cfg.DataDir), copts.RepublishAfter, clk.Now())
	if err != nil {
		return fmt.Errorf("tabled: %w", err)
	}
	if gap != nil {
		log.Warn().Uint64("journal_seq", nums.Journal).Uint64("outbox_seq", nums.Outbox).Str("by", gap.By).
			Str("reason", gap.Reason).Msg("journal behind the outbox: the accepted loss is journaled, the table starts paused")
	}
	// The verdicts of refused commands, which the journal does not keep:
	// written off the card path, read back at start.
	refusals, err := table.OpenRefusals(nil, cfg.DataDir, log.With().Str("part", "table").Logger())
	if err != nil {
		return fmt.Errorf("tabled: %w", err)
	}
	defer refusals.Close()
	copts.Refusals = refusals
	ctrl, err := table.New(copts, log.With().Str("part", "table").Logger())
	if err != nil {
		return err
	}

	brokerURL := cfg.Broker.URL
	if brokerURL == "" {
		blog := log.With().Str("part", "broker").Logger()
		b, err := mqttlink.StartEmbeddedBroker(ctx, cfg.Broker.EmbeddedAddr, blog)
		if err != nil && cfg.Demo.Enabled && errors.Is(err, syscall.EADDRINUSE) {
			// A demo must start even where a mosquitto service already
			// holds 1883 (Debian starts one on install): take a free port
			// and say which.
			log.Warn().Str("addr", cfg.Broker.EmbeddedAddr).Msg("port taken: the demo's broker takes a free port")
			b, err = mqttlink.StartEmbeddedBroker(ctx, "127.0.0.1:0", blog)
		}
		if err != nil {
			return fmt.Errorf("tabled: embedded broker: %w", err)
		}
		defer b.Close()
		brokerURL = b.URL()
		log.Info().Str("addr", b.Addr()).Msgf("embedded MQTT broker: mosquitto_sub -h %s -p %s -t 'livetable/#' -v", hostOf(b.Addr()), port(b.Addr()))
	}
	mopts := mqttlink.DefaultOptions()
	mopts.Studio, mopts.Table, mopts.BrokerURL = cfg.Studio, cfg.Table, brokerURL
	mopts.FailoverURLs = cfg.Broker.FailoverURLs
	mopts.OutboxDir = absData(cfg, "outbox")
	mopts.Username, mopts.Password = cfg.Broker.Username, cfg.Broker.Password
	mopts.TLS = mqttlink.TLSOptions{CAFile: cfg.Broker.CAFile, CertFile: cfg.Broker.CertFile, KeyFile: cfg.Broker.KeyFile}
	mopts.Supervisors = accounts
	mopts.History = mqttlink.JournalHistory{Dir: jopts.Dir, Options: copts, Log: log.With().Str("part", "resend").Logger()}
	mopts.ObservePublish = metrics.ObservePublishLatency // the histogram; the link keeps its own summary too
	link, err := mqttlink.New(mopts, log.With().Str("part", "mqtt").Logger())
	if err != nil {
		return fmt.Errorf("tabled: mqtt: %w", err)
	}

	// Subscriptions are taken before the controller runs so that no
	// event is missed. The link's queue only covers the moments its pump
	// is busy, and a broker outage long enough to fill the outbox
	// (OutboxMaxBytes, 64 MiB: hours of play): a channel's buffer is
	// allocated whole, and 65,536 events had been 5 MiB, a fifth of the
	// daemon's memory, held for good.
	mqttEvents, _ := ctrl.Subscribe("mqtt", mqttQueue)
	// The log and the light keep up with the controller (a log line, a
	// pattern): their queues only cover a moment's burst. Each slot is an
	// event header of 88 bytes held for good; 4,096 and 1,024 of them had
	// been a tenth of the daemon's live heap (BenchmarkDaemonRSS).
	logEvents, _ := ctrl.Subscribe("log", 1024)
	lightEvents, _ := ctrl.Subscribe("light", 256)

	g, ctx := errgroup.WithContext(ctx)
	inputs := make(chan table.Input, 256)

	// GPIO: the traffic light, the cut-card sensor and the shuffler.
	hw, err := openGPIO(cfg, rs, clk, log)
	if err != nil {
		return err
	}
	red, yellow, green := hw.lines.Out(pinmap.LightRed), hw.lines.Out(pinmap.LightYellow), hw.lines.Out(pinmap.LightGreen)
	if red == nil || yellow == nil || green == nil {
		return fmt.Errorf("tabled: gpio: light.red, light.yellow and light.green must be configured (or run with --sim)")
	}

	// The shoe: the real serial path, to a real device or to the
	// simulated shoe's pseudo-terminal.
	ropts := shoereader.DefaultOptions()
	ropts.Decks, ropts.AllowSerials, ropts.AllowFirmware = rs.Decks, cfg.Shoe.AllowSerials, cfg.Shoe.AllowFirmware
	ropts.AckOnCommit = true
	if cfg.Shoe.Silence > 0 {
		ropts.SilenceTimeout = cfg.Shoe.Silence
	}
	opener := serialport.Opener(cfg.Shoe.Path, cfg.Shoe.Baud)
	if cfg.Shoe.USBSerial != "" {
		opener = serialport.ByUSBSerial(cfg.Shoe.USBSerial, cfg.Shoe.Baud)
	}
	var dm *demo
	if cfg.Demo.Enabled {
		var path string
		if dm, path, err = startDemo(ctx, g, cfg, rs, copts, jr.LastSeq(), log); err != nil {
			return err
		}
		defer dm.close()
		opener = serialport.Opener(path, cfg.Shoe.Baud)
	} else if cfg.Shoe.Path == "" && cfg.Shoe.USBSerial == "" {
		return errors.New("tabled: no shoe configured (shoe.path or shoe.usb_serial, or --demo)")
	}
	reader := shoereader.New(opener, ropts, log.With().Str("part", "shoe").Logger())
	shoeLink := &linkState{}
	observe := shoeLink.observe
	if hw.studio != nil {
		// The simulated cut card also passes the GPIO sensor.
		observe = func(ev shoereader.Event) {
			shoeLink.observe(ev)
			if ev.Kind == shoereader.CutCard {
				hw.studio.PulseCutCard()
			}
		}
	}
	bridge := &shoereader.Bridge{Reader: reader, Submit: ctrl.Submit, Observe: observe, Log: log}
	g.Go(func() error {
		return ignoreCancel(reader.RunFunc(ctx, func(ev shoereader.Event) { bridge.Deliver(ctx, ev) }))
	})

	lopts := light.DefaultOptions()
	lopts.LastCall = -1 // the controller announces the last call itself
	// The tower logs each change itself ("light changed", pattern and
	// phase): one line per change.
	tower := light.New(red, yellow, green, lopts, clk, log.With().Str("part", "light").Logger())
	g.Go(func() error {
		err := tower.Run(ctx, lightEvents)
		if herr := tower.Halt(); herr != nil {
			log.Warn().Err(herr).Msg("light halt")
		}
		return ignoreCancel(err)
	})

	g.Go(func() error { return ignoreCancel(link.Run(ctx, mqttEvents, ctrl)) })

	// SIGHUP reads the accounts file again (after tablectl supervisor add
	// or remove): the next login and the next signed command see it.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	g.Go(func() error {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-hup:
				if err := accounts.Reload(); err != nil {
					alog.Error().Err(err).Msg("SIGHUP: accounts not reloaded; the previous ones stay")
					continue
				}
				alog.Info().Int("accounts", accounts.Len()).Msg("SIGHUP: accounts reloaded")
			}
		}
	})

	// The local control socket: tablectl on this box, authorised by the
	// socket's file permissions.
	if lc, err := localctl.Listen(filepath.Join(cfg.DataDir, localctl.SocketName), ctrl, log.With().Str("part", "localctl").Logger()); err != nil {
		log.Error().Err(err).Msg("local control socket not available: tablectl on this box cannot command the table")
	} else {
		lc.Reload = accounts.Reload
		log.Debug().Str("socket", lc.Path()).Msg("local control socket")
		g.Go(func() error { return lc.Run(ctx) })
	}

	if cfg.Console.Addr != "off" {
		var users console.Accounts = accounts
		if cfg.Demo.Enabled {
			hash, err := console.HashPassword("demo")
			if err != nil {
				return err
			}
			users = demoAccounts{store: accounts, hash: hash}
		}
		metrics.SetOutboxDepthFunc(link.OutboxDepth)
		metrics.SetBrokerConnectedFunc(func() bool { return link.Stats().Connected })
		metrics.SetPublishLatencyFunc(func() console.LatencySummary {
			l := link.PublishLatency()
			return console.LatencySummary{Count: l.Count, P50: l.P50, P99: l.P99, Max: l.Max}
		})
		addr := cfg.Console.Addr
		if cfg.Demo.Enabled && portTaken(addr) {
			log.Warn().Str("addr", addr).Msg("port taken: the demo's console takes a free port")
			addr = "127.0.0.1:0"
		}
		cc := cfg.Console
		cons, err := console.New(console.Options{Addr: addr, Accounts: users, GameName: rs.Name,
			TLSCert: cc.TLSCert, TLSKey: cc.TLSKey, SecureCookie: cc.SecureCookie, Insecure: cc.Insecure, Currency: cc.Currency,
			Clock: clk, Metrics: metrics}, ctrl, recall, healthOf(shoeLink, hw, link, jr), consoleLog(log))
		if err != nil {
			return fmt.Errorf("tabled: console: %w", err)
		}
		g.Go(func() error { return ignoreCancel(cons.Run(ctx)) })
		go func() {
			select {
			case <-cons.Ready():
				base := cons.Scheme() + "://" + cons.Addr()
				msg := "console: dealer view " + base + "/ , supervisor " + base + "/supervisor"
				if cfg.Demo.Enabled && accounts.Len() == 0 {
					msg += " (demo login: supervisor / demo)"
				}
				log.Info().Str("addr", cons.Addr()).Msg(msg)
			case <-ctx.Done():
			}
		}()
	}
	g.Go(func() error { printEvents(logEvents, log); return nil })
	if rep.Truncated() {
		inputs <- table.DeviceAlarm{Source: "journal", Code: "torn_tail",
			Message: fmt.Sprintf("journal tail cut after a power loss: journal %s (%d bytes), last whole record seq %d: check the last round",
				rep.Tail.LostText(), rep.CutBytes, rep.Tail.LastKept()), Pauses: true}
	}
	g.Go(func() error { return ctrl.Run(ctx, inputs) })

	shufflerWired := hw.hasShuffler() && (cfg.GPIO.Shuffler == nil || *cfg.GPIO.Shuffler)
	if shufflerWired {
		var onSwap func(string)
		if dm != nil {
			onSwap = dm.onSwap(ctx, log) // the demo's card shoe takes the swapped-in shoe
		}
		runShuffler(ctx, g, hw, rs, cfg, ctrl, inputs, onSwap, clk, log)
	}
	if dm != nil {
		if err := dm.play(ctx, g, ctrl, cfg, rs, shufflerWired, brokerURL, log); err != nil {
			return err
		}
	}
	notify := newNotifier(log)
	g.Go(func() error {
		if err := ctrl.Ping(ctx); err != nil {
			return nil // stopping already
		}
		notify.send("READY=1")
		log.Info().Str("game", rs.Code).Str("name", rs.Name).Str("table", cfg.Table).Msg("tabled running")
		notify.watchdog(ctx, ctrl.Ping)
		notify.send("STOPPING=1")
		return nil
	})
	return g.Wait()
}

func journalOptions(cfg Config) journal.Options {
	o := journal.DefaultOptions()
	o.Dir = absData(cfg, "journal")
	jc := cfg.Journal
	if jc.SegmentSize > 0 {
		o.SegmentBytes = int64(jc.SegmentSize)
	}
	o.MaxBytes, o.MaxAge, o.GroupCommitWindow = int64(jc.MaxSize), jc.MaxAge, jc.GroupCommit
	// The controller replays from a checkpoint: retention keeps every
	// segment from the newest one on.
	o.AnchorKind = table.CheckpointKind
	return o
}

// portTaken reports whether addr cannot be listened on now.
func portTaken(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return true
	}
	_ = l.Close()
	return false
}

func ignoreCancel(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
