// Command shoesim runs a simulated card shoe on a pseudo-terminal and
// prints the tty path for the table daemon (or any shoeproto reader) to
// open. It deals from a seeded shuffled shoe or a script of cards, paced
// by a dealer's pull rate or as fast as the reader acknowledges, with
// optional fault injection.
//
// Usage:
//
//	shoesim [--seed N | --script FILE] [--rate R | --fast] [--link PATH] [--control FILE] [fault flags]
//
// --link keeps a symbolic link to the pty, as the udev rule does for a USB
// shoe: with --unplug-every the replugged shoe usually comes back under a
// new pty path, which a table configured with the printed path would not
// find; the link follows it.
//
// --control reads commands (pull N, unplug, replug, misread...) from a
// file, a FIFO or stdin, so a person or a script deals a round by hand
// with --rate 0: cards pulled exactly when the round needs them, the
// cable pulled out between two cards.
//
// A script file holds cards in wire form ("As Td 7c"), separated by spaces
// or newlines; lines starting with # are comments.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/cmd/internal/buildinfo"
	"github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/table/card"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2) // the flag package has said what is wrong, with the usage
	default:
		fmt.Fprintln(os.Stderr, "shoesim:", err)
		os.Exit(1)
	}
}

// errUsage marks flags run could not parse: exit status 2, as for every
// command of the project.
var errUsage = errors.New("shoesim: usage")

// run parses args, prints the pty path on stdout and serves the shoe until
// ctx ends.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	def := shoe.DefaultOptions()
	opts := def
	var script, logFormat, logLevel, controlPath string
	fs := flag.NewFlagSet("shoesim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Uint64Var(&opts.Seed, "seed", def.Seed, "seed of the shuffles (PCG)")
	fs.StringVar(&script, "script", "", "file of cards to stack on top of the first shoe (\"As Td 7c\")")
	fs.IntVar(&opts.Decks, "decks", def.Decks, "decks per shoe")
	fs.Float64Var(&opts.Penetration, "penetration", def.Penetration, "fraction of the shoe dealt before the cut card")
	fs.Float64Var(&opts.Rate, "rate", 2, "cards pulled per second (0: none, the shoe only answers)")
	fs.BoolVar(&opts.Fast, "fast", false, "pull cards as fast as the reader acknowledges them")
	fs.BoolVar(&opts.RFID, "rfid", false, "act as an RFID shoe: send each card's unique code")
	fs.StringVar(&opts.Serial, "serial", def.Serial, "device serial number sent in HELLO")
	fs.StringVar(&opts.Firmware, "firmware", def.Firmware, "firmware version sent in HELLO")
	fs.DurationVar(&opts.Heartbeat, "heartbeat", def.Heartbeat, "heartbeat interval")
	fs.StringVar(&opts.Link, "link", "", "keep a symbolic link at this path to the pty while plugged in, as udev does for a USB shoe (the path printed; it survives --unplug-every)")
	f := &opts.Faults
	fs.IntVar(&f.NoiseEvery, "noise-every", 0, "write noise bytes before every Nth frame")
	fs.IntVar(&f.NoiseBytes, "noise-bytes", 16, "noise bytes per burst")
	fs.IntVar(&f.CorruptEvery, "corrupt-every", 0, "corrupt (CRC error) every Nth frame")
	fs.IntVar(&f.DropEvery, "drop-every", 0, "drop every Nth frame")
	fs.IntVar(&f.DuplicateEvery, "dup-every", 0, "send every Nth frame twice")
	fs.DurationVar(&f.SilenceEvery, "silence-every", 0, "fall silent at this interval")
	fs.DurationVar(&f.SilenceFor, "silence-for", 5*time.Second, "length of each silence")
	fs.DurationVar(&f.UnplugEvery, "unplug-every", 0, "unplug the cable at this interval (new tty path on replug)")
	fs.DurationVar(&f.UnplugFor, "unplug-for", 2*time.Second, "time unplugged")
	fs.IntVar(&f.MisreadEvery, "misread-every", 0, "report a misread after every Nth card")
	fs.IntVar(&f.DoubleCardEvery, "double-every", 0, "report a double card after every Nth card")
	fs.IntVar(&f.JamEvery, "jam-every", 0, "report a jam after every Nth card")
	fs.IntVar(&f.ForeignEvery, "foreign-every", 0, "after every Nth card pulled, the next pull deals a card from outside the shoe (any card of a 52-card deck; the log names it). With --rfid its code is of deck 99: the table raises an integrity alarm (unknown code) at once. Without, it looks like any card of its face (the shoe holds --decks of each): the table raises the alarm at shoe out (count mismatch: more dealt and returned than the shoe held), or sooner when it is one more of a card than the decks hold (over count)")
	fs.IntVar(&f.ShortDeck, "short-deck", 0, "secretly remove this many cards from every shoe")
	fs.BoolVar(&f.Unshuffled, "unshuffled", false, "every new shoe repeats the previous order")
	fs.StringVar(&controlPath, "control", "", "read commands a line at a time from this file or FIFO (- for stdin) and act as the dealer: "+controlHelp)
	fs.StringVar(&logFormat, "log-format", "console", "log format: console or json")
	fs.StringVar(&logLevel, "log-level", "info", "log level")
	version := fs.Bool("version", false, "print the version, commit and build date, and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if *version {
		_, err := fmt.Fprintln(stdout, buildinfo.String("shoesim"))
		return err
	}

	if err := checkRanges(opts); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	lvl, err := zerolog.ParseLevel(logLevel)
	if err != nil || logLevel == "" {
		return fmt.Errorf("--log-level %q: want trace, debug, info, warn or error", logLevel)
	}
	if controlPath != "" && controlPath != "-" {
		// Checked before the shoe is plugged in: a mistyped path would
		// otherwise leave a shoe nobody can deal from, running on.
		if _, err := os.Stat(controlPath); err != nil {
			return fmt.Errorf("--control: %w (make the FIFO first: mkfifo %s)", err, controlPath)
		}
	}
	log := zerolog.New(stderr).Level(lvl).With().Timestamp().Logger()
	if logFormat == "console" {
		log = log.Output(zerolog.ConsoleWriter{Out: stderr, TimeFormat: time.TimeOnly})
	}
	if script != "" {
		cards, err := readScript(script)
		if err != nil {
			return err
		}
		opts.Script = cards
	}
	if opts.Rate == 0 && !opts.Fast {
		log.Info().Msg("rate 0: the shoe answers the reader but deals nothing")
	}

	dev, err := shoe.New(opts, log)
	if err != nil {
		return err
	}
	defer dev.Close()
	path := dev.Path()
	if opts.Link != "" {
		path = opts.Link
	}
	fmt.Fprintln(stdout, path)
	log.Info().Str("path", path).Str("pty", dev.Path()).Uint64("seed", opts.Seed).Msg("shoe ready")
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	if controlPath != "" {
		go func() {
			if err := serveControl(runCtx, controlPath, os.Stdin, dev, log); err != nil {
				stopRun(err) // the dealer's hands are gone: stop, saying why
			}
		}()
	}
	if err := dev.Run(runCtx); err != nil && runCtx.Err() == nil {
		return err
	}
	if ctx.Err() == nil {
		return context.Cause(runCtx)
	}
	return nil
}

