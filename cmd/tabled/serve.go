package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
	"github.com/livetable/livetable/shuffler"
	"github.com/livetable/livetable/shuffler/pinmap"
	"github.com/livetable/livetable/studio/console"
	"github.com/livetable/livetable/studio/light"
	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/supervisors"
	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/continuity"
	"github.com/livetable/livetable/table/identity"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/rules"
)

// mqttQueue is the controller's queue of events for the MQTT link.
const mqttQueue = 4096

// tabled is the daemon's parts, built and started one wiring step at a time
// by serve. Each step only connects packages; what they do is theirs.
type tabled struct {
	cfg Config
	log zerolog.Logger
	clk clockwork.Clock

	rs       *rules.Set
	accounts *supervisors.Store
	alog     zerolog.Logger
	metrics  *console.Metrics
	jr       *journal.Journal
	jrep     journal.RecoveryReport
	copts    table.Options
	recall   *console.History
	ctrl     *table.Controller
	broker   string // the broker's URL (the embedded one's when none is configured)
	link     *mqttlink.Link
	hw       *hardware
	shoe     *shoereader.LinkHealth
	dm       *demo
	shuffler atomic.Pointer[shuffler.Controller] // the dual-shoe shuffler once it runs; nil when not wired
	inputs   chan table.Input
	hup      chan os.Signal // SIGHUP, taken from serve's start

	// The controller's subscribers, taken before it runs so that no event
	// is missed.
	mqttEvents, logEvents, lightEvents <-chan table.Event

	closers []func() // run in reverse order when serve returns
}

// serve builds the table and runs it until ctx is done. Every part runs
// under one errgroup: the first to fail stops the others, and serve
// returns only when all have returned.
func serve(ctx context.Context, cfg Config, log zerolog.Logger) error {
	d := &tabled{cfg: cfg, log: log, clk: clockwork.NewRealClock(), inputs: make(chan table.Input, 256)}
	// SIGHUP is taken before anything is read: one that comes while the
	// table starts reloads the accounts once it runs (reloadOnHangup).
	d.hup = make(chan os.Signal, 1)
	signal.Notify(d.hup, syscall.SIGHUP)
	defer signal.Stop(d.hup)
	defer d.close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, ctx := errgroup.WithContext(ctx)
	for _, start := range []func(context.Context, *errgroup.Group) error{
		d.openRules, d.openAccounts, d.bindDataDir, d.openJournal, d.newController, d.startBroker, d.newLink,
		d.startGPIO, d.startShoe, d.startLight, d.startLink, d.reloadOnHangup, d.startLocalControl,
		d.startConsole, d.startTable, d.startShuffler, d.startDemoPlay, d.announceReady,
	} {
		if err := start(ctx, g); err != nil {
			cancel()
			_ = g.Wait()
			return err
		}
	}
	return g.Wait()
}

func (d *tabled) onClose(f func()) { d.closers = append(d.closers, f) }

func (d *tabled) close() {
	for i := len(d.closers) - 1; i >= 0; i-- {
		d.closers[i]()
	}
}

// openRules loads the game and the table's own phase times.
func (d *tabled) openRules(context.Context, *errgroup.Group) error {
	rs, err := rules.Game(d.cfg.Game)
	if err != nil {
		return err
	}
	tm := d.cfg.Timing
	t := rules.Times{Betting: tm.Betting, LastCall: tm.LastCall, Insurance: tm.Insurance, Decision: tm.Decision}
	if b := d.cfg.Demo.Betting; d.cfg.Demo.Enabled && b > 0 {
		// The demo's short window; the table's own times still win.
		t.Betting, t.LastCall = cmp.Or(t.Betting, b), cmp.Or(t.LastCall, b/2)
	}
	rs.SetTimes(t)
	d.rs = rs
	return nil
}

