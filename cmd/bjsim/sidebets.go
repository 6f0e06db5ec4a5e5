package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table/sidebets"
)

// betLine is one bet of one game as the house rules describe it.
type betLine struct {
	label string
	// kind is the side bet; insurance when empty.
	kind sidebets.Kind
	pt   func() sidebets.Paytable
	opts []sidebets.Option
	// stated is the document's figure in percent as printed ("95.90"), or
	// empty when the document states none.
	stated string
	// rules describes the reading used beyond the paytable (dealer rule,
	// conditioning).
	rules string
}

// gameBets lists a game's side bets and insurance with the documents'
// figures. The integrator's rule sets (table/rules) will own the paytables;
// the stated figures are facts of the documents and belong to this report.
type gameBets struct {
	id, name string
	decks    int
	bets     []betLine
}

// insurancePays is 2 to one in all five documents.
const insurancePays = 2

func insurance(stated string) betLine {
	return betLine{label: "Insurance", stated: stated, rules: "Ace up, seat's cards unseen"}
}

// catalogue returns the five games in id order.
func catalogue() []gameBets {
	pairs := sidebets.PerfectPairsPaytable
	tpt := sidebets.TwentyOnePlus3Paytable
	return []gameBets{
		{id: "000", name: "Live Blackjack", decks: 8, bets: []betLine{
			{label: "Perfect Pairs", kind: sidebets.KindPerfectPairs, pt: pairs, stated: "95.90"},
			{label: "21+3", kind: sidebets.KindTwentyOnePlus3, pt: tpt, stated: "96.30"},
			insurance(""),
		}},
		{id: "001", name: "Premium Blackjack", decks: 6, bets: []betLine{
			{label: "Player Pair", kind: sidebets.KindPerfectPairs, pt: pairs},
			{label: "Dealer Pair", kind: sidebets.KindDealerPair, pt: pairs},
			{label: "21+3", kind: sidebets.KindTwentyOnePlus3, pt: tpt, stated: "95.38",
				rules: "the document's only RTP figure"},
			insurance(""),
		}},
		{id: "002", name: "Infinite Free Bet Blackjack", decks: 8, bets: []betLine{
			{label: "Perfect Pairs", kind: sidebets.KindPerfectPairs, pt: pairs, stated: "95.90"},
			{label: "21+3", kind: sidebets.KindTwentyOnePlus3, pt: tpt, stated: "96.30"},
			{label: "Hot 3", kind: sidebets.KindHot3, pt: sidebets.Hot3Paytable, stated: "94.60",
				rules: "Aces 1 or 11"},
			{label: "Bust It", kind: sidebets.KindBustIt, pt: sidebets.BustItPaytable, stated: "94.12",
				rules: "S17, 22 busts, seat's cards out, BJ push"},
			insurance(""),
		}},
		{id: "003", name: "Speed Blackjack", decks: 8, bets: []betLine{
			{label: "21+3", kind: sidebets.KindTwentyOnePlus3, pt: tpt, stated: "96.30"},
			{label: "Top 3", kind: sidebets.KindTop3, pt: sidebets.Top3Paytable, stated: "91.00",
				rules: "paytable assumed: none printed"},
			{label: "Player Pair", kind: sidebets.KindPerfectPairs, pt: pairs, stated: "95.90"},
			{label: "Dealer Pair", kind: sidebets.KindDealerPair, pt: pairs, stated: "95.90"},
			insurance(""),
		}},
		{id: "004", name: "Sisal Black Jack", decks: 6, bets: []betLine{
			{label: "Perfect pair", kind: sidebets.KindPerfectPairs, pt: sidebets.SisalPairsPaytable, stated: "94.21",
				rules: "'31/11/6 volte' read for one"},
			insurance("92.60"),
		}},
	}
}

// checkTolerance is how far (percentage points) a computed return may be
// from the stated one: the documents print two decimals.
const checkTolerance = 0.01

