package exact

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/sidebets"
	"github.com/livetable/livetable/table/strategy"
)

// RuleLines describes a rule set in plain words, from its fields: what a
// certification lab reads first, generated from the data the engine runs.
func RuleLines(rs *rules.Set) []string {
	var out []string
	shoe := fmt.Sprintf("%d decks", rs.Decks)
	switch {
	case rs.ReshuffleEachRound:
		shoe += ", every card back and reshuffled after each round"
	default:
		shoe += fmt.Sprintf(", dealt to a cut card after %d cards", rs.Penetration)
	}
	if rs.BurnOnNewShoe > 0 {
		shoe += fmt.Sprintf("; %d card burned from each new shoe", rs.BurnOnNewShoe)
	}
	out = append(out, shoe)
	dealer := "dealer stands on all 17s"
	if rs.DealerHitsSoft17 {
		dealer = "dealer hits soft 17"
	}
	switch {
	case !rs.HoleCard:
		dealer += "; no hole card: his second card is drawn after the players"
	case rs.PeekOnAce && rs.PeekOnTen:
		dealer += "; hole card, peeks under an Ace and a ten"
	case rs.PeekOnAce:
		dealer += "; hole card, peeks under an Ace only"
	default:
		dealer += "; hole card, never peeks"
	}
	out = append(out, dealer)
	late := fmt.Sprintf("a dealer blackjack found at the end takes: under an Ace %s, under a ten %s",
		lateWords(rs.LateBJAce), lateWords(rs.LateBJTen))
	if rs.LateBJAce == rs.LateBJTen {
		late = fmt.Sprintf("a dealer blackjack found at the end takes %s", lateWords(rs.LateBJTen))
	}
	if rs.Peeks(1) {
		late = fmt.Sprintf("a dealer blackjack under a ten (no peek) takes %s", lateWords(rs.LateBJTen))
	}
	out = append(out, late)
	out = append(out, fmt.Sprintf("blackjack pays %d:%d; insurance %d:%d (not taken in these figures)",
		rs.BlackjackPays.Num, rs.BlackjackPays.Den, rs.InsurancePays.Num, rs.InsurancePays.Den))
	dbl := "double on any first two cards"
	if !rs.DoubleAnyTwo {
		dbl = fmt.Sprintf("double on hard %v only", rs.DoubleTotals)
	}
	if len(rs.FreeDoubleHard) > 0 {
		dbl += fmt.Sprintf(" (free on two-card hard %v)", rs.FreeDoubleHard)
	}
	if rs.DoubleAfterSplit {
		dbl += "; double after split"
	} else {
		dbl += "; no double after split"
	}
	out = append(out, dbl)
	split := fmt.Sprintf("split equal values %d time(s), %s deal", rs.MaxSplits, rs.SplitDeal)
	if rs.SplitAcesOneCard {
		split += "; split aces one card each"
	}
	if rs.FreeSplit {
		split += "; free split of every pair but ten-values"
	}
	out = append(out, split)
	var special []string
	if rs.Charlie > 0 {
		c := fmt.Sprintf("%d-card charlie wins", rs.Charlie)
		if rs.CharlieBeatsDealerBJ {
			c += " (even against a late dealer blackjack)"
		}
		special = append(special, c)
	}
	if rs.Dealer22Push {
		special = append(special, "a dealer 22 pushes live hands")
	}
	if rs.RoundCap > 0 {
		special = append(special, fmt.Sprintf("round cap %s per player per hand", cents(rs.RoundCap)))
	}
	if len(special) > 0 {
		out = append(out, strings.Join(special, "; "))
	}
	return out
}

func lateWords(l rules.LateBJ) string {
	switch l {
	case rules.LateBJDoubleBack:
		return "the bets but the doubling stake"
	case rules.LateBJOriginalOnly:
		return "the original bet only"
	}
	return "every stake, doubles and splits included"
}

func cents(c int64) string { return fmt.Sprintf("%d.%02d", c/100, c%100) }

// SideReturn is the exact return of one side bet or insurance, from the
// rule set's paytable.
type SideReturn struct {
	Name     string
	Paytable string
	Percent  float64
}

