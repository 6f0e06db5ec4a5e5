package sidebets

import (
	"fmt"
	"slices"
)

// Result is the outcome of one side bet, named as in the scenario format's
// side[name].result field.
type Result string

// The results of every side bet. Each bet produces a subset of them (see
// Kind.Results); Lose is common to all.
const (
	PerfectPair  Result = "perfect_pair"  // same rank, same suit
	ColouredPair Result = "coloured_pair" // same rank, other suit of the same colour
	MixedPair    Result = "mixed_pair"    // same rank, other colour

	SuitedTrips   Result = "suited_trips"    // three cards of one rank and one suit
	StraightFlush Result = "straight_flush"  // a straight in one suit
	ThreeOfAKind  Result = "three_of_a_kind" // three cards of one rank, not all one suit
	Straight      Result = "straight"        // three consecutive ranks, A-2-3 and Q-K-A included
	Flush         Result = "flush"           // three cards of one suit, not a straight

	Sevens   Result = "777"       // Hot 3: three sevens
	Suited21 Result = "suited_21" // Hot 3: total 21 in one suit
	Total21  Result = "21"        // Hot 3: total 21
	Total20  Result = "20"        // Hot 3: total 20
	Total19  Result = "19"        // Hot 3: total 19

	Bust3 Result = "bust_3_cards" // Bust It: the dealer busts with 3 cards
	Bust4 Result = "bust_4_cards" // ... with 4 cards
	Bust5 Result = "bust_5_cards" // ... with 5 cards
	Bust6 Result = "bust_6_cards" // ... with 6 cards
	Bust7 Result = "bust_7_cards" // ... with 7 cards
	Bust8 Result = "bust_8_cards" // ... with 8 or more cards

	// PushPlayerBlackjack is Bust It's push: the seat's own first two cards
	// are a blackjack, so the stake is returned whatever the dealer does.
	PushPlayerBlackjack Result = "push_player_blackjack"

	// Lose is every outcome the bet does not pay.
	Lose Result = "lose"
)

// bustResults indexes the Bust It results by the dealer's card count, 3..8.
var bustResults = [...]Result{3: Bust3, 4: Bust4, 5: Bust5, 6: Bust6, 7: Bust7, 8: Bust8}

// bustResult is the Bust It result for a dealer who busted with n cards
// (n >= 3; 8 and over share one result).
func bustResult(n int) Result {
	if n > 8 {
		n = 8
	}
	return bustResults[n]
}

// Kind names a side bet as in the scenario format.
type Kind string

// The side bets of the five games.
const (
	KindPerfectPairs   Kind = "perfect_pairs" // player's first two cards (Player Pair in 001 and 003)
	KindDealerPair     Kind = "dealer_pair"   // dealer's up card and hole card (001, 003)
	KindTwentyOnePlus3 Kind = "21+3"          // player's two cards and the dealer's up card, poker hand
	KindHot3           Kind = "hot3"          // the same three cards, blackjack total (002)
	KindBustIt         Kind = "bust_it"       // the dealer busts, by his card count (002)
	KindTop3           Kind = "top3"          // like 21+3 but pays trips and better only (003)
)

// Kinds lists every side bet, in the order reports print them.
func Kinds() []Kind {
	return []Kind{KindPerfectPairs, KindDealerPair, KindTwentyOnePlus3, KindHot3, KindBustIt, KindTop3}
}

// Results lists the results the bet can produce, best first, Lose last. A
// paytable for the bet may only name these.
func (k Kind) Results() ([]Result, error) {
	switch k {
	case KindPerfectPairs, KindDealerPair:
		return []Result{PerfectPair, ColouredPair, MixedPair, Lose}, nil
	case KindTwentyOnePlus3, KindTop3:
		return []Result{SuitedTrips, StraightFlush, ThreeOfAKind, Straight, Flush, Lose}, nil
	case KindHot3:
		return []Result{Sevens, Suited21, Total21, Total20, Total19, Lose}, nil
	case KindBustIt:
		return []Result{Bust8, Bust7, Bust6, Bust5, Bust4, Bust3, PushPlayerBlackjack, Lose}, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownKind, string(k))
}