// openAccounts makes the data directory (the journal, the outbox, the
// accounts and the local control socket: the tabled user and its group
// only) and reads the supervisor accounts.
func (d *tabled) openAccounts(context.Context, *errgroup.Group) error {
	if err := os.MkdirAll(d.cfg.DataDir, 0o750); err != nil {
		return fmt.Errorf("tabled: data dir: %w", err)
	}
	accounts, err := supervisors.Open(supervisorsPath(d.cfg))
	if err != nil {
		return fmt.Errorf("tabled: %w", err)
	}
	d.accounts = accounts
	d.alog = d.log.With().Str("part", "supervisors").Str("file", supervisorsPath(d.cfg)).Logger()
	if accounts.Len() == 0 && !d.cfg.Demo.Enabled {
		d.alog.Warn().Msg("no supervisor accounts: nobody can log in to the console or sign commands; create one with `tablectl supervisor add NAME` and send tabled SIGHUP")
	} else {
		d.alog.Info().Int("accounts", accounts.Len()).Msg("supervisor accounts")
	}
	return nil
}

// bindDataDir checks that the data directory is this table's and this
// game's (table/identity), and records it in a new one: another's journal
// replayed under this table's rules and topics would publish another
// game's outcomes under seqs the backend already holds.
func (d *tabled) bindDataDir(context.Context, *errgroup.Group) error {
	if err := checkDataDir(d.cfg, d.log); err != nil {
		return err
	}
	id := identity.Identity{Studio: d.cfg.Studio, Table: d.cfg.Table, Game: d.rs.Code}
	_, statErr := os.Stat(absData(d.cfg, "journal"))
	if _, ok, err := identity.Read(nil, d.cfg.DataDir); err == nil && !ok && statErr == nil {
		// Only a journal older than identity files may be recorded
		// from the configuration.
		epochs, err := table.JournalHasEpochs(absData(d.cfg, "journal"), d.log)
		if err != nil {
			return fmt.Errorf("tabled: %w", err)
		}
		if epochs {
			return fmt.Errorf("tabled: %w: %s is missing, and the journal beside it was written by a build that records it: put back the file of this directory's backup (or, if you know the journal is studio %q, table %q, game %q, write {\"studio\":%q,\"table\":%q,\"game\":%q} to it); recorded from this configuration, another game's journal would replay under this game's rules",
				ErrIdentityLost, identity.Path(d.cfg.DataDir), id.Studio, id.Table, id.Game, id.Studio, id.Table, id.Game)
		}
	}
	recorded, err := identity.Bind(nil, d.cfg.DataDir, id)
	if err != nil {
		return fmt.Errorf("tabled: %w", err)
	}
	if recorded {
		l := d.log.Info()
		if statErr == nil {
			// Written by a tabled older than identity.json: it cannot
			// be checked, only recorded from now on.
			l = d.log.Warn()
		}
		l.Str("file", identity.Path(d.cfg.DataDir)).Str("studio", id.Studio).Str("table", id.Table).Str("game", id.Game).
			Bool("existing_journal", statErr == nil).Msg("data directory recorded as this table's and game's")
	}
	return nil
}

// ErrIdentityLost is a data directory whose identity file is gone while
// its journal was written by a build that records one (JournalHasEpochs):
// started with --game 003 on a game-000 directory whose identity.json
// was deleted, tabled recorded 003 and replayed the journal under 003's
// rules (stopped only because that replay happened to number fewer
// events than the outbox, with advice to accept a loss that was none).
var ErrIdentityLost = errors.New("the data directory's identity file is missing")

// ErrDataDirElsewhere is a new table started with --data-dir on another
// directory than its configuration file's data_dir.
var ErrDataDirElsewhere = errors.New("the configuration file names another data directory")

