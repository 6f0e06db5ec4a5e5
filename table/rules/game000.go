package rules

import "time"

// game000 is Live Blackjack (seeds/000): 8 decks, 7 seats with Bet Behind,
// S17, hole card, peek under an Ace only; a dealer BJ turned at the end
// under a ten takes every wager (variants.md ruling); double on any two, no
// double after split, one split of equal values, split aces one card.
func game000() *Set {
	return &Set{
		Code: "000", Name: "Live Blackjack",
		Decks: 8, Penetration: 8 * 52 * 3 / 4, MaxSeats: 7, BetBehind: true,
		HoleCard: true, PeekOnAce: true, LateBJAce: LateBJAll, LateBJTen: LateBJAll,
		BlackjackPays: Ratio{3, 2}, InsurancePays: Ratio{2, 1}, Insurance: true,
		DoubleAnyTwo: true, MaxSplits: 1, SplitAcesOneCard: true, SplitDeal: SplitBothFirst,
		BettingTime: 15 * time.Second, LastCallTime: 5 * time.Second,
		InsuranceTime: 8 * time.Second, DecisionTime: 10 * time.Second, DecisionTimeout: TimeoutStand,
		MinBet: 100, MaxBet: 500000,
		SideBets: []SideBet{
			{Kind: "perfect_pairs", Paytable: pairs25(), Min: 100, Max: 50000},
			{Kind: "21+3", Paytable: twentyOnePlus3(), Min: 100, Max: 50000},
		},
	}
}
