package rules

import "github.com/livetable/livetable/table/sidebets"

// The paytables of the documents, "to one". Each function returns a fresh
// map so a caller may adjust its copy.

// pairs25 is Perfect Pairs / Player Pair / Dealer Pair of 000-003.
func pairs25() sidebets.Paytable {
	return sidebets.Paytable{"perfect_pair": 25, "coloured_pair": 12, "mixed_pair": 6}
}

// pairsSisal is 004's pair bet: "pagata 31/11/6 volte" read as FOR one
// (30/10/5 to one), which reproduces the stated 94.21%.
func pairsSisal() sidebets.Paytable {
	return sidebets.Paytable{"perfect_pair": 30, "coloured_pair": 10, "mixed_pair": 5}
}

func twentyOnePlus3() sidebets.Paytable {
	return sidebets.Paytable{
		"suited_trips": 100, "straight_flush": 40, "three_of_a_kind": 30,
		"straight": 10, "flush": 5,
	}
}

func hot3() sidebets.Paytable {
	return sidebets.Paytable{"777": 100, "suited_21": 20, "21": 4, "20": 2, "19": 1}
}

func bustIt() sidebets.Paytable {
	return sidebets.Paytable{
		"bust_3_cards": 1, "bust_4_cards": 2, "bust_5_cards": 9,
		"bust_6_cards": 50, "bust_7_cards": 100, "bust_8_cards": 250,
	}
}

// top3 is not printed in document 003; 270/180/90 reproduces its stated
// 91.00% exactly (docs/game-maths.md). It is configuration.
func top3() sidebets.Paytable {
	return sidebets.Paytable{"suited_trips": 270, "straight_flush": 180, "three_of_a_kind": 90}
}
