// Package sidebets evaluates the side bets of the five games and computes
// their exact returns.
//
// The package is pure: it does no I/O and imports only table/card and the
// standard library, so the rules engine, the scenario runner and cmd/bjsim
// share it.
//
// # Evaluation
//
// A side bet is settled on the seat's initial two cards (and, depending on
// the bet, the dealer's up card or the dealer's whole hand), regardless of
// what the seat does afterwards. The classifiers [Pair], [ThreeCard], [Hot3]
// and [BustIt] turn cards into a [Result]; [Classify] dispatches on a [Kind]
// and validates its input for callers that hold bets by name. [Settle] turns a
// result into a net amount in cents with a [Paytable], which pays "to one":
// the net win is stake x pays and the stake itself is returned on top.
//
// # Readings of the documents
//
// The house-rule documents leave some definitions open. The readings below
// are the ones that reproduce every return the documents state, to 0.01
// percentage points (see docs/game-maths.md for the figures):
//   - 21+3 and Top 3: A-2-3 and Q-K-A are straights, K-A-2 is not; "three of a
//     kind" is three cards of one rank, "suited trips" three cards of one rank
//     and one suit; a straight flush is a straight in one suit.
//   - Hot 3: Aces count 1 or 11, whichever gives the best total not over 21.
//   - Bust It: a dealer 22 is a bust (the main game's "22 pushes" rule does
//     not apply to this bet); the bet pushes when the seat's own first two
//     cards are a blackjack.
//   - Pairs need the same rank (K-Q is not a pair), colour decides between
//     coloured and mixed.
//
// # Exact returns
//
// [Return] computes the return to player of a side bet as an exact rational
// number by enumerating the cards drawn without replacement from a fresh shoe
// of N decks: every ordered pair or triple of card classes for the two- and
// three-card bets, and every sequence the dealer can draw for Bust It. No
// simulation is involved, so the figures are exact and reproducible. Why the
// enumeration may ignore the cards other players draw in between is explained
// on [Return].
package sidebets