func runSidebets(_ context.Context, args []string, stdout, stderr io.Writer, log zerolog.Logger) error {
	fs := flag.NewFlagSet("bjsim sidebets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	game := fs.String("game", "all", "game id 000..004, or all")
	exact := fs.Bool("exact", false, "also print each return as an exact fraction")
	check := fs.Bool("check", false, "exit 1 if a computed return differs from a stated one by 0.01 pp or more")
	verbose := fs.Bool("v", false, "log the time each computation takes")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: bjsim sidebets [--game ID|all] [--exact] [--check] [-v]\n\n"+
			"Computes every side bet's and insurance's return exactly, by combinatorics on a\n"+
			"fresh shoe, and prints it beside the figure the game's document states.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if !*verbose {
		log = log.Level(zerolog.InfoLevel)
	}
	games, err := selectGames(catalogue(), *game)
	if err != nil {
		return err
	}
	bad, err := reportSidebets(stdout, games, *exact, log)
	if err != nil {
		return err
	}
	if *check && bad > 0 {
		return fmt.Errorf("%w: %d return(s) differ from the stated figure by %.2f pp or more", errCheck, bad, checkTolerance)
	}
	return nil
}

func selectGames(all []gameBets, id string) ([]gameBets, error) {
	if id == "all" {
		return all, nil
	}
	ids := make([]string, 0, len(all))
	for _, g := range all {
		if g.id == id {
			return []gameBets{g}, nil
		}
		ids = append(ids, g.id)
	}
	return nil, fmt.Errorf("%w: unknown game %q (want %s or all)", errUsage, id, strings.Join(ids, ", "))
}

// reportSidebets computes and prints every bet of games, and returns how
// many stated figures the computation misses by checkTolerance or more.
func reportSidebets(w io.Writer, games []gameBets, exact bool, log zerolog.Logger) (mismatches int, err error) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for gi, g := range games {
		if gi > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "game %s %s, %d decks, fresh shoe\n", g.id, g.name, g.decks)
		header := "bet\tpaytable\tcomputed\tstated\tdiff pp\tcheck\treading"
		if exact {
			header += "\texact return"
		}
		fmt.Fprintln(tw, header)
		for _, b := range g.bets {
			start := time.Now()
			a, err := analyse(b, g.decks)
			if err != nil {
				return mismatches, fmt.Errorf("bjsim: game %s %s: %w", g.id, b.label, err)
			}
			log.Debug().Str("game", g.id).Str("bet", b.label).Dur("took", time.Since(start)).Msg("return computed")
			stated, diff, verdict := "-", "-", "-"
			if b.stated != "" {
				s, err := strconv.ParseFloat(b.stated, 64)
				if err != nil {
					return mismatches, fmt.Errorf("bjsim: game %s %s: stated figure %q: %w", g.id, b.label, b.stated, err)
				}
				d := a.Percent() - s
				stated, diff, verdict = b.stated+"%", fmt.Sprintf("%+.3f", d), "ok"
				if math.Abs(d) >= checkTolerance {
					verdict = "MISMATCH"
					mismatches++
				}
			}
			reading := b.rules
			if reading == "" {
				reading = "-"
			}
			line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s",
				b.label, paytableString(b), ratPercent(a.Return), stated, diff, verdict, reading)
			if exact {
				line += "\t" + a.Return.RatString()
			}
			fmt.Fprintln(tw, line)
		}
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "Returns are exact (combinatorics on the first hand of a fresh shoe), stake included, rounded to 3 decimals;")
	fmt.Fprintln(tw, "check: ok when within 0.01 pp of the document's figure. Insurance pays 2 to one on a dealer blackjack")
	fmt.Fprintln(tw, "under an Ace, averaged over the seat's own cards (see docs/game-maths.md).")
	if err := tw.Flush(); err != nil {
		return mismatches, fmt.Errorf("bjsim: writing the report: %w", err)
	}
	return mismatches, nil
}

// analyse computes the exact return of one bet line.
func analyse(b betLine, decks int) (sidebets.Analysis, error) {
	if b.kind == "" {
		return sidebets.InsuranceReturn(decks, insurancePays)
	}
	return sidebets.Return(b.kind, b.pt(), decks, b.opts...)
}

// paytableString prints a paytable best result first, as "100/40/30/10/5".
func paytableString(b betLine) string {
	if b.kind == "" {
		return strconv.Itoa(insurancePays)
	}
	results, err := b.kind.Results()
	if err != nil {
		return "?"
	}
	pt := b.pt()
	var parts []string
	for _, r := range results {
		if pays, ok := pt[r]; ok {
			parts = append(parts, strconv.FormatInt(pays, 10))
		}
	}
	return strings.Join(parts, "/")
}

// ratPercent formats an exact return as a percentage with three decimals,
// rounded half up, without going through a float.
func ratPercent(r *big.Rat) string {
	return new(big.Rat).Mul(r, big.NewRat(100, 1)).FloatString(3) + "%"
}
