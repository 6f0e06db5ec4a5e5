package rules

import "time"

// game002 is Infinite Free Bet Blackjack (seeds/002): 8 decks, S17, any
// number of players on common cards. Peek as in 000. Free double on hard
// 9/10/11, paid double on any other two cards, free split of non-ten pairs,
// no double after split, one split, split aces one card, six-card Charlie
// (beats a late dealer BJ), a dealer 22 pushes, the dealer always completes
// his hand (Bust It), timeout hits to 11.
func game002() *Set {
	return &Set{
		Code: "002", Name: "Infinite Free Bet Blackjack",
		Decks: 8, Penetration: 8 * 52 * 3 / 4, MaxSeats: 7, CommonDraw: true,
		HoleCard: true, PeekOnAce: true, LateBJAce: LateBJAll, LateBJTen: LateBJAll,
		DealerAlwaysPlays: true,
		BlackjackPays:     Ratio{3, 2}, InsurancePays: Ratio{2, 1}, Insurance: true,
		DoubleAnyTwo: true, FreeDoubleHard: []int{9, 10, 11},
		MaxSplits: 1, SplitAcesOneCard: true, SplitDeal: SplitBothFirst, FreeSplit: true,
		Charlie: 6, CharlieBeatsDealerBJ: true, Dealer22Push: true,
		BettingTime: 15 * time.Second, LastCallTime: 5 * time.Second,
		InsuranceTime: 8 * time.Second, DecisionTime: 10 * time.Second, DecisionTimeout: TimeoutHitTo11,
		MinBet: 100, MaxBet: 500000,
		SideBets: []SideBet{
			{Kind: "perfect_pairs", Paytable: pairs25(), Min: 100, Max: 50000},
			{Kind: "21+3", Paytable: twentyOnePlus3(), Min: 100, Max: 50000},
			{Kind: "hot3", Paytable: hot3(), Min: 100, Max: 50000},
			{Kind: "bust_it", Paytable: bustIt(), Min: 100, Max: 50000},
		},
	}
}
