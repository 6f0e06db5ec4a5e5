// Package scenario plays one round from a known shoe order through the real
// engine (table/round) and settles it, in the format of
// shared/docs/scenario-format.md. It is how the engine is checked from
// outside: `tablectl scenario < case.json`.
//
// The runner feeds the engine exactly as the live controller does: a card
// when the engine waits for one, a seat's next listed decision when the
// engine asks that seat, the seat's insurance answer when insurance is
// offered. It holds no rule of its own: every rule is in table/rules and
// table/round.
package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/sidebets"
)

// ErrScenario is wrapped by every error of a scenario that cannot be played
// as written (bad input, illegal or missing decisions, too few cards).
var ErrScenario = errors.New("scenario")

// Input is one scenario.
type Input struct {
	Variant   string     `json:"variant"`
	Cards     []string   `json:"cards"`
	Seats     []Seat     `json:"seats"`
	Overrides *Overrides `json:"overrides,omitempty"`
	// NewShoe: the round is the first of a new shoe; the game's burn
	// cards (003: one) are the first cards of Cards and are burned before
	// the deal.
	NewShoe bool `json:"new_shoe,omitempty"`
	// FirstDecisions (003) is the order in which the seats' simultaneous
	// first decisions reach the table, by seat number; seats not listed
	// follow in seat order (decisions made at once go in seat order).
	FirstDecisions []int `json:"first_decisions,omitempty"`
	// Behind are the bets behind (000).
	Behind []Behind `json:"behind,omitempty"`
	// Supervisor are the supervisor's commands inside the round.
	Supervisor []Command `json:"supervisor,omitempty"`
}

// Seat is one player's wagers and decisions on a position.
type Seat struct {
	// Seat is the position's number (default: the entry's place in the
	// list, 1 first). Entries go in dealing order. In a common-draw game
	// (002) several entries may name the same seat: players on the same
	// cards, each with his own decisions.
	Seat int `json:"seat,omitempty"`
	// Player owns the position (default: "seat N"; in games where every
	// position is one player's, 001 and 004, "player"). One player may
	// hold several positions: the round cap (004) sums them.
	Player    string           `json:"player,omitempty"`
	Bet       int64            `json:"bet"`
	Side      map[string]int64 `json:"side,omitempty"`
	Insurance bool             `json:"insurance,omitempty"`
	Decisions []string         `json:"decisions"`
}

// Behind is a Bet Behind (000) on a seat's hand: it follows the seat's
// decisions, takes insurance on its own, and follows doubles and splits as
// its preferences say. A bet behind a seat with no bet is refunded.
type Behind struct {
	Seat         int    `json:"seat"`
	Player       string `json:"player"`
	Bet          int64  `json:"bet"`
	Insurance    bool   `json:"insurance,omitempty"`
	FollowDouble bool   `json:"follow_double,omitempty"`
	FollowSplit  bool   `json:"follow_split,omitempty"`
}

