// Command tabled is the table daemon: one per physical blackjack table. It
// reads the card shoe over serial, drives the traffic light over GPIO, runs
// the game in the rules engine, journals every input, and publishes the
// table over MQTT to the streaming backend.
//
// This file and its siblings only wire the packages together: configuration,
// construction, run, shutdown. See README.md for the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/cmd/internal/buildinfo"
)

func main() {
	// SIGHUP's default action ends the process. systemctl reload (and
	// tablectl's fallback advice) may send it while tabled is still
	// starting (a long journal replay, the broker's check): from here it
	// is caught, and serve reloads the accounts once it runs.
	early := make(chan os.Signal, 1)
	signal.Notify(early, syscall.SIGHUP)
	tuneGC()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// gcPercent is the daemon's GOGC. Its live heap is 2-3 MB, and Go's
// default (100) lets the heap grow to twice that before collecting; at 25
// the resident set is about 2 MB lower (BenchmarkDaemonRSS) for a
// collection every few dozen cards, about a millisecond of CPU each.
// GOGC in the environment wins.
const gcPercent = 25

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tabled", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfgPath   = fs.String("config", "", "YAML configuration file (see cmd/tabled/tabled.example.yaml)")
		logFormat = fs.String("log-format", "", "log format: json (default) or console")
		logLevel  = fs.String("log-level", "", "log level: debug, info, warn, error")
		demo      = fs.Bool("demo", false, "run a whole demo table: simulated shoe on a pty, dealer, players, GPIO")
		sim       = fs.Bool("sim", false, "use simulated GPIO pins")
		dataDir   = fs.String("data-dir", "", "directory of the journal and the MQTT outbox")
		broker    = fs.String("broker", "", "external MQTT broker URL, or the nodes of a cluster comma-separated (tried in order); empty: embedded broker")
		embedded  = fs.String("embedded-addr", "", "address of the embedded broker (default 127.0.0.1:1883)")
		game      = fs.String("game", "", "game code 000-004")
		tableID   = fs.String("table", "", "table id")
		studio    = fs.String("studio", "", "studio id")
		shoePath  = fs.String("shoe", "", "serial device of the card shoe")
		seats     = fs.Int("seats", 0, "demo: seats played by simulated players")
		seed      = fs.Uint64("seed", 0, "demo: shoe and bet seed")
		version   = fs.Bool("version", false, "print the version, commit and build date, and exit")
		checkOnly = fs.Bool("check-config", false, "check the configuration (file and flags) as a start would, print what it runs, and exit: 0 when a start would take it, 2 when not; it reads the TLS and accounts files and looks at the shoe's device, and creates, opens for writing and starts nothing")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *version {
		fmt.Fprintln(stdout, buildinfo.String("tabled"))
		return 0
	}
	cfg, err := LoadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&cfg.LogFormat, *logFormat)
	set(&cfg.LogLevel, *logLevel)
	set(&cfg.DataDir, *dataDir)
	if urls := splitList(*broker); len(urls) > 0 {
		cfg.Broker.URL, cfg.Broker.FailoverURLs = urls[0], urls[1:]
	}
	set(&cfg.Broker.EmbeddedAddr, *embedded)
	set(&cfg.Game, *game)
	set(&cfg.Table, *tableID)
	set(&cfg.Studio, *studio)
	set(&cfg.Shoe.Path, *shoePath)
	if *demo {
		cfg.Demo.Enabled = true
		cfg.GPIO.Sim = true
	}
	if *sim {
		cfg.GPIO.Sim = true
	}
	if *seats > 0 {
		cfg.Demo.Seats = *seats
	}
	if *seed > 0 {
		cfg.Demo.Seed = *seed
	}
	if err := cfg.check(); err != nil { // the flags' values too, before the data directory is touched
		fmt.Fprintln(stderr, "tabled:", err)
		return 2
	}

	log, err := newLogger(cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if *checkOnly {
		// Before an upgrade or an edit is put live: the new build's checks
		// on the file in place, with nothing started (the table keeps
		// running meanwhile).
		if err := buildRefuses(cfg); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		warnings, err := cfg.checkFiles()
		if err != nil {
			fmt.Fprintln(stderr, "tabled:", err)
			return 2
		}
		for _, w := range warnings {
			fmt.Fprintln(stdout, "tabled: warning:", w)
		}
		fmt.Fprintln(stdout, checkedConfig(*cfgPath, cfg))
		return 0
	}
	if os.Getenv("GOMEMLIMIT") == "" && cfg.MemoryLimit > 0 {
		debug.SetMemoryLimit(int64(cfg.MemoryLimit))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, cfg, log); err != nil && !errors.Is(err, context.Canceled) {
		log.Error().Err(err).Msg("tabled stopped on error")
		return 1
	}
	log.Info().Msg("tabled stopped")
	return 0
}

// checkedConfig is what --check-config prints of a configuration a start
// would take: the table it runs and where its data and broker are.
func checkedConfig(path string, cfg Config) string {
	if path == "" {
		path = "(no file: the defaults and flags)"
	}
	broker := cfg.Broker.URL
	if broker == "" {
		broker = "embedded " + cfg.Broker.EmbeddedAddr
	}
	return fmt.Sprintf("tabled: configuration OK: %s: studio %s, table %s, game %s, data_dir %s, broker %s, demo %t",
		path, cfg.Studio, cfg.Table, cfg.Game, cfg.DataDir, broker, cfg.Demo.Enabled)
}

func newLogger(cfg Config, w io.Writer) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(strings.ToLower(cfg.LogLevel))
	if err != nil {
		return zerolog.Nop(), fmt.Errorf("tabled: log level %q: want debug, info, warn or error", cfg.LogLevel)
	}
	switch cfg.LogFormat {
	case "json", "":
	case "console":
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05.000"}
	default:
		return zerolog.Nop(), fmt.Errorf("tabled: log format %q: want json or console", cfg.LogFormat)
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano // main owns the process-wide logger settings
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

func absData(cfg Config, sub string) string {
	return filepath.Join(cfg.DataDir, sub)
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
