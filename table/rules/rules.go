// Package rules holds the rule sets of the five games as data.
//
// Every rule the engine applies is a field of Set: the engine in
// table/round never asks which game it is playing. A game is a value
// returned by Game (one file per game: game000.go ... game004.go) and can be
// adjusted field by field (the scenario runner's overrides do exactly that)
// and checked with Validate.
//
// # Sources
//
// The house rules are the Italian documents in shared/seeds; the English
// digest with rulings is shared/docs/variants.md. Each game file cites the
// points it encodes.
package rules

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/livetable/livetable/table/sidebets"
)

// LateBJ says what a dealer blackjack takes when it is found only at the end
// of the round (no peek): it applies to hands that are not naturals and not
// bust.
type LateBJ uint8

// The late-blackjack settlements of scenario-format.md.
const (
	// LateBJAll: every real stake on the hand is lost, doubles and splits included.
	LateBJAll LateBJ = iota
	// LateBJDoubleBack: the doubling stake is returned; split hands each still lose their bet.
	LateBJDoubleBack
	// LateBJOriginalOnly: only the original bet is lost: the doubling stake and
	// the second split hand's bet are returned.
	LateBJOriginalOnly
)

// String is the setting's name as the rule-set file spells it.
func (l LateBJ) String() string {
	switch l {
	case LateBJAll:
		return "all"
	case LateBJDoubleBack:
		return "dbl_back"
	case LateBJOriginalOnly:
		return "obo"
	}
	return fmt.Sprintf("LateBJ(%d)", uint8(l))
}

// ParseLateBJ reads the scenario-format spelling ("all", "dbl_back", "obo").
func ParseLateBJ(s string) (LateBJ, error) {
	switch s {
	case "all":
		return LateBJAll, nil
	case "dbl_back":
		return LateBJDoubleBack, nil
	case "obo":
		return LateBJOriginalOnly, nil
	}
	return 0, fmt.Errorf("rules: unknown late_bj rule %q (want all, dbl_back or obo)", s)
}

// SplitDeal is when the second hand of a split gets its second card.
type SplitDeal uint8

// The split-deal orders.
const (
	// SplitBothFirst: both split hands get their second card, then hand 1 is played.
	SplitBothFirst SplitDeal = iota
	// SplitSequential: hand 1 gets its card and is played out, then hand 2 gets its card.
	SplitSequential
)

// String is the setting's name as the rule-set file spells it.
func (s SplitDeal) String() string {
	if s == SplitSequential {
		return "sequential"
	}
	return "both_first"
}

// ParseSplitDeal reads "both_first" or "sequential".
func ParseSplitDeal(s string) (SplitDeal, error) {
	switch s {
	case "both_first":
		return SplitBothFirst, nil
	case "sequential":
		return SplitSequential, nil
	}
	return 0, fmt.Errorf("rules: unknown split_deal %q (want both_first or sequential)", s)
}

// TimeoutAction is what the table does for a player who does not decide in time.
type TimeoutAction uint8

// The automatic actions.
const (
	// TimeoutStand stands (000, 003, 004).
	TimeoutStand TimeoutAction = iota
	// TimeoutHitTo11 hits on 11 or less and stands above (002).
	TimeoutHitTo11
	// TimeoutAutoTable plays the hand with the game's automatic-play
	// strategy table (004: the printed no-double, no-split table).
	TimeoutAutoTable
)

// String is the setting's name as the rule-set file spells it.
func (t TimeoutAction) String() string {
	switch t {
	case TimeoutHitTo11:
		return "hit_to_11"
	case TimeoutAutoTable:
		return "auto_table"
	}
	return "stand"
}

// Ratio is a payout ratio, Num to Den (3:2 is {3, 2}).
type Ratio struct{ Num, Den int64 }

// Of returns stake*Num/Den rounded down to the minor unit, and what the
// rounding dropped, in 1/Den of a minor unit (reported, never hidden:
// variants.md asks for it).
func (r Ratio) Of(stake int64) (win, rounding int64) {
	n := stake * r.Num
	return n / r.Den, n % r.Den
}

// SideBet is a side bet the game offers, with its paytable and limits.
type SideBet struct {
	Kind     sidebets.Kind
	Paytable sidebets.Paytable
	// Dealer is true for bets placed once per round on the dealer's cards
	// (dealer_pair): settled on the dealer's up and hole card.
	Min, Max int64
}