// Command is a supervisor's command inside the round. "correct" gives the
// card of the next "??" in Cards (a card the shoe reader misread: the
// table waits for the supervisor); "void" voids the round once AfterCards
// cards of Cards (burn cards not counted) have been dealt.
type Command struct {
	Command    string `json:"command"`
	Card       string `json:"card,omitempty"`
	AfterCards int    `json:"after_cards,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// misread marks in Cards a card the reader could not read.
const misread = "??"

// Overrides pin down the rule assumptions of scenario-format.md.
type Overrides struct {
	LateBJ            map[string]string `json:"late_bj,omitempty"`
	SplitDeal         string            `json:"split_deal,omitempty"`
	DealerAlwaysPlays *bool             `json:"dealer_always_plays,omitempty"`
}

// Output is the settled round.
type Output struct {
	Variant    string         `json:"variant"`
	Void       bool           `json:"void"`
	VoidReason string         `json:"void_reason,omitempty"`
	Burned     []string       `json:"burned,omitempty"`
	Dealer     Dealer         `json:"dealer"`
	Seats      []SeatResult   `json:"seats"`
	Behind     []BehindResult `json:"behind,omitempty"`
	CardsUsed  int            `json:"cards_used"`
	Rounding   int64          `json:"rounding_cents"`
}

// Dealer is the dealer's final hand.
type Dealer struct {
	Cards           []string `json:"cards"`
	Total           int      `json:"total"`
	Blackjack       bool     `json:"blackjack"`
	Bust            bool     `json:"bust"`
	PeekedBlackjack bool     `json:"peeked_blackjack"`
}

// SeatResult is one position's settlement for its player.
type SeatResult struct {
	Seat         int                   `json:"seat"`
	Player       string                `json:"player"`
	Hands        []Hand                `json:"hands"`
	MainNet      int64                 `json:"main_net"`
	Side         map[string]SideResult `json:"side"`
	InsuranceNet *int64                `json:"insurance_net"`
	TotalNet     int64                 `json:"total_net"`
}

// BehindResult is one bet behind's settlement; Refunded when the seat
// had no bet (its player sat the hand out).
type BehindResult struct {
	Seat         int    `json:"seat"`
	Player       string `json:"player"`
	Refunded     bool   `json:"refunded"`
	Hands        []Hand `json:"hands"`
	MainNet      int64  `json:"main_net"`
	InsuranceNet *int64 `json:"insurance_net"`
	TotalNet     int64  `json:"total_net"`
}

// Hand is one hand's settlement.
type Hand struct {
	Cards   []string `json:"cards"`
	Total   int      `json:"total"`
	Stake   int64    `json:"stake"`
	Free    int64    `json:"free"`
	Doubled bool     `json:"doubled"`
	Outcome string   `json:"outcome"`
	Net     int64    `json:"net"`
}

// SideResult is one side bet's settlement.
type SideResult struct {
	Result string `json:"result"`
	Net    int64  `json:"net"`
}

func errf(f string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrScenario, fmt.Sprintf(f, a...))
}

// Case is a case file of testdata/scenarios: a scenario with the
// hand-worked result it must give.
type Case struct {
	Name     string          `json:"name"`
	Why      string          `json:"why"`
	Input    json.RawMessage `json:"input"`
	Expected map[string]any  `json:"expected"`
}

// Decode reads a scenario, or a case file (then its input), rejecting
// unknown fields so a misspelt key is an error rather than a silently
// ignored rule.
func Decode(r io.Reader) (Input, error) {
	in, _, err := DecodeCase(r)
	return in, err
}

// DecodeCase reads a scenario or a case file; c is nil for a bare scenario.
func DecodeCase(r io.Reader) (Input, *Case, error) {
	var in Input
	raw, err := io.ReadAll(r)
	if err != nil {
		return in, nil, errf("reading the scenario: %v", err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return in, nil, errf("malformed scenario: %v", err)
	}
	var c *Case
	if _, ok := probe["input"]; ok {
		c = new(Case)
		if err := strict(raw, c); err != nil {
			return in, nil, errf("malformed case file: %v", err)
		}
		raw = c.Input
	}
	if err := strict(raw, &in); err != nil {
		return in, c, errf("malformed scenario: %v", err)
	}
	return in, c, nil
}

func strict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// RuleSet returns the game's rules with the scenario's overrides applied.
// The table's own limits (the minimum and maximum bet per position and of
// side bets: 004 "indicate su ciascun tavolo") do not apply: the format
// defines its own validity (positive, even bets). Every rule of the game
// does, the round cap (004) included.
func RuleSet(in Input) (*rules.Set, error) {
	rs, err := rules.Game(in.Variant)
	if err != nil {
		return nil, errf("%v", err)
	}
	rs.MinBet, rs.MaxBet = 1, 0
	for i := range rs.SideBets {
		rs.SideBets[i].Min, rs.SideBets[i].Max = 0, 0
	}
	if o := in.Overrides; o != nil {
		for k, v := range o.LateBJ {
			l, err := rules.ParseLateBJ(v)
			if err != nil {
				return nil, errf("%v", err)
			}
			switch k {
			case "A":
				rs.LateBJAce = l
			case "T":
				rs.LateBJTen = l
			default:
				return nil, errf("late_bj: up-card class %q, want \"A\" or \"T\"", k)
			}
		}
		if o.SplitDeal != "" {
			sd, err := rules.ParseSplitDeal(o.SplitDeal)
			if err != nil {
				return nil, errf("%v", err)
			}
			rs.SplitDeal = sd
		}
		if o.DealerAlwaysPlays != nil {
			rs.DealerAlwaysPlays = *o.DealerAlwaysPlays
		}
	}
	if err := rs.Validate(); err != nil {
		return nil, errf("%v", err)
	}
	return rs, nil
}

// who is a player on a seat, the key of the runner's entries.
type who struct {
	seat   int
	player string
	behind bool
}

// entry is a seat entry or a bet behind as the runner plays it.
type entry struct {
	who
	insurance bool
	decisions []string
	next      int
	first     bool // a decision was made (003's first-decision order)
	refunded  bool // a bet behind a seat with no bet
}

// runner is one scenario in play.
type runner struct {
	in      Input
	rs      *rules.Set
	r       *round.Round
	cards   []string // after the burn cards
	pos     int      // next index into cards
	entries []*entry
	byWho   map[who]*entry
	cmds    []Command
	offered bool
	evs     []round.Event
}

// Run plays the scenario and returns its settlement.
func Run(in Input) (*Output, error) {
	rs, err := RuleSet(in)
	if err != nil {
		return nil, err
	}
	for _, c := range in.Cards {
		if c == misread {
			continue
		}
		if _, err := card.Parse(c); err != nil {
			return nil, errf("%v", err)
		}
	}
	out := &Output{Variant: rs.Code}
	cards := in.Cards
	if in.NewShoe {
		n := rs.BurnOnNewShoe
		if len(cards) < n {
			return nil, errf("ran out of cards burning %d", n)
		}
		out.Burned = append([]string(nil), cards[:n]...)
		cards = cards[n:]
	}
	if len(in.FirstDecisions) > 0 && !rs.SimultaneousFirstDecision {
		return nil, errf("first_decisions: game %s has no simultaneous first decision", rs.Code)
	}
	bets, err := buildBets(in, rs)
	if err != nil {
		return nil, err
	}
	ru := &runner{in: in, rs: rs, r: round.New(rs), cards: cards, byWho: map[who]*entry{}, cmds: in.Supervisor}
	for _, b := range bets {
		e := &entry{who: who{b.Seat, b.Player, b.Behind}}
		ru.entries = append(ru.entries, e)
		ru.byWho[e.who] = e
	}
	for i, s := range in.Seats {
		e := ru.entries[i]
		e.insurance, e.decisions = s.Insurance, s.Decisions
	}
	seated := map[int]bool{}
	for _, b := range bets {
		seated[b.Seat] = seated[b.Seat] || !b.Behind
	}
	for i, b := range in.Behind {
		e := ru.entries[len(in.Seats)+i]
		e.insurance, e.refunded = b.Insurance, !seated[b.Seat]
	}
	for _, c := range ru.cmds {
		if c.Command != "void" && c.Command != "correct" {
			return nil, errf("supervisor: unknown command %q (want void or correct)", c.Command)
		}
	}
	if ru.evs, err = ru.r.Start("scenario", bets, nil); err != nil {
		return nil, errf("%v", err)
	}
	if err := ru.play(); err != nil {
		return nil, err
	}
	if err := ru.leftovers(); err != nil {
		return nil, err
	}
	output(out, ru.r.Settlement(), in, ru.pos+len(out.Burned))
	return out, nil
}

// buildBets turns the seat entries and bets behind into the round's bets.
func buildBets(in Input, rs *rules.Set) ([]round.Bet, error) {
	if len(in.Seats) < 1 {
		return nil, errf("no seats")
	}
	if !rs.CommonDraw && len(in.Seats) > rs.MaxSeats {
		return nil, errf("%d seats: game %s has %d", len(in.Seats), rs.Code, rs.MaxSeats)
	}
	bets := make([]round.Bet, 0, len(in.Seats)+len(in.Behind))
	last := 0
	for i, s := range in.Seats {
		n := s.Seat
		if n == 0 {
			n = i + 1
		}
		if n < last {
			return nil, errf("seat %d listed after seat %d: seats go in dealing order", n, last)
		}
		last = n
		if s.Bet <= 0 || s.Bet%2 != 0 {
			return nil, errf("seat %d: bet %d must be positive and even", n, s.Bet)
		}
		player := s.Player
		if player == "" {
			player = fmt.Sprintf("seat %d", n)
			if rs.OnePlayer {
				player = "player"
			}
		}
		b := round.Bet{Seat: n, Player: player, Main: s.Bet}
		names := make([]string, 0, len(s.Side))
		for name := range s.Side {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			stake := s.Side[name]
			if stake <= 0 {
				return nil, errf("seat %d: side bet %s stake %d must be positive", n, name, stake)
			}
			if _, ok := rs.Side(sidebets.Kind(name)); !ok {
				return nil, errf("seat %d: side bet %q is not offered in %s", n, name, rs.Code)
			}
			b.Side = append(b.Side, round.SideStake{Kind: sidebets.Kind(name), Stake: stake})
		}
		bets = append(bets, b)
	}
	for _, bb := range in.Behind {
		if bb.Player == "" {
			return nil, errf("behind seat %d: a bet behind names its player", bb.Seat)
		}
		if bb.Bet <= 0 || bb.Bet%2 != 0 {
			return nil, errf("behind seat %d: bet %d must be positive and even", bb.Seat, bb.Bet)
		}
		bets = append(bets, round.Bet{Seat: bb.Seat, Player: bb.Player, Main: bb.Bet, Behind: true,
			FollowDouble: bb.FollowDouble, FollowSplit: bb.FollowSplit})
	}
	return bets, nil
}

// play feeds the round until it is settled: the supervisor's commands when
// due, insurance answers, the next decision asked, else the next card.
func (ru *runner) play() error {
	r := ru.r
	var waiting []round.Waiter
	for r.Phase() != round.PhaseSettled {
		ru.evs = ru.evs[:0]
		if done, err := ru.supervise(); done || err != nil {
			return err
		}
		switch {
		case r.Phase() == round.PhaseInsurance:
			ru.offered = true
			answered := map[string]bool{}
			for _, e := range ru.entries {
				if e.refunded {
					continue // behind an empty seat: never in the round
				}
				if take, ok := answered[e.player]; ok && ru.rs.InsuranceAllPositions {
					// One answer covers all of the player's positions (003).
					if take != e.insurance {
						return errf("%s insurance: the player answered otherwise on another position, and in %s one answer covers them all", e.name(), ru.rs.Code)
					}
					continue
				}
				answered[e.player] = e.insurance
				var err error
				if ru.evs, err = r.Apply(round.Input{Type: round.InInsurance, Seat: e.seat, Player: e.player, Take: e.insurance}, ru.evs); err != nil {
					return errf("%s insurance: %v", e.name(), err)
				}
			}
		case r.Awaiting() > 0:
			waiting = r.Waiting(waiting[:0])
			e, err := ru.pick(waiting)
			if err != nil {
				return err
			}
			if e.next >= len(e.decisions) {
				return errf("%s ran out of decisions", e.name())
			}
			a, err := round.ParseAction(e.decisions[e.next])
			if err != nil {
				return errf("%s decision %d: %v", e.name(), e.next+1, err)
			}
			e.next++
			e.first = true
			if _, err = r.Apply(round.Input{Type: round.InDecision, Seat: e.seat, Player: e.player, Action: a}, ru.evs); err != nil {
				return errf("%s decision %d (%s): %v", e.name(), e.next, a, err)
			}
		default:
			if err := ru.deal(); err != nil {
				return err
			}
		}
	}
	return nil
}

// supervise applies a void that is due; done reports the round voided.
func (ru *runner) supervise() (done bool, err error) {
	if len(ru.cmds) == 0 || ru.cmds[0].Command != "void" || ru.cmds[0].AfterCards > ru.pos {
		return false, nil
	}
	c := ru.cmds[0]
	ru.cmds = ru.cmds[1:]
	if _, err := ru.r.Apply(round.Input{Type: round.InVoid, Reason: c.Reason}, ru.evs); err != nil {
		return false, errf("supervisor void: %v", err)
	}
	return true, nil
}

// deal gives the round the next card of the shoe, or the supervisor's
// correction of a card the reader misread.
func (ru *runner) deal() error {
	if ru.pos >= len(ru.cards) {
		return errf("ran out of cards after %d", len(ru.cards))
	}
	s := ru.cards[ru.pos]
	if s == misread {
		if len(ru.cmds) == 0 || ru.cmds[0].Command != "correct" {
			return errf("card %d misread and no supervisor correction follows: the table stays paused", ru.pos+1)
		}
		s = ru.cmds[0].Card
		ru.cmds = ru.cmds[1:]
	}
	c, err := card.Parse(s)
	if err != nil {
		return errf("card %d: %v", ru.pos+1, err)
	}
	if _, err = ru.r.Apply(round.Input{Type: round.InCard, Card: c}, ru.evs); err != nil {
		return errf("card %d (%s): %v", ru.pos+1, c, err)
	}
	ru.pos++
	if p := ru.r.Phase(); p != round.PhaseDealing && p != round.PhaseInsurance && !ru.offered {
		for _, e := range ru.entries {
			if e.insurance && !e.refunded {
				return errf("%s: insurance without an Ace up", e.name())
			}
		}
	}
	return nil
}

// pick chooses whose decision the table gets next among the players it
// waits for: in 003's simultaneous first decisions, first_decisions'
// order (then seat order); otherwise the first asked, in seat order.
func (ru *runner) pick(waiting []round.Waiter) (*entry, error) {
	best, rank := (*entry)(nil), 1<<30
	for _, w := range waiting {
		e := ru.byWho[who{w.Seat, w.Player, false}]
		if e == nil {
			return nil, errf("the round waits for seat %d player %q, who is not in the scenario", w.Seat, w.Player)
		}
		k := 1 << 20
		if !e.first {
			k = len(ru.in.FirstDecisions)
			for i, s := range ru.in.FirstDecisions {
				if s == e.seat {
					k = i
					break
				}
			}
		}
		if k < rank {
			best, rank = e, k
		}
	}
	return best, nil
}

// leftovers rejects what the scenario gave and the round never used.
func (ru *runner) leftovers() error {
	void := ru.r.Settlement().Void
	if len(ru.cmds) > 0 {
		return errf("supervisor %s never applied", ru.cmds[0].Command)
	}
	for _, e := range ru.entries {
		if void {
			break
		}
		if e.insurance && !ru.offered && !e.refunded {
			return errf("%s: insurance without an Ace up", e.name())
		}
		if left := len(e.decisions) - e.next; left > 0 {
			return errf("%s: %d decision(s) left over", e.name(), left)
		}
	}
	return nil
}

func (e *entry) name() string {
	if e.behind {
		return fmt.Sprintf("behind seat %d (%s)", e.seat, e.player)
	}
	return fmt.Sprintf("seat %d (%s)", e.seat, e.player)
}

func output(out *Output, s *round.Settlement, in Input, used int) {
	out.Void, out.VoidReason = s.Void, s.Reason
	out.Dealer = Dealer{
		Cards: strs(s.Dealer.Cards), Total: s.Dealer.Total, Blackjack: s.Dealer.Blackjack,
		Bust: s.Dealer.Bust, PeekedBlackjack: s.Dealer.Peeked,
	}
	out.CardsUsed, out.Rounding = used, s.Rounding
	behind := map[who]BehindResult{}
	for _, st := range s.Seats {
		var hands []Hand
		for _, h := range st.Hands {
			hands = append(hands, Hand{
				Cards: strs(h.Cards), Total: h.Total, Stake: h.Stake, Free: h.Free,
				Doubled: h.Doubled, Outcome: h.Outcome.String(), Net: h.Net,
			})
		}
		var ins *int64
		if st.Insurance != nil {
			n := st.Insurance.Net
			ins = &n
		}
		if st.Behind {
			behind[who{st.Seat, st.Player, true}] = BehindResult{Seat: st.Seat, Player: st.Player, Hands: hands,
				MainNet: st.MainNet, InsuranceNet: ins, TotalNet: st.Net}
			continue
		}
		sr := SeatResult{Seat: st.Seat, Player: st.Player, Hands: hands, MainNet: st.MainNet, TotalNet: st.Net,
			Side: map[string]SideResult{}, InsuranceNet: ins}
		for _, sd := range st.Side {
			sr.Side[string(sd.Kind)] = SideResult{Result: string(sd.Result), Net: sd.Net}
		}
		out.Seats = append(out.Seats, sr)
	}
	// A bet behind a seat with no bet never entered the round: refunded
	// ("la puntata verrà immediatamente rimborsata"). In input order.
	for _, b := range in.Behind {
		br, ok := behind[who{b.Seat, b.Player, true}]
		if !ok {
			br = BehindResult{Seat: b.Seat, Player: b.Player, Refunded: true, Hands: []Hand{}}
		}
		out.Behind = append(out.Behind, br)
	}
}

func strs(cs []card.Card) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}
