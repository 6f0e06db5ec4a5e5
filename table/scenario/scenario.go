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
}

// Seat is one seat's wagers and decisions.
type Seat struct {
	Bet       int64            `json:"bet"`
	Side      map[string]int64 `json:"side,omitempty"`
	Insurance bool             `json:"insurance,omitempty"`
	Decisions []string         `json:"decisions"`
}

// Overrides pin down the rule assumptions of scenario-format.md.
type Overrides struct {
	LateBJ            map[string]string `json:"late_bj,omitempty"`
	SplitDeal         string            `json:"split_deal,omitempty"`
	DealerAlwaysPlays *bool             `json:"dealer_always_plays,omitempty"`
}

// Output is the settled round.
type Output struct {
	Variant   string       `json:"variant"`
	Dealer    Dealer       `json:"dealer"`
	Seats     []SeatResult `json:"seats"`
	CardsUsed int          `json:"cards_used"`
	Rounding  int64        `json:"rounding_cents"`
}

// Dealer is the dealer's final hand.
type Dealer struct {
	Cards           []string `json:"cards"`
	Total           int      `json:"total"`
	Blackjack       bool     `json:"blackjack"`
	Bust            bool     `json:"bust"`
	PeekedBlackjack bool     `json:"peeked_blackjack"`
}

// SeatResult is one seat's settlement.
type SeatResult struct {
	Seat         int                   `json:"seat"`
	Hands        []Hand                `json:"hands"`
	MainNet      int64                 `json:"main_net"`
	Side         map[string]SideResult `json:"side"`
	InsuranceNet *int64                `json:"insurance_net"`
	TotalNet     int64                 `json:"total_net"`
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

// Decode reads a scenario, rejecting unknown fields so a misspelt key is an
// error rather than a silently ignored rule.
func Decode(r io.Reader) (Input, error) {
	var in Input
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, errf("malformed scenario: %v", err)
	}
	return in, nil
}

// RuleSet returns the game's rules with the scenario's overrides applied.
// Table limits (minimum, maximum, round cap) do not apply to scenarios: the
// format defines its own validity (positive, even bets).
func RuleSet(in Input) (*rules.Set, error) {
	rs, err := rules.Game(in.Variant)
	if err != nil {
		return nil, errf("%v", err)
	}
	rs.MinBet, rs.MaxBet, rs.RoundCap = 1, 0, 0
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

// Run plays the scenario and returns its settlement.
func Run(in Input) (*Output, error) {
	rs, err := RuleSet(in)
	if err != nil {
		return nil, err
	}
	shoe, err := card.ParseList(in.Cards)
	if err != nil {
		return nil, errf("%v", err)
	}
	if len(in.Seats) < 1 || len(in.Seats) > 7 {
		return nil, errf("%d seats: want 1 to 7", len(in.Seats))
	}
	if len(in.Seats) > rs.MaxSeats {
		return nil, errf("%d seats: game %s has %d", len(in.Seats), rs.Code, rs.MaxSeats)
	}
	bets := make([]round.Bet, len(in.Seats))
	for i, s := range in.Seats {
		if s.Bet <= 0 || s.Bet%2 != 0 {
			return nil, errf("seat %d: bet %d must be positive and even", i+1, s.Bet)
		}
		b := round.Bet{Seat: i + 1, Main: s.Bet}
		names := make([]string, 0, len(s.Side))
		for name := range s.Side {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			stake := s.Side[name]
			if stake <= 0 {
				return nil, errf("seat %d: side bet %s stake %d must be positive", i+1, name, stake)
			}
			if _, ok := rs.Side(sidebets.Kind(name)); !ok {
				return nil, errf("seat %d: side bet %q is not offered in %s", i+1, name, rs.Code)
			}
			b.Side = append(b.Side, round.SideStake{Kind: sidebets.Kind(name), Stake: stake})
		}
		bets[i] = b
	}

	r := round.New(rs)
	evs, err := r.Start("scenario", bets, nil)
	if err != nil {
		return nil, errf("%v", err)
	}
	next := make([]int, len(in.Seats)) // next decision of each seat
	offered := false
	pos := 0
	for r.Phase() != round.PhaseSettled {
		evs = evs[:0]
		switch {
		case r.Phase() == round.PhaseInsurance:
			offered = true
			for i, s := range in.Seats {
				if evs, err = r.Apply(round.Input{Type: round.InInsurance, Seat: i + 1, Take: s.Insurance}, evs); err != nil {
					return nil, errf("seat %d insurance: %v", i+1, err)
				}
			}
		case r.Awaiting() > 0:
			seat := r.FirstAwaiting()
			i := seat - 1
			if next[i] >= len(in.Seats[i].Decisions) {
				return nil, errf("seat %d ran out of decisions", seat)
			}
			a, err := round.ParseAction(in.Seats[i].Decisions[next[i]])
			if err != nil {
				return nil, errf("seat %d decision %d: %v", seat, next[i]+1, err)
			}
			next[i]++
			if _, err = r.Apply(round.Input{Type: round.InDecision, Seat: seat, Action: a}, evs); err != nil {
				return nil, errf("seat %d decision %d (%s): %v", seat, next[i], a, err)
			}
		default:
			if pos >= len(shoe) {
				return nil, errf("ran out of cards after %d", len(shoe))
			}
			if _, err = r.Apply(round.Input{Type: round.InCard, Card: shoe[pos]}, evs); err != nil {
				return nil, errf("card %d (%s): %v", pos+1, shoe[pos], err)
			}
			pos++
			if r.Phase() != round.PhaseDealing && r.Phase() != round.PhaseInsurance {
				for i, s := range in.Seats {
					if s.Insurance && !offered {
						return nil, errf("seat %d: insurance without an Ace up", i+1)
					}
				}
			}
		}
	}
	for i, s := range in.Seats {
		if s.Insurance && !offered {
			return nil, errf("seat %d: insurance without an Ace up", i+1)
		}
		if left := len(s.Decisions) - next[i]; left > 0 {
			return nil, errf("seat %d: %d decision(s) left over", i+1, left)
		}
	}
	return output(rs.Code, r.Settlement(), r.CardsUsed()), nil
}

func output(code string, s *round.Settlement, used int) *Output {
	out := &Output{
		Variant: code,
		Dealer: Dealer{
			Cards: strs(s.Dealer.Cards), Total: s.Dealer.Total, Blackjack: s.Dealer.Blackjack,
			Bust: s.Dealer.Bust, PeekedBlackjack: s.Dealer.Peeked,
		},
		CardsUsed: used,
		Rounding:  s.Rounding,
	}
	for _, st := range s.Seats {
		sr := SeatResult{Seat: st.Seat, MainNet: st.MainNet, TotalNet: st.Net, Side: map[string]SideResult{}}
		for _, h := range st.Hands {
			sr.Hands = append(sr.Hands, Hand{
				Cards: strs(h.Cards), Total: h.Total, Stake: h.Stake, Free: h.Free,
				Doubled: h.Doubled, Outcome: h.Outcome.String(), Net: h.Net,
			})
		}
		for _, sd := range st.Side {
			sr.Side[string(sd.Kind)] = SideResult{Result: string(sd.Result), Net: sd.Net}
		}
		if st.Insurance != nil {
			n := st.Insurance.Net
			sr.InsuranceNet = &n
		}
		out.Seats = append(out.Seats, sr)
	}
	return out
}

func strs(cs []card.Card) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}