// SideBets computes the exact return of each side bet the game offers, and
// of insurance, from the rule set's paytables (table/sidebets).
func SideBets(rs *rules.Set) ([]SideReturn, error) {
	var out []SideReturn
	for _, sb := range rs.SideBets {
		var opts []sidebets.Option
		if rs.DealerHitsSoft17 {
			opts = append(opts, sidebets.DealerHitsSoft17())
		}
		a, err := sidebets.Return(sb.Kind, sb.Paytable, rs.Decks, opts...)
		if err != nil {
			return nil, fmt.Errorf("exact: side bet %s: %w", sb.Kind, err)
		}
		out = append(out, SideReturn{Name: string(sb.Kind), Paytable: paytable(sb.Paytable), Percent: a.Percent()})
	}
	if rs.Insurance {
		a, err := sidebets.InsuranceReturn(rs.Decks, rs.InsurancePays.Num/rs.InsurancePays.Den)
		if err != nil {
			return nil, fmt.Errorf("exact: insurance: %w", err)
		}
		out = append(out, SideReturn{Name: "insurance", Paytable: fmt.Sprintf("%d:%d", rs.InsurancePays.Num, rs.InsurancePays.Den),
			Percent: a.Percent()})
	}
	return out, nil
}

func paytable(pt sidebets.Paytable) string {
	type kv struct {
		k string
		v int64
	}
	var kvs []kv
	for k, v := range pt {
		kvs = append(kvs, kv{string(k), v})
	}
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].v > kvs[j].v || kvs[i].v == kvs[j].v && kvs[i].k < kvs[j].k })
	parts := make([]string, len(kvs))
	for i, p := range kvs {
		parts[i] = fmt.Sprintf("%s %d", p.k, p.v)
	}
	return strings.Join(parts, ", ")
}

// MC is a Monte Carlo measurement of the same game and table by the real
// engine (bjsim rtp), printed beside the exact figure.
type MC struct {
	Rounds    int64
	RTP, CI95 float64 // fractions; CI95 is the half-width of the 95% interval
}

// SD is the per-round standard deviation the interval implies.
func (m MC) SD() float64 { return m.CI95 / 1.96 * math.Sqrt(float64(m.Rounds)) }

// WriteMarkdown writes a game's report: rules, strategy, the exact
// return by up card and by starting hand, variance, side bets, and the
// Monte Carlo check when mc is not nil.
func WriteMarkdown(w io.Writer, r *Report, rs *rules.Set, t *strategy.Table, sides []SideReturn, mc *MC) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s %s\n\n", rs.Code, rs.Name)
	b.WriteString("Rules (from the rule set the engine runs, table/rules):\n\n")
	for _, l := range RuleLines(rs) {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	fmt.Fprintf(&b, "\nStrategy: table `%s` (table/strategy/data/%s.txt), the one the engine's simulator plays.", t.Name(), t.Name())
	if note := firstSentence(t.Chart().Notes); note != "" {
		fmt.Fprintf(&b, " Its header: \"%s\"", note)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "Exact return, first hand of a full shoe: **%.4f%%**; standard deviation of a round %.4f bets (variance %.4f, %s).\n",
		100*r.RTP, r.SD, r.Variance, r.VarianceNote)
	if mc != nil {
		z := (mc.RTP - r.RTP) / (mc.CI95 / 1.96)
		fmt.Fprintf(&b, "Real engine (bjsim rtp, first hand of each shoe, %d rounds): %.4f%% ± %.4f (95%%), %+.2f standard errors from the exact figure; SD %.4f.\n",
			mc.Rounds, 100*mc.RTP, 100*mc.CI95, z, mc.SD())
	}
	b.WriteString("\n| up card | chance | return given it |\n|---|---|---|\n")
	for up := 1; up <= 10; up++ {
		c := r.ByUp[up]
		fmt.Fprintf(&b, "| %s | %.4f%% | %.3f%% |\n", c.Name, 100*c.Prob, 100*(1+c.Mean))
	}
	b.WriteString("\n| first two cards | chance | mean net per bet | share of the return (pp) |\n|---|---|---|---|\n")
	for _, c := range r.ByHand {
		fmt.Fprintf(&b, "| %s | %.4f%% | %+.4f | %+.4f |\n", c.Name, 100*c.Prob, c.Mean, 100*c.Prob*c.Mean)
	}
	if len(sides) > 0 {
		b.WriteString("\n| side bet | paytable (to one) | exact return |\n|---|---|---|\n")
		for _, s := range sides {
			fmt.Fprintf(&b, "| %s | %s | %.3f%% |\n", s.Name, s.Paytable, s.Percent)
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// firstSentence is the first sentence of a table's header notes, past the
// generator's "do not edit" line.
func firstSentence(notes []string) string {
	var kept []string
	for _, n := range notes {
		if !strings.HasPrefix(n, "Generated by") {
			kept = append(kept, n)
		}
	}
	s := strings.Join(kept, " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}