// checkDataDir refuses a new table whose --data-dir is not the data_dir
// of its --config file. tablectl takes the data directory from that file
// (`tablectl --config FILE supervisor add`, status, pause, journal
// verify), so it would write the supervisors' accounts where tabled never
// reads them and look for the control socket and the journal there: the
// systemd unit passes --data-dir /var/lib/livetable/<instance>, and a
// configuration copied from the example named /var/lib/livetable/table1.
// A directory that already holds a table (identity.json, or a journal
// older than it) is only warned
// about: a running table must not stop at an upgrade over it. A file that
// names no data_dir, and the demo (make run's DATA_DIR beside RUNFLAGS'
// --config), are not checked.
func checkDataDir(cfg Config, log zerolog.Logger) error {
	if cfg.configFile == "" || cfg.configDataDir == "" || cfg.Demo.Enabled ||
		filepath.Clean(cfg.configDataDir) == filepath.Clean(cfg.DataDir) {
		return nil // no data_dir in the file, or the demo's (make run's DATA_DIR)
	}
	_, existing, err := identity.Read(nil, cfg.DataDir)
	if err != nil {
		return fmt.Errorf("tabled: %w", err)
	}
	if _, err := os.Stat(absData(cfg, "journal")); err == nil {
		existing = true // a table's, written before identity.json existed
	}
	what := fmt.Sprintf("--data-dir %s is not the data_dir of %s (%s), where `tablectl --config %s` looks for this table's accounts, control socket and journal: set data_dir: %s in %s",
		cfg.DataDir, cfg.configFile, cfg.configDataDir, cfg.configFile, cfg.DataDir, cfg.configFile)
	if existing {
		log.Warn().Str("data_dir", cfg.DataDir).Str("config", cfg.configFile).Str("config_data_dir", cfg.configDataDir).Msg(what)
		return nil
	}
	return fmt.Errorf("tabled: %s (%w)", what, ErrDataDirElsewhere)
}

// openJournal opens the journal, its fsyncs timed for the metrics.
func (d *tabled) openJournal(context.Context, *errgroup.Group) error {
	d.metrics = console.NewTableMetrics(d.cfg.Studio, d.cfg.Table)
	jopts := journalOptions(d.cfg)
	jopts.FS = timedFS{observe: d.metrics.ObserveFsync}
	jr, rep, err := journal.Open(jopts, d.log.With().Str("part", "journal").Logger())
	if err != nil {
		return fmt.Errorf("tabled: journal: %w", err)
	}
	d.onClose(func() { _ = jr.Close() })
	d.jr, d.jrep = jr, rep
	return nil
}

// newController builds the table's controller on the journal, after the
// continuity check against the outbox (table/continuity), with the
// refused commands' verdicts, and takes its subscriptions.
func (d *tabled) newController(ctx context.Context, _ *errgroup.Group) error {
	cfg := d.cfg
	copts := table.DefaultOptions(d.rs)
	copts.Studio, copts.Table, copts.Clock, copts.Journal = cfg.Studio, cfg.Table, d.clk, table.NewJournal(d.jr)
	if cfg.Timing.Settle > 0 {
		copts.SettleDelay = cfg.Timing.Settle
	}
	copts.CheckpointEvery = cfg.Journal.CheckpointEvery
	d.recall = console.NewHistory(50) // game recall, seeded by the replay, then fed live by the console
	copts.Replayed = d.recall.Add
	var err error
	if copts.RepublishAfter, err = mqttlink.OutboxLastSeq(nil, absData(cfg, "outbox"), d.log); err != nil {
		return fmt.Errorf("tabled: outbox: %w", err)
	}
	brokerSeq, err := d.brokerPublishedSeq(ctx)
	if err != nil {
		return err
	}
	seen := continuity.Numbers{Outbox: copts.RepublishAfter, Broker: brokerSeq}
	nums, gap, err := continuity.StartSeen(copts, nil, continuity.AcceptPath(cfg.DataDir), seen, d.clk.Now())
	if err != nil {
		return fmt.Errorf("tabled: %w", err)
	}
	if gap != nil {
		d.log.Warn().Uint64("journal_seq", nums.Journal).Uint64("outbox_seq", nums.Outbox).Uint64("broker_seq", nums.Broker).Str("by", gap.By).
			Str("reason", gap.Reason).Msg("journal behind what was published: the accepted loss is journaled, the table starts paused")
	}
	tlog := d.log.With().Str("part", "table").Logger()
	refusals, err := table.OpenRefusals(nil, cfg.DataDir, tlog)
	if err != nil {
		return fmt.Errorf("tabled: %w", err)
	}
	d.onClose(func() { _ = refusals.Close() })
	copts.Refusals = refusals
	// The link and the console publish wire.Encode's bytes: encoded
	// while the journal syncs, off the card's path.
	copts.Encode = wire.Encode
	d.copts = copts
	if d.ctrl, err = table.New(copts, tlog); err != nil {
		return err
	}
	// The link's queue only covers the moments its pump is busy, and a
	// broker outage long enough to fill the outbox (hours of play): a
	// channel's buffer is allocated whole. The log and the light keep up
	// with the controller: their queues only cover a moment's burst
	// (each slot is an 88-byte event header held for good:
	// BenchmarkDaemonRSS).
	d.mqttEvents, _ = d.ctrl.Subscribe("mqtt", mqttQueue)
	d.logEvents, _ = d.ctrl.Subscribe("log", 1024)
	d.lightEvents, _ = d.ctrl.Subscribe("light", 256)
	return nil
}

