// Command bjsim is the game-maths tool of the table: it computes what the
// games return to the player and sets each figure beside the one the house
// rules state.
//
// Usage:
//
//	bjsim <subcommand> [flags]
//
// Subcommands:
//
//	sidebets   exact side-bet and insurance returns, by combinatorics on the shoe
//	rtp        main-game return of the real engine with basic strategy
//	exact      exact main-game return of the same strategy, by combinatorial analysis
//
// Run "bjsim <subcommand> -h" for a subcommand's flags. The exit status is 0
// on success, 1 when a computation fails or a --check finds a mismatch, and
// 2 on a usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/cmd/internal/buildinfo"
)

// command is one subcommand. run parses its own flags from args (writing
// flag errors and help to stderr), prints its report to stdout and returns
// an error wrapping errUsage for bad flags.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer, log zerolog.Logger) error
}

// commands is the dispatch table. A new subcommand is one more entry here
// and a file of its own beside this one.
func commands() map[string]command {
	return map[string]command{
		"sidebets": {summary: "exact side-bet and insurance returns beside the documents' figures", run: runSidebets},
		"rtp":      {summary: "main-game return with basic strategy, real engine, finite shoe, 95% interval", run: runRTP},
		"exact":    {summary: "exact main-game return of the game's strategy, first hand of a full shoe, by combinatorial analysis", run: runExact},
	}
}

// errUsage marks bad command-line input: exit status 2.
var errUsage = errors.New("bjsim: usage")

// errCheck marks a completed run whose figures failed a requested check:
// exit status 1, without an error log line (the report says what failed).
var errCheck = errors.New("bjsim: check failed")

func main() {
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).With().Timestamp().Logger()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, log)
	stop()
	os.Exit(code)
}

// run dispatches args to a subcommand and maps its error to an exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, log zerolog.Logger) int {
	cmds := commands()
	if len(args) == 0 {
		usage(stderr, cmds)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout, cmds)
		return 0
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, buildinfo.String("bjsim"))
		return 0
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "bjsim: unknown subcommand %q\n", args[0])
		usage(stderr, cmds)
		return 2
	}
	err := cmd.run(ctx, args[1:], stdout, stderr, log)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, err)
		return 2
	case errors.Is(err, errCheck):
		fmt.Fprintln(stderr, err)
		return 1
	default:
		log.Error().Err(err).Str("subcommand", args[0]).Msg("bjsim failed")
		return 1
	}
}

func usage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for name := range cmds {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("usage: bjsim <subcommand> [flags]\n\nsubcommands:\n")
	for _, name := range names {
		fmt.Fprintf(&b, "  %-10s %s\n", name, cmds[name].summary)
	}
	b.WriteString("\nrun 'bjsim <subcommand> -h' for its flags\n")
	_, _ = io.WriteString(w, b.String())
}
