package sidebets_test

import (
	"fmt"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/sidebets"
)

// A seat holding 9d 2d against a dealer Td has a suited 21 for Hot 3, which
// pays 20 to one.
func ExampleSettle() {
	h := sidebets.Hand{
		Player: [2]card.Card{card.MustParse("9d"), card.MustParse("2d")},
		Dealer: []card.Card{card.MustParse("Td")},
	}
	r, err := sidebets.Classify(sidebets.KindHot3, h)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", sidebets.Settle(500, r, sidebets.Hot3Paytable()))
	// Output: {Result:suited_21 Net:10000}
}

// The exact return of Perfect Pairs on eight decks is 398/415.
func ExampleReturn() {
	a, err := sidebets.Return(sidebets.KindPerfectPairs, sidebets.PerfectPairsPaytable(), 8)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s = %.3f%%\n", a.Return.RatString(), a.Percent())
	// Output: 398/415 = 95.904%
}

// Insurance on six decks, conditioned only on the dealer's Ace (the figure
// document 004 states), and for a seat that holds two tens.
func ExampleInsuranceReturn() {
	all, err := sidebets.InsuranceReturn(6, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	tens, err := sidebets.InsuranceReturn(6, 2, card.MustParse("Kh"), card.MustParse("Ts"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.3f%% %.3f%%\n", all.Percent(), tens.Percent())
	// Output: 92.605% 91.262%
}