// brokerCheckTimeout bounds the start's reading of the retained state
// (connection included); retainedWait is how long it waits for the
// retained message once subscribed (a broker sends it at once; only a
// table with none waits it out, at its first start).
const (
	brokerCheckTimeout = 10 * time.Second
	retainedWait       = time.Second
	// brokerRetry is the pause between two attempts to reach a broker
	// the start waits for.
	brokerRetry = 2 * time.Second
)

// brokerPublishedSeq reads the seq of the newest event the broker saw
// published, from the table's retained state (mqttlink.BrokerPublishedSeq):
// the witness of a data directory restored whole from an older backup.
// 0 when there is none (the embedded broker starts empty; a new table; a
// broker without persistence that restarted) or the broker's ACL keeps
// the table from reading it: the table starts on its own directory's
// seqs, and says so.
//
// A broker that cannot be reached is waited for, with the rest of the
// start: a table started without the witness numbers its events from
// where its directory ends, and a directory restored from an older
// backup while the broker was down then published, once the broker came
// back, seqs the backend already held with other content (docs/deploy.md,
// "Restoring a backup": seqs 449-544 of a demo table, a decision_made
// that became a card_dealt). Waiting costs a table nothing it could do:
// without the broker no bet or decision reaches it. The wait keeps
// systemd's start and watchdog timers from ending it, and says why in
// the log and in systemctl status; broker.start_unchecked starts without
// the witness, as tabled did before.
func (d *tabled) brokerPublishedSeq(ctx context.Context) (uint64, error) {
	if d.cfg.Broker.URL == "" {
		return 0, nil
	}
	var notify *notifier
	for attempt := 0; ; attempt++ {
		seq, found, err := d.readBrokerSeq(ctx)
		switch {
		case err == nil && found:
			d.log.Info().Uint64("broker_seq", seq).Msg("the broker's retained state read")
			return seq, nil
		case err == nil:
			d.log.Warn().Str("topic", mqttlink.TopicsFor(d.cfg.Studio, d.cfg.Table).State).
				Msg("no retained state at the broker: a new table, or a broker ACL that does not let the table read its own state topic (deploy/mosquitto/acl: topic readwrite): this start cannot check that the data directory is not older than what was published")
			return 0, nil
		case errors.Is(err, mqttlink.ErrRetainedNotReadable) || d.cfg.Broker.StartUnchecked:
			d.log.Warn().Err(err).Msg("the broker's retained state not read: this start cannot check that the data directory is not older than what was published (the table starts on its own seqs)")
			return 0, nil
		}
		if attempt == 0 {
			notify = newNotifier(d.log)
			d.log.Error().Err(err).Str("broker", d.cfg.Broker.URL).
				Msg("the broker cannot be reached: the table waits for it before it starts, so that it cannot publish seqs the backend already holds (a data directory restored from an older backup); broker.start_unchecked: true starts without this check")
		} else if attempt%30 == 0 {
			d.log.Warn().Err(err).Int("attempts", attempt+1).Msg("still waiting for the broker before the table starts")
		}
		// Before READY=1 systemd gives a start TimeoutStartSec (90 s by
		// default) and WatchdogSec; both are pushed on while we wait.
		notify.send(fmt.Sprintf("STATUS=waiting for the broker %s before the table starts\nEXTEND_TIMEOUT_USEC=%d\nWATCHDOG=1",
			d.cfg.Broker.URL, (brokerCheckTimeout + 2*brokerRetry).Microseconds()))
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("tabled: stopped while waiting for the broker to check the data directory: %w", ctx.Err())
		case <-d.clk.After(brokerRetry):
		}
	}
}