// Set is one game's rules. The zero value is not a game: use Game.
type Set struct {
	Code string // "000".."004"
	Name string

	// The shoe.
	Decks              int
	ReshuffleEachRound bool // 001, 004: all cards back after every round
	Penetration        int  // cards dealt before the cut card, for dealt shoes
	BurnOnNewShoe      int  // 003 burns one card face down

	// Positions.
	MaxSeats   int  // boxes on the layout
	CommonDraw bool // 002: any number of players share one box's cards
	// OnePlayer: every position of a round is one player's (001: "In
	// questo gioco è possibile utilizzare fino a cinque mani"; 004: the
	// player puts his stakes on 1 to 5 positions). Where no owner is named, positions are his (the scenario
	// runner's default): the round cap sums them.
	OnePlayer bool
	BetBehind bool // 000

	// The dealer.
	DealerHitsSoft17 bool // 003
	HoleCard         bool // second card dealt with the initial deal (000-003); else after the players (004)
	PeekOnAce        bool // dealer checks for BJ under an Ace (after insurance)
	PeekOnTen        bool // none of the five peeks under a ten
	LateBJAce        LateBJ
	LateBJTen        LateBJ
	// DealerAlwaysPlays: the dealer completes his hand even when every
	// player hand is settled (002: Bust It depends on it).
	DealerAlwaysPlays bool

	// Payouts.
	BlackjackPays Ratio
	InsurancePays Ratio
	Insurance     bool // offered on an Ace up
	// InsuranceAllPositions: a player's insurance answer covers every
	// position he holds (003: "Se il giocatore sta utilizzando la funzione
	// Multigiocatore, l'assicurazione viene applicata a tutte le posizioni
	// da lui occupate").
	InsuranceAllPositions bool

	// Doubling.
	DoubleAnyTwo     bool  // double on any first two cards (not a natural)
	DoubleTotals     []int // when not DoubleAnyTwo: the hard totals allowed
	DoubleAfterSplit bool
	// FreeDoubleHard are the two-card hard totals that get a free double (002: 9, 10, 11).
	FreeDoubleHard []int

	// Splitting.
	MaxSplits        int  // splits per seat (1 in all five)
	SplitAcesOneCard bool // split aces get one card each
	SplitDeal        SplitDeal
	// FreeSplit: non-ten pairs split for free (002); ten-valued pairs cost a real bet.
	FreeSplit bool

	// Special hands.
	Charlie int // cards that make a Charlie (0: none; 6 in 002, 10 in 001/003)
	// CharlieBeatsDealerBJ: a Charlie wins even against a late dealer BJ (002).
	CharlieBeatsDealerBJ bool
	// Dealer22Push: a dealer total of exactly 22 pushes live hands (002);
	// naturals and Charlies still win.
	Dealer22Push bool
	Surrender    bool // late surrender; none of the five offers it

	// Speed (003): all seats make their first decision at once; action
	// cards go out in the order decisions arrive, ties in seat order.
	SimultaneousFirstDecision bool

	// Timers (the engine never reads a clock: the controller fires them).
	BettingTime     time.Duration
	LastCallTime    time.Duration // of BettingTime, shown yellow
	InsuranceTime   time.Duration
	DecisionTime    time.Duration
	DecisionTimeout TimeoutAction
	// AutoPlayTable names the strategy table of TimeoutAutoTable.
	AutoPlayTable string

	// Limits, in minor units. MaxBet and the limits of side bets apply to
	// initial wagers only (001, 003: doubles, splits and insurance may exceed
	// them); they are the table's (004: "indicate su ciascun tavolo").
	// RoundCap is a rule of the game: it bounds the sum of everything one
	// player stakes in one hand, over all his positions, main and side
	// bets, doubles, splits and insurance (004: 1,000.00 EUR); 0 = none
	// (no other document states one).
	MinBet, MaxBet int64
	RoundCap       int64

	SideBets []SideBet
}

// Side returns the side bet of kind k, if the game offers it.
func (s *Set) Side(k sidebets.Kind) (SideBet, bool) {
	for _, sb := range s.SideBets {
		if sb.Kind == k {
			return sb, true
		}
	}
	return SideBet{}, false
}

// LateBJFor returns the late-BJ rule for a dealer up card of value up (1 = Ace).
func (s *Set) LateBJFor(up int) LateBJ {
	if up == 1 {
		return s.LateBJAce
	}
	return s.LateBJTen
}

// Peeks reports whether the dealer checks for blackjack under an up card of value up.
func (s *Set) Peeks(up int) bool {
	if !s.HoleCard {
		return false
	}
	if up == 1 {
		return s.PeekOnAce
	}
	return up == 10 && s.PeekOnTen
}

// CanDoubleTotal reports whether a two-card hand of this total may double.
func (s *Set) CanDoubleTotal(total int, soft bool) bool {
	if s.DoubleAnyTwo {
		return true
	}
	if soft {
		return false
	}
	for _, t := range s.DoubleTotals {
		if t == total {
			return true
		}
	}
	return false
}

// IsFreeDouble reports whether doubling this two-card hand is free.
func (s *Set) IsFreeDouble(total int, soft bool) bool {
	if soft {
		return false
	}
	for _, t := range s.FreeDoubleHard {
		if t == total {
			return true
		}
	}
	return false
}

// ErrInvalid is returned (wrapped) by Validate.
var ErrInvalid = errors.New("rules: invalid rule set")