// ParseKind returns the Kind named s, or ErrUnknownKind.
func ParseKind(s string) (Kind, error) {
	k := Kind(s)
	if _, err := k.Results(); err != nil {
		return "", err
	}
	return k, nil
}

// Paytable maps a result to what it pays "to one": the net win is
// stake x pays. A result absent from the table loses the stake.
type Paytable map[Result]int64

// Validate checks that pt only names results bet k can produce, pays none of
// them a negative amount, and does not try to pay Lose or the push.
func (pt Paytable) Validate(k Kind) error {
	rs, err := k.Results()
	if err != nil {
		return err
	}
	for r, pays := range pt {
		if !slices.Contains(rs, r) || r == Lose || r == PushPlayerBlackjack {
			return fmt.Errorf("%w: %s cannot pay %q", ErrPaytable, k, string(r))
		}
		if pays < 0 {
			return fmt.Errorf("%w: %s pays %d on %q", ErrPaytable, k, pays, string(r))
		}
	}
	return nil
}

// The default paytables are functions that return a fresh map, so a caller
// that edits its copy (configuration) cannot change another's.

// PerfectPairsPaytable is 25/12/6 (000, 001, 002, 003; also the dealer pair).
func PerfectPairsPaytable() Paytable {
	return Paytable{PerfectPair: 25, ColouredPair: 12, MixedPair: 6}
}

// SisalPairsPaytable is 30/10/5 (004). The document's "pagata 31/11/6 volte"
// counts the returned stake: read as paying 31/11/6 to one the bet would
// return 101.6%, read as for one it returns the stated 94.21%.
func SisalPairsPaytable() Paytable {
	return Paytable{PerfectPair: 30, ColouredPair: 10, MixedPair: 5}
}

// TwentyOnePlus3Paytable is 100/40/30/10/5 (000, 001, 002, 003).
func TwentyOnePlus3Paytable() Paytable {
	return Paytable{SuitedTrips: 100, StraightFlush: 40, ThreeOfAKind: 30, Straight: 10, Flush: 5}
}

// Hot3Paytable is 100/20/4/2/1 for 777 / suited 21 / 21 / 20 / 19 (002).
func Hot3Paytable() Paytable {
	return Paytable{Sevens: 100, Suited21: 20, Total21: 4, Total20: 2, Total19: 1}
}

// BustItPaytable is 1/2/9/50/100/250 for a dealer bust with 3/4/5/6/7/8+
// cards (002).
func BustItPaytable() Paytable {
	return Paytable{Bust3: 1, Bust4: 2, Bust5: 9, Bust6: 50, Bust7: 100, Bust8: 250}
}

// Top3Paytable is 270/180/90 for suited trips / straight flush / trips (003).
// Document 003 prints no paytable, so the engine takes it from configuration;
// this default is the one that returns exactly the stated 91.00%.
func Top3Paytable() Paytable {
	return Paytable{SuitedTrips: 270, StraightFlush: 180, ThreeOfAKind: 90}
}

// DefaultPaytable returns a fresh copy of the usual paytable of bet k (the
// 25/12/6 pairs table for both pair bets; the Sisal table is separate).
func DefaultPaytable(k Kind) (Paytable, error) {
	switch k {
	case KindPerfectPairs, KindDealerPair:
		return PerfectPairsPaytable(), nil
	case KindTwentyOnePlus3:
		return TwentyOnePlus3Paytable(), nil
	case KindHot3:
		return Hot3Paytable(), nil
	case KindBustIt:
		return BustItPaytable(), nil
	case KindTop3:
		return Top3Paytable(), nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownKind, string(k))
}
