package rules

import "time"

// game001 is Premium Blackjack (seeds/001): 6 decks reshuffled every round,
// one player with up to 5 hands, S17. The dealer's second card is dealt face
// down but never peeked at (line 63: "Il croupier non verifica subito la
// presenza di un Blackjack"); a late BJ under an Ace takes the whole doubled
// bet, under a ten the double is returned (split hands still lose: ruling).
// Double after split, split hands played one after the other, ten-card Charlie.
func game001() *Set {
	return &Set{
		Code: "001", Name: "Premium Blackjack",
		Decks: 6, ReshuffleEachRound: true, MaxSeats: 5, OnePlayer: true,
		HoleCard: true, LateBJAce: LateBJAll, LateBJTen: LateBJDoubleBack,
		BlackjackPays: Ratio{3, 2}, InsurancePays: Ratio{2, 1}, Insurance: true,
		DoubleAnyTwo: true, DoubleAfterSplit: true, MaxSplits: 1, SplitAcesOneCard: true,
		SplitDeal: SplitSequential, Charlie: 10,
		BettingTime: 15 * time.Second, LastCallTime: 5 * time.Second,
		InsuranceTime: 8 * time.Second, DecisionTime: 15 * time.Second, DecisionTimeout: TimeoutStand,
		MinBet: 100, MaxBet: 500000,
		SideBets: []SideBet{
			{Kind: "perfect_pairs", Paytable: pairs25(), Min: 100, Max: 50000},
			{Kind: "21+3", Paytable: twentyOnePlus3(), Min: 100, Max: 50000},
			{Kind: "dealer_pair", Paytable: pairs25(), Min: 100, Max: 50000},
		},
	}
}