// readBrokerSeq is one attempt of brokerPublishedSeq, bounded by
// brokerCheckTimeout.
func (d *tabled) readBrokerSeq(ctx context.Context) (uint64, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, brokerCheckTimeout)
	defer cancel()
	return mqttlink.BrokerPublishedSeq(ctx, linkOptions(d.cfg, d.cfg.Broker.URL), retainedWait)
}

// startBroker takes the configured broker, or starts the embedded one
// when none is configured: a build with the demo has it (embedded.go), a
// production build refuses (sim_off.go).
func (d *tabled) startBroker(ctx context.Context, g *errgroup.Group) error {
	d.broker = d.cfg.Broker.URL
	if d.broker != "" {
		return nil
	}
	return d.startEmbeddedBroker(ctx, g)
}

// newLink builds the MQTT link: outbox, commands, resends from the journal.
func (d *tabled) newLink(context.Context, *errgroup.Group) error {
	cfg := d.cfg
	mopts := linkOptions(cfg, d.broker)
	mopts.Supervisors = d.accounts
	mopts.ShufflerReset = d.linkShufflerReset
	mopts.History = mqttlink.JournalHistory{Dir: journalOptions(cfg).Dir, Options: d.copts, Log: d.log.With().Str("part", "resend").Logger()}
	mopts.ObservePublish = d.metrics.ObservePublishLatency // the histogram; the link keeps its own summary too
	link, err := mqttlink.New(mopts, d.log.With().Str("part", "mqtt").Logger())
	if err != nil {
		return fmt.Errorf("tabled: mqtt: %w", err)
	}
	d.link = link
	return nil
}

// linkOptions are the MQTT link's options from the configuration, on the
// broker at url.
func linkOptions(cfg Config, url string) mqttlink.Options {
	mopts := mqttlink.DefaultOptions()
	mopts.Studio, mopts.Table, mopts.BrokerURL = cfg.Studio, cfg.Table, url
	mopts.FailoverURLs = cfg.Broker.FailoverURLs
	mopts.OutboxDir = absData(cfg, "outbox")
	mopts.Username, mopts.Password = cfg.Broker.Username, cfg.Broker.Password
	mopts.TLS = mqttlink.TLSOptions{CAFile: cfg.Broker.CAFile, CertFile: cfg.Broker.CertFile, KeyFile: cfg.Broker.KeyFile}
	return mopts
}

// startGPIO opens the board's lines (or the simulated studio's): the
// traffic light, the cut-card sensor and the shuffler.
func (d *tabled) startGPIO(context.Context, *errgroup.Group) error {
	hw, err := openGPIO(d.cfg, d.rs, d.clk, d.log)
	if err != nil {
		return err
	}
	d.hw = hw
	return nil
}

