// Command genstrategy computes the basic-strategy tables of games 000-003
// with the EV calculator of table/strategy/internal/ev and writes them as
// table/strategy/data/NNN.txt. With -report it also prints each game's
// expected return for the committed tables (004 included).
//
// Usage, from the repository root:
//
//	go run ./table/strategy/cmd/genstrategy -out table/strategy/data
//	go run ./table/strategy/cmd/genstrategy -report
package main

import (
	"flag"
	"fmt"
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
	flag.Parse()
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).With().Timestamp().Logger()
	if err := run(*out, *report, log); err != nil {
		log.Error().Err(err).Msg("genstrategy failed")
		os.Exit(1)
	}
}

func run(out string, report bool, log zerolog.Logger) error {
	if out != "" {
		for _, code := range ev.Generated {
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
			fmt.Printf("%s  table %s: return %+.4f%% (RTP %.3f%%); best play per hand %+.4f%%\n",
				code, t.Name(), 100*ret, 100*(1+ret), 100*opt)
		}
		r, _ := ev.Game("004")
		c, _ := ev.New(r)
		auto := c.Return(strategy.SisalNoDoubleNoSplit())
		fmt.Printf("004  table 004-auto: return %+.4f%% (RTP %.3f%%)\n", 100*auto, 100*(1+auto))
	}
	return nil
}
