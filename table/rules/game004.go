package rules

import "time"

// game004 is Sisal Black Jack (seeds/004): 6 decks shuffled before every
// hand, 1-5 positions dealt from the right, no hole card (the dealer's
// second card comes after the players), S17, double on two cards, double
// after split, one split, split aces one card, a late dealer BJ takes every
// stake (variants.md ruling), a round cap of 1,000.00 EUR on everything the player stakes in a hand over
// all his positions. A
// hand left pending is played with the document's second, no-double
// no-split table.
func game004() *Set {
	return &Set{
		Code: "004", Name: "Sisal Black Jack",
		Decks: 6, ReshuffleEachRound: true, MaxSeats: 5, OnePlayer: true,
		HoleCard: false, LateBJAce: LateBJAll, LateBJTen: LateBJAll,
		BlackjackPays: Ratio{3, 2}, InsurancePays: Ratio{2, 1}, Insurance: true,
		DoubleAnyTwo: true, DoubleAfterSplit: true, MaxSplits: 1, SplitAcesOneCard: true,
		SplitDeal:   SplitBothFirst,
		BettingTime: 20 * time.Second, LastCallTime: 5 * time.Second,
		InsuranceTime: 10 * time.Second, DecisionTime: 20 * time.Second, DecisionTimeout: TimeoutAutoTable, AutoPlayTable: "004-auto",
		MinBet: 100, MaxBet: 100000, RoundCap: 100000,
		SideBets: []SideBet{
			{Kind: "perfect_pairs", Paytable: pairsSisal(), Min: 50, Max: 50000},
		},
	}
}