// startShoe runs the shoe reader on the real serial path, to a real
// device or to the demo's simulated shoe's pseudo-terminal, bridged to the
// controller (shoereader.Bridge: journal, then ACK).
func (d *tabled) startShoe(ctx context.Context, g *errgroup.Group) error {
	cfg := d.cfg
	ropts := shoereader.DefaultOptions()
	ropts.Decks, ropts.AllowSerials, ropts.AllowFirmware = d.rs.Decks, cfg.Shoe.AllowSerials, cfg.Shoe.AllowFirmware
	ropts.AckOnCommit = true
	if cfg.Shoe.Silence > 0 {
		ropts.SilenceTimeout = cfg.Shoe.Silence
	}
	opener := serialport.Opener(cfg.Shoe.Path, cfg.Shoe.Baud)
	if cfg.Shoe.USBSerial != "" {
		opener = serialport.ByUSBSerial(cfg.Shoe.USBSerial, cfg.Shoe.Baud)
	}
	switch {
	case cfg.Demo.Enabled:
		dm, path, err := startDemo(ctx, g, cfg, d.rs, d.copts, d.jr.LastSeq(), d.log)
		if err != nil {
			return err
		}
		d.onClose(dm.close)
		d.dm = dm
		opener = serialport.Opener(path, cfg.Shoe.Baud)
	case cfg.Shoe.Path == "" && cfg.Shoe.USBSerial == "":
		return errors.New("tabled: no shoe configured (shoe.path or shoe.usb_serial, or --demo)")
	}
	reader := shoereader.New(opener, ropts, d.log.With().Str("part", "shoe").Logger())
	d.shoe = shoereader.NewLinkHealth(nil)
	observe := d.shoe.Observe
	if d.hw.studio != nil {
		// The simulated cut card also passes the GPIO sensor.
		observe = func(ev shoereader.Event) {
			d.shoe.Observe(ev)
			if ev.Kind == shoereader.CutCard {
				d.hw.studio.PulseCutCard()
			}
		}
	}
	bridge := &shoereader.Bridge{Reader: reader, Submit: d.ctrl.Submit, Observe: observe, Log: d.log}
	g.Go(func() error {
		return ignoreCancel(reader.RunFunc(ctx, func(ev shoereader.Event) { bridge.Deliver(ctx, ev) }))
	})
	return nil
}

// startLight drives the traffic light from the table's events. The tower
// logs each change itself: one line per change.
func (d *tabled) startLight(ctx context.Context, g *errgroup.Group) error {
	red, yellow, green := d.hw.lines.Out(pinmap.LightRed), d.hw.lines.Out(pinmap.LightYellow), d.hw.lines.Out(pinmap.LightGreen)
	if red == nil || yellow == nil || green == nil {
		return fmt.Errorf("tabled: gpio: light.red, light.yellow and light.green must be configured (or run with --sim)")
	}
	lopts := light.DefaultOptions()
	lopts.LastCall = -1 // the controller announces the last call itself
	tower := light.New(red, yellow, green, lopts, d.clk, d.log.With().Str("part", "light").Logger())
	g.Go(func() error {
		err := tower.Run(ctx, d.lightEvents)
		if herr := tower.Halt(); herr != nil {
			d.log.Warn().Err(herr).Msg("light halt")
		}
		return ignoreCancel(err)
	})
	return nil
}

func (d *tabled) startLink(ctx context.Context, g *errgroup.Group) error {
	g.Go(func() error { return ignoreCancel(d.link.Run(ctx, d.mqttEvents, d.ctrl)) })
	return nil
}

// reloadOnHangup reads the accounts file again on SIGHUP (after tablectl
// supervisor add or remove): the next login and signed command see it.
func (d *tabled) reloadOnHangup(ctx context.Context, g *errgroup.Group) error {
	g.Go(func() error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-d.hup:
				if err := d.accounts.Reload(); err != nil {
					d.alog.Error().Err(err).Msg("SIGHUP: accounts not reloaded; the previous ones stay")
					continue
				}
				d.alog.Info().Int("accounts", d.accounts.Len()).Msg("SIGHUP: accounts reloaded")
			}
		}
	})
	return nil
}

