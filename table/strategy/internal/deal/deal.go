// Package deal holds what the strategy generator's calculator
// (table/strategy/internal/ev) and the exact return analysis
// (table/strategy/exact) both count with: the dealer's outcomes and their
// distribution, a shoe composition by card value, and a packed multiset of
// card values.
package deal

// Dealer outcomes: final totals 17..21, a natural, a total of exactly 22
// (a push in 002) and any other bust.
const (
	Out17 = iota
	Out18
	Out19
	Out20
	Out21
	OutBJ
	Out22
	OutBust
	NumOut
)

// Dist is the probability of each dealer outcome.
type Dist [NumOut]float64

// Counts is a composition by card value: Counts[1] aces .. Counts[10] tens.
type Counts [11]int

// Removed packs a multiset of card values (5 bits per value, at most 31 of
// each: no hand holds more) into a map key.
type Removed uint64

// Add returns the multiset with one more card of value v (1..10).
func (r Removed) Add(v int) Removed { return r + 1<<(5*(v-1)) }

// Count is how many cards of value v the multiset holds.
func (r Removed) Count(v int) int { return int(r>>(5*(v-1))) & 31 }