// checkRanges refuses flag values the shoe would otherwise replace by its
// defaults without a word (--decks 0, --penetration 2, --heartbeat 0) or
// take for something else (a negative rate or count).
func checkRanges(o shoe.Options) error {
	f := o.Faults
	switch {
	case o.Decks < 1:
		return fmt.Errorf("--decks %d: at least 1", o.Decks)
	case o.Penetration <= 0 || o.Penetration > 1:
		return fmt.Errorf("--penetration %v: a fraction of the shoe above 0, at most 1", o.Penetration)
	case o.Rate < 0:
		return fmt.Errorf("--rate %v: cards a second, 0 or more", o.Rate)
	case o.Heartbeat <= 0:
		return fmt.Errorf("--heartbeat %v: above 0", o.Heartbeat)
	case f.SilenceFor <= 0 || f.UnplugFor <= 0:
		return fmt.Errorf("--silence-for %v, --unplug-for %v: above 0", f.SilenceFor, f.UnplugFor)
	case f.SilenceEvery < 0 || f.UnplugEvery < 0:
		return fmt.Errorf("--silence-every %v, --unplug-every %v: 0 (never) or more", f.SilenceEvery, f.UnplugEvery)
	}
	for name, n := range map[string]int{"--noise-every": f.NoiseEvery, "--noise-bytes": f.NoiseBytes, "--corrupt-every": f.CorruptEvery,
		"--drop-every": f.DropEvery, "--dup-every": f.DuplicateEvery, "--misread-every": f.MisreadEvery, "--double-every": f.DoubleCardEvery,
		"--jam-every": f.JamEvery, "--foreign-every": f.ForeignEvery, "--short-deck": f.ShortDeck} {
		if n < 0 {
			return fmt.Errorf("%s %d: 0 (never) or more", name, n)
		}
	}
	return nil
}

func readScript(path string) ([]card.Card, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--script: %w", err)
	}
	var words []string
	for _, line := range strings.Split(string(raw), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		words = append(words, strings.Fields(line)...)
	}
	cards, err := card.ParseList(words)
	if err != nil {
		return nil, fmt.Errorf("--script %s: %w", path, err)
	}
	return cards, nil
}