// startLocalControl opens the local control socket: tablectl on this box,
// authorised by the socket's file permissions. Without it the table still
// runs (the console and MQTT still command it).
func (d *tabled) startLocalControl(ctx context.Context, g *errgroup.Group) error {
	lc, err := localctl.Listen(filepath.Join(d.cfg.DataDir, localctl.SocketName), d.ctrl, d.log.With().Str("part", "localctl").Logger())
	if err != nil {
		d.log.Error().Err(err).Msg("local control socket not available: tablectl on this box cannot command the table")
		return nil
	}
	lc.Reload = d.accounts.Reload
	lc.ShufflerReset = d.resetShuffler
	health := d.shufflerCheck(healthOf(d.shoe, d.hw, d.link, d.jr))
	lc.Health = func() []localctl.Check {
		h := health()
		out := make([]localctl.Check, len(h.Checks))
		for i, c := range h.Checks {
			out[i] = localctl.Check{Name: c.Name, OK: c.OK, Detail: c.Detail}
		}
		return out
	}
	d.log.Debug().Str("socket", lc.Path()).Msg("local control socket")
	g.Go(func() error { return lc.Run(ctx) })
	return nil
}

// startConsole serves the dealer and supervisor console, unless it is off.
func (d *tabled) startConsole(ctx context.Context, g *errgroup.Group) error {
	cfg := d.cfg
	if cfg.Console.Addr == "off" {
		return nil
	}
	var users console.Accounts = d.accounts
	if cfg.Demo.Enabled {
		hash, err := console.HashPassword("demo")
		if err != nil {
			return err
		}
		users = demoAccounts{store: d.accounts, hash: hash}
	}
	link := d.link
	d.metrics.SetOutboxDepthFunc(link.OutboxDepth)
	d.metrics.SetBrokerConnectedFunc(func() bool { return link.Stats().Connected })
	d.metrics.SetShoeConnectedFunc(func() bool { up, _, _ := d.shoe.State(); return up })
	d.metrics.SetBrokerTakeoverFunc(func() (uint64, uint64) {
		st := link.Stats()
		return st.ShortConnections, st.TakeoverSuspected
	})
	d.metrics.SetCommandRefusalsFunc(link.Refusals)
	d.metrics.SetPublishLatencyFunc(func() console.LatencySummary {
		l := link.PublishLatency()
		return console.LatencySummary{Count: l.Count, P50: l.P50, P99: l.P99, Max: l.Max}
	})
	addr := cfg.Console.Addr
	if cfg.Demo.Enabled {
		demoAddr, err := demoConsoleAddr(addr)
		if err != nil {
			return err
		}
		if demoAddr != addr {
			d.log.Warn().Str("addr", addr).Msg("port taken: the demo's console takes a free port")
			addr = demoAddr
		}
	}
	cc := cfg.Console
	cons, err := console.New(console.Options{Addr: addr, Accounts: users, GameName: d.rs.Name,
		TLSCert: cc.TLSCert, TLSKey: cc.TLSKey, SecureCookie: cc.SecureCookie, Insecure: cc.Insecure, Currency: cc.Currency,
		Clock: d.clk, Metrics: d.metrics, ShufflerReset: d.consoleShufflerReset},
		d.ctrl, d.recall, d.shufflerCheck(healthOf(d.shoe, d.hw, link, d.jr)), consoleLog(d.log))
	if err != nil {
		return fmt.Errorf("tabled: console: %w", err)
	}
	g.Go(func() error { return ignoreCancel(cons.Run(ctx)) })
	go func() {
		select {
		case <-cons.Ready():
			base := cons.Scheme() + "://" + cons.Addr()
			msg := "console: dealer view " + base + "/ , supervisor " + base + "/supervisor"
			if cfg.Demo.Enabled && d.accounts.Len() == 0 {
				msg += " (demo login: supervisor / demo)"
			}
			d.log.Info().Str("addr", cons.Addr()).Msg(msg)
		case <-ctx.Done():
		}
	}()
	return nil
}

