// Package ev computes blackjack expectations on a finite shoe and derives
// the total-dependent basic strategy of a game's rules from them.
//
// # Method
//
// A hand is valued against the shoe of Rules.Decks decks less the dealer's
// up card and every card of the player's hand. The dealer's outcome
// distribution (17..21, natural, 22, bust) comes from exact recursion over
// that composition, conditioned on no dealer natural when the rules peek
// with the up card. Play after the first decision is composition-dependent
// optimal (or follows a given table, for Return). Splits are one per hand,
// split aces take one card, and each split hand is valued with the pair
// and its own cards removed but not the other hand's draws: the usual
// approximation of basic-strategy engines. The player's draws ignore the
// dealer's unseen hole card.
//
// Results are float64 expectations per unit bet: they are maths, not money.
//
// # Rules
//
// Rules mirrors the parts of shared/docs/variants.md that change strategy:
// decks, S17/H17, peek on ace or ten, what a late dealer natural takes,
// double after split, charlie, dealer 22 push, free doubles and splits.
// Game returns the parameters of games 000 to 004.
package ev
