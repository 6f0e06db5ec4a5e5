package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table/rtp"
	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/strategy"
	"github.com/livetable/livetable/table/strategy/exact"
)

// exactJSON is one game's figure in --json output.
type exactJSON struct {
	Game     string  `json:"game"`
	Table    string  `json:"table"`
	RTP      float64 `json:"rtp"` // percent
	SD       float64 `json:"sd"`  // per round, in bets
	Variance float64 `json:"variance"`
	Seconds  float64 `json:"seconds"`
	ByUp     []class `json:"by_up"`
	ByHand   []class `json:"by_hand"`
	// MC is the real engine's figure beside it (--rounds).
	MC *mcJSON `json:"mc,omitempty"`
}

type class struct {
	Name string  `json:"name"`
	Prob float64 `json:"prob"`
	Mean float64 `json:"mean"`
}

type mcJSON struct {
	Rounds int64   `json:"rounds"`
	RTP    float64 `json:"rtp"`  // percent
	CI95   float64 `json:"ci95"` // percentage points
	Z      float64 `json:"z"`    // (mc - exact) in standard errors
}

func runExact(ctx context.Context, args []string, stdout, stderr io.Writer, _ zerolog.Logger) error {
	fs := flag.NewFlagSet("bjsim exact", flag.ContinueOnError)
	fs.SetOutput(stderr)
	game := fs.String("game", "000", "game code 000-004, or all")
	table := fs.String("table", "game", "strategy: game (the table the engine's simulator plays) or auto (the game's automatic-play table, 004)")
	asJSON := fs.Bool("json", false, "print JSON: one object per game (an array for --game all)")
	report := fs.Bool("report", false, "print the Markdown report of docs/game-maths.md: rules, strategy, return by up card and starting hand, variance, side bets")
	rounds := fs.Int64("rounds", 0, "also play this many rounds of the real engine (first hand of each shoe) and set the figure beside the exact one")
	seed := fs.Uint64("seed", 1, "seed of the shoes (--rounds)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "goroutines for --rounds")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if *rounds < 0 || *workers < 1 {
		return fmt.Errorf("%w: --rounds %d, --workers %d: rounds 0 (none) or more, workers at least 1", errUsage, *rounds, *workers)
	}
	codes := []string{*game}
	if *game == "all" {
		codes = rules.Codes()
	}
	var all []exactJSON
	var sections strings.Builder
	var summary []string
	if !*asJSON && !*report {
		fmt.Fprintf(stdout, "%-5s %-9s %10s %8s %8s", "game", "table", "exact %", "SD", "time")
		if *rounds > 0 {
			fmt.Fprintf(stdout, " %12s %9s %8s %7s", "rounds", "engine %", "±95%", "z")
		}
		fmt.Fprintln(stdout)
	}
	for _, code := range codes {
		rs, err := rules.Game(code)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		st, err := tableFor(rs, *table)
		if err != nil {
			return err
		}
		start := time.Now()
		r, err := exact.Analyze(rs, st)
		if err != nil {
			return fmt.Errorf("bjsim: game %s: %w", rs.Code, err)
		}
		took := time.Since(start)
		var mc *exact.MC
		if *rounds > 0 {
			res, err := rtp.Run(ctx, rtp.Options{Rules: rs, Table: st, Rounds: *rounds, Seed: *seed, Workers: *workers, FirstHandOnly: true})
			if err != nil {
				return err
			}
			mc = &exact.MC{Rounds: res.Rounds, RTP: res.RTP, CI95: res.CI95}
		}
		switch {
		case *report:
			sides, err := exact.SideBets(rs)
			if err != nil {
				return err
			}
			if err := exact.WriteMarkdown(&sections, r, rs, st, sides, mc); err != nil {
				return err
			}
			summary = append(summary, summaryRow(r, took, mc))
		case *asJSON:
			all = append(all, toJSON(r, took, mc))
		default:
			fmt.Fprintf(stdout, "%-5s %-9s %10.4f %8.4f %7.3fs", r.Game, r.Table, 100*r.RTP, r.SD, took.Seconds())
			if mc != nil {
				fmt.Fprintf(stdout, " %12d %9.4f %8.4f %+7.2f", mc.Rounds, 100*mc.RTP, 100*mc.CI95, (mc.RTP-r.RTP)/(mc.CI95/1.96))
			}
			fmt.Fprintln(stdout)
		}
	}
	if *report {
		// The table of every game first, then each game's report.
		fmt.Fprintf(stdout, "| game | table | exact return | SD per round | time |%s\n|---|---|---|---|---|%s\n",
			map[bool]string{true: " engine (rounds) | ±95% | z |", false: ""}[*rounds > 0],
			map[bool]string{true: "---|---|---|", false: ""}[*rounds > 0])
		for _, row := range summary {
			fmt.Fprintln(stdout, row)
		}
		fmt.Fprintln(stdout)
		_, err := io.WriteString(stdout, sections.String())
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		if len(all) == 1 {
			return enc.Encode(all[0])
		}
		return enc.Encode(all)
	}
	return nil
}

// tableFor is the strategy table the analysis plays: the game's own
// (strategy.ForGame, what bjsim rtp plays) or its automatic-play table.
func tableFor(rs *rules.Set, which string) (*strategy.Table, error) {
	switch which {
	case "game":
		return strategy.ForGame(rs.Code)
	case "auto":
		if rs.AutoPlayTable == "004-auto" {
			return strategy.SisalNoDoubleNoSplit(), nil
		}
		return nil, fmt.Errorf("%w: game %s has no automatic-play table", errUsage, rs.Code)
	}
	return nil, fmt.Errorf("%w: --table %q: want game or auto", errUsage, which)
}

func toJSON(r *exact.Report, took time.Duration, mc *exact.MC) exactJSON {
	j := exactJSON{Game: r.Game, Table: r.Table, RTP: 100 * r.RTP, SD: r.SD, Variance: r.Variance, Seconds: took.Seconds()}
	for up := 1; up <= 10; up++ {
		c := r.ByUp[up]
		j.ByUp = append(j.ByUp, class{c.Name, c.Prob, c.Mean})
	}
	for _, c := range r.ByHand {
		j.ByHand = append(j.ByHand, class{c.Name, c.Prob, c.Mean})
	}
	if mc != nil {
		j.MC = &mcJSON{Rounds: mc.Rounds, RTP: 100 * mc.RTP, CI95: 100 * mc.CI95, Z: (mc.RTP - r.RTP) / (mc.CI95 / 1.96)}
	}
	return j
}

// summaryRow is a game's line of the report's table.
func summaryRow(r *exact.Report, took time.Duration, mc *exact.MC) string {
	row := fmt.Sprintf("| %s | %s | %.4f%% | %.4f | %.3f s |", r.Game, r.Table, 100*r.RTP, r.SD, took.Seconds())
	if mc != nil {
		row += fmt.Sprintf(" %.4f%% (%d) | %.4f | %+.2f |", 100*mc.RTP, mc.Rounds, 100*mc.CI95, (mc.RTP-r.RTP)/(mc.CI95/1.96))
	}
	return row
}