// startTable runs the controller and the event log, with the torn-tail
// alarm of the journal's open as the first input.
func (d *tabled) startTable(ctx context.Context, g *errgroup.Group) error {
	g.Go(func() error { printEvents(d.logEvents, d.log); return nil })
	if alarm, ok := table.TornTailAlarm(d.jrep); ok {
		d.inputs <- alarm
	}
	g.Go(func() error { return d.ctrl.Run(ctx, d.inputs) })
	g.Go(func() error { d.recallEarlier(); return nil })
	return nil
}

// recallEarlier seeds game recall with the rounds before the journal's
// newest checkpoint, which the controller's start (replaying from that
// checkpoint) did not regenerate: read from the journal beside the
// running table, so the restart does not wait for them.
func (d *tabled) recallEarlier() {
	rlog := d.log.With().Str("part", "recall").Logger()
	jr, err := table.OpenForHistory(journalOptions(d.cfg).Dir, rlog)
	if err != nil {
		rlog.Warn().Err(err).Msg("game recall has only the rounds since the last checkpoint")
		return
	}
	defer jr.Close()
	opts := d.copts
	opts.Journal, opts.Replayed, opts.Refusals = table.NewJournal(jr), nil, nil
	if err := d.recall.AddEarlier(func(add func(table.Event)) error { return table.ReplayEarlierEvents(opts, add) }); err != nil {
		rlog.Warn().Err(err).Msg("game recall has only the rounds since the last checkpoint")
	}
}

// shufflerWired reports whether the dual-shoe shuffler is on the GPIO
// and not switched off in the configuration.
func (d *tabled) shufflerWired() bool {
	return d.hw.hasShuffler() && (d.cfg.GPIO.Shuffler == nil || *d.cfg.GPIO.Shuffler)
}

func (d *tabled) startShuffler(ctx context.Context, g *errgroup.Group) error {
	if !d.shufflerWired() {
		return nil
	}
	var onSwap func(string)
	if d.dm != nil {
		onSwap = d.dm.onSwap(ctx, d.log) // the demo's card shoe takes the swapped-in shoe
	}
	d.shuffler.Store(runShuffler(ctx, g, d.hw, d.rs, d.cfg, d.ctrl, d.inputs, onSwap, d.clk, d.log))
	return nil
}

// startDemoPlay starts the demo's supervisor, dealer and players.
func (d *tabled) startDemoPlay(ctx context.Context, g *errgroup.Group) error {
	if d.dm == nil {
		return nil
	}
	return d.dm.play(ctx, g, d.ctrl, d.cfg, d.rs, d.shufflerWired(), d.broker, d.log)
}

// announceReady tells systemd (and the log) once the controller's loop
// answers, then feeds its watchdog from the same answer.
func (d *tabled) announceReady(ctx context.Context, g *errgroup.Group) error {
	notify := newNotifier(d.log)
	g.Go(func() error {
		if err := d.ctrl.Ping(ctx); err != nil {
			return nil // stopping already
		}
		notify.send("READY=1")
		d.log.Info().Str("game", d.rs.Code).Str("name", d.rs.Name).Str("table", d.cfg.Table).Msg("tabled running")
		notify.watchdog(ctx, d.ctrl.Ping)
		notify.send("STOPPING=1")
		return nil
	})
	return nil
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

// demoConsoleAddr is the address the demo's console listens on: addr,
// or a free loopback port when addr's port is taken (a second demo, a
// service on 8080). Any other reason addr cannot be listened on (not an
// address, not this machine's) is an error: the configuration is wrong.
func demoConsoleAddr(addr string) (string, error) {
	l, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return "127.0.0.1:0", nil
	}
	if err != nil {
		return "", fmt.Errorf("tabled: console.addr %q: %w", addr, err)
	}
	_ = l.Close()
	return addr, nil
}

func ignoreCancel(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
