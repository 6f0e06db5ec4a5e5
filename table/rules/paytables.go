package rules

import "github.com/livetable/livetable/table/sidebets"

// The paytables of the documents, "to one", come from table/sidebets,
// where the exact-return maths checks them against the stated figures:
// one definition for the engine and for `bjsim sidebets`. Each function
// returns a fresh map, so a game may adjust its copy.

// pairs25 is Perfect Pairs / Player Pair / Dealer Pair of 000-003 (25/12/6).
func pairs25() sidebets.Paytable { return sidebets.PerfectPairsPaytable() }

// pairsSisal is 004's pair bet: "pagata 31/11/6 volte" read as FOR one
// (30/10/5 to one), which reproduces the stated 94.21%.
func pairsSisal() sidebets.Paytable { return sidebets.SisalPairsPaytable() }

func twentyOnePlus3() sidebets.Paytable { return sidebets.TwentyOnePlus3Paytable() }

func hot3() sidebets.Paytable { return sidebets.Hot3Paytable() }

func bustIt() sidebets.Paytable { return sidebets.BustItPaytable() }

// top3 is not printed in document 003; 270/180/90 reproduces its stated
// 91.00% exactly (docs/game-maths.md). It is configuration.
func top3() sidebets.Paytable { return sidebets.Top3Paytable() }
