// Command genstrategy computes the basic-strategy tables of games 000-003
// with the EV calculator of table/strategy/internal/ev and writes them as
// table/strategy/data/NNN.txt. With -report it also prints each game's
// expected return for the committed tables (004 included).
//
// Usage, from the repository root:
//
//	go run ./table/strategy/cmd/genstrategy -out table/strategy/data
//	go run ./table/strategy/cmd/genstrategy -report
//	go run ./table/strategy/cmd/genstrategy -game 002 -out /tmp
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table/strategy"
	"github.com/livetable/livetable/table/strategy/internal/ev"
)

func main() {
	out := flag.String("out", "", "directory to write the generated NNN.txt files into (empty: do not write)")
	report := flag.Bool("report", false, "print the expected return of each game's committed table")
	game := flag.String("game", "", "generate only this game (default: 000-003)")
	flag.Parse()
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).With().Timestamp().Logger()
	games := ev.Generated
	if *game != "" {
		games = []string{*game}
	}
	if err := run(os.Stdout, *out, games, *report, log); err != nil {
		log.Error().Err(err).Msg("genstrategy failed")
		os.Exit(1)
	}
}

// run writes the tables of games into the folder out (when set) and, with
// report, prints the expected returns to w.
func run(w io.Writer, out string, games []string, report bool, log zerolog.Logger) error {
	if out != "" {
		for _, code := range games {
			start := time.Now()
			b, err := ev.Generate(code)
			if err != nil {
				return err
			}
			path := filepath.Join(out, code+".txt")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				return fmt.Errorf("genstrategy: %w", err)
			}
			log.Info().Str("game", code).Str("file", path).Dur("took", time.Since(start)).Msg("table written")
		}
	}
	if report {
		for _, code := range []string{"000", "001", "002", "003", "004"} {
			r, err := ev.Game(code)
			if err != nil {
				return err
			}
			c, err := ev.New(r)
			if err != nil {
				return err
			}
			t, err := strategy.ForGame(code)
			if err != nil {
				return err
			}
			ret, opt := c.Return(t), c.OptimalReturn()
			fmt.Fprintf(w, "%s  table %s: return %+.4f%% (RTP %.3f%%); best play per hand %+.4f%%\n",
				code, t.Name(), 100*ret, 100*(1+ret), 100*opt)
		}
		r, err := ev.Game("004")
		if err != nil {
			return err
		}
		c, err := ev.New(r)
		if err != nil {
			return err
		}
		auto := c.Return(strategy.SisalNoDoubleNoSplit())
		fmt.Fprintf(w, "004  table 004-auto: return %+.4f%% (RTP %.3f%%)\n", 100*auto, 100*(1+auto))
	}
	return nil
}
