package rules

import "time"

// game003 is Speed Blackjack (seeds/003): 8 decks pre-shuffled, burn one card
// on a new shoe, 7 seats, both dealer cards before decisions, peek under an
// Ace, H17 (the document's rule, although its 99.55% matches S17: see
// docs/game-maths.md), double after split, split hands played in turn, ten-
// card Charlie, a late BJ under a ten returns the double, first decisions
// simultaneous, timeout stands, one insurance answer for all of a player's
// seats.
func game003() *Set {
	return &Set{
		Code: "003", Name: "Speed Blackjack",
		Decks: 8, Penetration: 8 * 52 * 3 / 4, BurnOnNewShoe: 1, MaxSeats: 7, InsuranceAllPositions: true,
		DealerHitsSoft17: true,
		HoleCard:         true, PeekOnAce: true, LateBJAce: LateBJAll, LateBJTen: LateBJDoubleBack,
		BlackjackPays: Ratio{3, 2}, InsurancePays: Ratio{2, 1}, Insurance: true,
		DoubleAnyTwo: true, DoubleAfterSplit: true, MaxSplits: 1, SplitAcesOneCard: true,
		SplitDeal: SplitSequential, Charlie: 10, SimultaneousFirstDecision: true,
		BettingTime: 12 * time.Second, LastCallTime: 4 * time.Second,
		InsuranceTime: 6 * time.Second, DecisionTime: 8 * time.Second, DecisionTimeout: TimeoutStand,
		MinBet: 100, MaxBet: 500000,
		SideBets: []SideBet{
			{Kind: "perfect_pairs", Paytable: pairs25(), Min: 100, Max: 50000},
			{Kind: "21+3", Paytable: twentyOnePlus3(), Min: 100, Max: 50000},
			{Kind: "top3", Paytable: top3(), Min: 100, Max: 50000},
			{Kind: "dealer_pair", Paytable: pairs25(), Min: 100, Max: 50000},
		},
	}
}