// Validate checks that the set is coherent, so a mistake in a game file or
// a configuration override fails at start, not in the middle of a round.
func (s *Set) Validate() error {
	bad := func(f string, a ...any) error {
		return fmt.Errorf("%w %s: %s", ErrInvalid, s.Code, fmt.Sprintf(f, a...))
	}
	switch {
	case s.Decks < 1 || s.Decks > 16:
		return bad("decks %d out of 1..16", s.Decks)
	case s.MaxSeats < 1 || s.MaxSeats > 7:
		return bad("max seats %d out of 1..7", s.MaxSeats)
	case s.BlackjackPays.Den <= 0 || s.BlackjackPays.Num <= 0:
		return bad("blackjack payout %v", s.BlackjackPays)
	case s.Insurance && (s.InsurancePays.Den <= 0 || s.InsurancePays.Num <= 0):
		return bad("insurance payout %v", s.InsurancePays)
	case s.MaxSplits < 0 || s.MaxSplits > 1:
		return bad("max splits %d: the engine supports 0 or 1", s.MaxSplits)
	case s.Charlie != 0 && (s.Charlie < 5 || s.Charlie > 12):
		return bad("charlie %d out of 5..12", s.Charlie)
	case s.MinBet <= 0 || (s.MaxBet != 0 && s.MaxBet < s.MinBet):
		return bad("bet limits %d..%d", s.MinBet, s.MaxBet)
	case s.RoundCap < 0:
		return bad("round cap %d", s.RoundCap)
	case s.RoundCap > 0 && s.BetBehind:
		// A bet behind's follow-doubles and splits are staked at
		// settlement, where a cap could no longer refuse them.
		return bad("a round cap with bets behind is not supported")
	case !s.ReshuffleEachRound && s.Penetration <= 0:
		return bad("a dealt shoe needs a cut-card penetration")
	case s.Penetration > s.Decks*52:
		return bad("penetration %d beyond %d cards", s.Penetration, s.Decks*52)
	case s.PeekOnAce && !s.HoleCard:
		return bad("a peek needs a hole card")
	}
	seen := map[sidebets.Kind]bool{}
	for _, sb := range s.SideBets {
		if seen[sb.Kind] {
			return bad("side bet %s twice", sb.Kind)
		}
		seen[sb.Kind] = true
		if len(sb.Paytable) == 0 {
			return bad("side bet %s has no paytable", sb.Kind)
		}
	}
	return nil
}

// Clone returns a deep copy that can be modified without touching s.
func (s *Set) Clone() *Set {
	c := *s
	c.DoubleTotals = append([]int(nil), s.DoubleTotals...)
	c.FreeDoubleHard = append([]int(nil), s.FreeDoubleHard...)
	c.SideBets = make([]SideBet, len(s.SideBets))
	for i, sb := range s.SideBets {
		pt := make(sidebets.Paytable, len(sb.Paytable))
		for k, v := range sb.Paytable {
			pt[k] = v
		}
		sb.Paytable = pt
		c.SideBets[i] = sb
	}
	return &c
}

// ErrUnknownGame is returned by Game for a code that is not one of the five.
var ErrUnknownGame = errors.New("rules: unknown game")

var aliases = map[string]string{
	"standard": "000", "live": "000",
	"premium": "001",
	"freebet": "002", "free_bet": "002", "infinite": "002",
	"speed": "003",
	"sisal": "004",
}

var games = map[string]func() *Set{
	"000": game000,
	"001": game001,
	"002": game002,
	"003": game003,
	"004": game004,
}

// Game returns a fresh copy of the rule set of a game, by code ("000") or
// alias ("standard", "premium", "freebet", "speed", "sisal").
func Game(code string) (*Set, error) {
	if a, ok := aliases[code]; ok {
		code = a
	}
	f, ok := games[code]
	if !ok {
		return nil, fmt.Errorf("%w %q (want 000-004 or standard, premium, freebet, speed, sisal)", ErrUnknownGame, code)
	}
	return f(), nil
}

// Codes lists the game codes in order.
func Codes() []string {
	out := make([]string, 0, len(games))
	for c := range games {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Times are a table's own phase times, set in its configuration over the
// game's; a zero keeps the game's.
type Times struct {
	Betting, LastCall, Insurance, Decision time.Duration
}

// SetTimes sets the phase times t gives. The last call is part of the
// betting window, so it never outlasts it.
func (s *Set) SetTimes(t Times) {
	for _, o := range []struct {
		dst *time.Duration
		v   time.Duration
	}{{&s.BettingTime, t.Betting}, {&s.LastCallTime, t.LastCall}, {&s.InsuranceTime, t.Insurance}, {&s.DecisionTime, t.Decision}} {
		if o.v > 0 {
			*o.dst = o.v
		}
	}
	s.LastCallTime = min(s.LastCallTime, s.BettingTime)
}
